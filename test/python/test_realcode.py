"""training/realcode.py: real functions with the inputs of their doctests and tests, standalone, never a benchmark's,
split by file, the committed held-out lines kept."""
import ast
import hashlib
import json
import subprocess
import sys
import tempfile
import unittest
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "training" / "realcode.py"
FIXTURE = REPO / "test" / "fixtures" / "realcode"
TESTED = REPO / "test" / "python" / "fixtures" / "realcode_tests"  # a repository whose tests call its functions
HELDOUT = REPO / "training" / "heldout" / "realcode.jsonl"
HELDOUT_SCRIPTS = REPO / "training" / "heldout" / "realcode-scripts.jsonl"
TRAIN = REPO / "training" / "data" / "realcode.jsonl"
PROGRAMS = REPO / "training" / "programs.py"
CRUXEVAL = REPO.parent / "shared" / "data" / "cruxeval.jsonl"
sys.path.insert(0, str(REPO))
from training import dedupe, realcode  # noqa: E402
from training.runner import Runner  # noqa: E402


def build(*extra, src=FIXTURE, held_text=None):
    """Runs the builder on src (a held-out file with held_text in it first, if given); returns (train rows,
    held-out rows, summary, raw bytes of both files)."""
    with tempfile.TemporaryDirectory() as tmp:
        train, held = Path(tmp) / "train.jsonl", Path(tmp) / "held.jsonl"
        if held_text is not None:
            held.write_text(held_text, encoding="utf-8")
        p = subprocess.run([sys.executable, str(SCRIPT), "--src", str(src), "--out-train", str(train), "--out-heldout", str(held),
                            "--heldout-share", "0.5", "--per-file", "2", *extra], capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            raise AssertionError(f"realcode.py failed ({p.returncode}): {p.stderr}")
        raw = train.read_bytes() + b"--\n" + held.read_bytes()
        rows = lambda f: [json.loads(line) for line in f.read_text(encoding="utf-8").splitlines()]  # noqa: E731
        return rows(train), rows(held), json.loads(p.stderr), raw


# Runs each line's code in a fresh process and namespace, as `ndbg eval` does, and prints repr(entry(input)).
STANDALONE = r'''
import json, sys
r = json.loads(sys.stdin.read())
ns = {"__name__": "__program__"}
exec(compile(r["code"], "<program>", "exec"), ns)
print(repr(eval(r["entry"] + "(" + r["input"] + ")", ns)))
'''


def rerun_each(test: unittest.TestCase, rows: list[dict]) -> None:
    """Each line runs standalone, by the generator's worker, to its output (or the exception it raises) in at least 5
    traced events."""
    runner = Runner(sys.executable, 5.0, 300, 120)
    try:
        for r in rows:
            test.assertEqual(("output" in r) + ("raises" in r), 1, r["id"])
            res = runner.run(r["code"], r["input"], r["entry"], raises="raises" in r)
            test.assertTrue(res["ok"], (r["id"], res))
            test.assertEqual(res.get("output"), r.get("output"), r["id"])
            test.assertEqual(res.get("raised"), r.get("raises"), r["id"])
            test.assertGreaterEqual(res["events"], 5, r["id"])
    finally:
        runner.close()


class Fixture(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.train, cls.held, cls.summary, cls.raw = build("--exclude", str(FIXTURE / "excluded.jsonl"))
        cls.rows = cls.train + cls.held

    def test_captures_doctest_calls(self):
        got = {(r["entry"], r["input"]): r["output"] for r in self.rows}
        self.assertEqual(got[("count_vowels", "'hello world'")], "3")
        self.assertEqual(got[("digit_sum", "909")], "18")
        # a helper is captured with the arguments its caller really gave it
        self.assertEqual(got[("_words", "'a bb ccc dd'")], "['a', 'bb', 'ccc', 'dd']")
        self.assertGreater(self.summary["calls_captured"], 0)

    def test_code_keeps_the_layout_and_what_the_function_needs(self):
        code = next(r["code"] for r in self.rows if r["entry"] == "longest_word")
        self.assertIn("from typing import List\n", code)     # the import its helper's annotation needs
        self.assertIn("def _words(text: str) -> List[str]:", code)
        self.assertIn('    """The longest word, the first of equals.\n', code)  # docstring as written
        self.assertNotIn("count_vowels", code)              # nothing it does not need
        self.assertNotIn("__main__", code)
        vowels = next(r["code"] for r in self.rows if r["entry"] == "count_vowels")
        self.assertTrue(vowels.startswith('VOWELS = "aeiou"\n\n\ndef count_vowels'))
        self.assertIn("    # one pass over the lower-cased text\n", vowels)
        self.assertNotIn("Small text helpers", vowels)      # the module docstring is not the function's

    def test_lines_rerun_standalone_to_their_output(self):
        for r in self.rows:
            p = subprocess.run([sys.executable, "-c", STANDALONE], input=json.dumps(r), capture_output=True, text=True,
                               timeout=30, env={"PYTHONHASHSEED": "0"})
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stdout.strip(), r["output"], r["id"])
            ast.literal_eval(r["input"])
            self.assertEqual(set(r), {"code", "input", "entry", "output", "id", "source"})

    def test_refuses_the_excluded_function(self):
        self.assertNotIn("mirror", {r["entry"] for r in self.rows})
        self.assertEqual(self.summary["excluded_benchmark_lines"], 1)
        self.assertEqual(self.summary["excluded_corpora"], [str(FIXTURE / "excluded.jsonl")])
        _, _, summary, _ = build("--no-exclude")
        self.assertEqual(summary["excluded_benchmark_lines"], 0)
        self.assertEqual(summary["excluded_corpora"], "none (--no-exclude)")

    def test_never_runs_a_module_with_effects(self):
        self.assertNotIn("size_of", {r["entry"] for r in self.rows})
        self.assertEqual(self.summary["refused"]["file:imports"], 1)

    def test_splits_by_file(self):
        self.assertEqual(len(self.held), 2)
        held_files = {r["source"] for r in self.held}
        self.assertEqual(len(held_files), 1)
        self.assertFalse(held_files & {r["source"] for r in self.train})
        self.assertTrue(self.train)

    def test_ids_unique(self):
        ids = [r["id"] for r in self.rows]
        self.assertEqual(len(ids), len(set(ids)))

    def test_deterministic(self):
        self.assertEqual(build("--exclude", str(FIXTURE / "excluded.jsonl"))[3], self.raw)


class TestDriven(unittest.TestCase):
    """A repository's own tests (unittest and plain `assert` functions, no pytest) drive calls into its source files."""

    @classmethod
    def setUpClass(cls):
        cls.train, cls.held, cls.summary, cls.raw = build("--no-exclude", "--per-function", "5", src=TESTED)
        cls.rows = cls.train + cls.held
        cls.got = {(r["entry"], r["input"]): r.get("output") for r in cls.rows}

    def test_captures_the_calls_the_tests_make(self):
        self.assertEqual(self.got[("title_words", "'hello big world', ' '")], "'Hello Big World'")  # assertEqual style
        self.assertEqual(self.got[("title_words", "'snake_case-name', '-'")], "'Snake-Case-Name'")  # a keyword argument
        self.assertEqual(self.got[("letter_counts", "'banana split'")],  # a plain `assert f(...) == ...` function
                         "{'b': 1, 'a': 3, 'n': 2, 's': 1, 'p': 1, 'l': 1, 'i': 1, 't': 1}")
        # (every parameter is written out, a default too); a failing test's calls count, with the function's own result; so do those a test helper makes
        self.assertEqual(self.got[("title_words", "'one two three', ' '")], "'One Two Three'")
        self.assertEqual(self.got[("title_words", "'a_tale_of_two', ' '")], "'A Tale Of Two'")
        self.assertEqual(self.got[("_clean", "'snake_case-name'")], "'snake case name'")  # a helper, with its real arguments
        self.assertEqual(self.summary["kept_from_tests"], len(self.rows))
        self.assertEqual(self.summary["calls_captured"], 0)  # no doctests here
        self.assertGreater(self.summary["test_calls_captured"], 0)

    def test_the_line_is_the_function_with_what_it_needs(self):
        code = next(r["code"] for r in self.rows if r["entry"] == "title_words")
        text = (TESTED / "textkit" / "words.py").read_text()
        self.assertEqual(code, text[text.index("SEPARATORS"):text.index("\n\n\ndef letter_counts")] + "\n")
        self.assertEqual({r["source"] for r in self.rows}, {"realcode_tests/textkit/words.py", "realcode_tests/textkit/slugs.py"})

    def test_follows_the_repositorys_own_imports(self):
        # `from ._chars import *` and `from .words import _clean`: what the function reads, from those modules, first
        code = next(r["code"] for r in self.rows if r["entry"] == "slugify")
        kit = TESTED / "textkit"
        words, slugs = (kit / "words.py").read_text(), (kit / "slugs.py").read_text()
        self.assertEqual(code, 'JOINERS = "-"\n\n\n' + words[words.index("SEPARATORS"):words.index("\n\n\ndef title_words")]
                         + "\n\n\n" + slugs[slugs.index("def slugify"):slugs.index("\n\n\ndef headline")] + "\n")
        self.assertEqual(self.got[("slugify", "'Hello_big World'")], "'hello-big-world'")
        # an import under another name is not followed: the line would need the name it was given
        self.assertNotIn("headline", {r["entry"] for r in self.rows})
        self.assertGreaterEqual(self.summary["refused"]["renamed-import"], 1)

    def test_a_call_that_raised_is_a_line_that_raises(self):
        # assertRaises: the call ended in its exception in the module, and does standalone
        line = next(r for r in self.rows if (r["entry"], r["input"]) == ("nth_word", "'to_be', 5"))
        self.assertEqual(line["raises"], "IndexError('no word 5 in 2 words')")
        self.assertNotIn("output", line)
        self.assertEqual(self.got[("nth_word", "'to be or not', 1")], "'be'")
        # an exception the function catches itself is no exception of the call
        self.assertEqual(self.got[("word_number", "'twelve'")], "None")
        self.assertNotIn("raises", next(r for r in self.rows if r["entry"] == "word_number"))

    def test_test_code_never_enters_a_line(self):
        for r in self.rows:
            for test_text in ("assert", "unittest", "TitleWords", "expect_title", "def test", "tmp_path", "pytest"):
                self.assertNotIn(test_text, r["code"], r["id"])
        self.assertNotIn("never_tested", {r["entry"] for r in self.rows})  # no test calls it

    def test_runs_without_pytest(self):
        # a test file that imports pytest is not run; a test function that wants a fixture is not called
        self.assertEqual((self.summary["test_files"], self.summary["test_files_run"]), (3, 2))
        self.assertEqual(self.summary["refused"]["test-file:imports"], 1)
        inputs = {r["input"] for r in self.rows}
        self.assertNotIn("'only under pytest'", inputs)
        self.assertNotIn("'never called by the driver'", inputs)

    def test_lines_rerun_standalone_to_their_output(self):
        rerun_each(self, self.rows)

    def test_deterministic(self):
        self.assertEqual(build("--no-exclude", "--per-function", "5", src=TESTED)[3], self.raw)


class KeepsTheHeldout(unittest.TestCase):
    """--keep-heldout: the held-out file's lines stay as they are, first; their files never train; new lines follow."""

    KEPT = ('{"code": "def f(x):\\n    return x\\n",   "input": "1", "entry": "f", "output": "1", '
            '"id": "kept_0", "source": "realcode/textutil.py"}\n')  # spaced unlike the builder writes: kept as is

    def test_keeps_the_lines_and_their_files_out_of_training(self):
        train, held, _, raw = build("--no-exclude", "--keep-heldout", held_text=self.KEPT)
        held_raw = raw.rsplit(b"--\n", 1)[1]
        self.assertTrue(held_raw.startswith(self.KEPT.encode()))
        self.assertEqual(held[0]["id"], "kept_0")
        self.assertNotIn("realcode/textutil.py", {r["source"] for r in train})
        self.assertNotIn("realcode/textutil.py", {r["source"] for r in held[1:]})
        # again, on its own output: nothing changes
        _, _, _, again = build("--no-exclude", "--keep-heldout", held_text=held_raw.decode())
        self.assertEqual(again, raw)

    def test_a_kept_file_gives_its_calls_that_raise(self):
        kept = ('{"code": "def title_words(text):\\n    return text\\n", "input": "\'x\'", "entry": "title_words", "output": "\'x\'", '
                '"id": "kept_words", "source": "realcode_tests/textkit/words.py"}\n')
        train, held, summary, raw = build("--no-exclude", "--keep-heldout", "--per-function", "5", src=TESTED, held_text=kept)
        self.assertEqual(held[0]["id"], "kept_words")
        added = [r for r in held[1:] if r["source"] == "realcode_tests/textkit/words.py"]
        self.assertEqual([(r["entry"], r["input"], r["raises"]) for r in added], [("nth_word", "'to_be', 5", "IndexError('no word 5 in 2 words')")])
        self.assertEqual(summary["heldout_added_raising"], 1)
        self.assertNotIn("realcode_tests/textkit/words.py", {r["source"] for r in train})
        # again, on its own output: nothing changes
        self.assertEqual(build("--no-exclude", "--keep-heldout", "--per-function", "5", src=TESTED, held_text=raw.rsplit(b"--\n", 1)[1].decode())[3], raw)

    def test_refuses_a_missing_file(self):
        with self.assertRaisesRegex(AssertionError, "does not exist"):
            build("--no-exclude", "--keep-heldout")


# A repository of one file: dataclasses whose reprs and fields need their module (a ClassVar under
# `from __future__ import annotations` is only a string, which dataclasses resolves in the module sys.modules
# names), and a function whose helpers are defined inside it and whose import is made there.
DATACLASSES = '''from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar


@dataclass(order=True)
class Job:
    priority: int
    name: str = ""
    tags: list = field(default_factory=list)
    limit: ClassVar[int] = 3

    def label(self) -> str:
        return f"{self.name}:{self.priority}"


def busiest(pairs: list) -> str:
    """The label of the job of highest priority among at most Job.limit.

    >>> busiest([(2, "b"), (5, "e"), (1, "a")])
    'e:5'
    >>> busiest([(1, "x")])
    'x:1'
    """
    jobs = sorted(Job(p, n) for p, n in pairs[:Job.limit])
    return jobs[-1].label()


def longest_run(values: list) -> int:
    """The length of the longest run of equal neighbours.

    >>> longest_run([1, 1, 2, 2, 2, 3])
    3
    """
    from operator import eq

    def runs(xs: list) -> list:
        out = [1]
        for a, b in zip(xs, xs[1:]):
            out.append(out[-1] + 1 if eq(a, b) else 1)
        return out

    return max(runs(values))


def pretty(values: list) -> str:
    """
    >>> pretty([1, 2, 3, 4, 5, 6])
    '[1, 2, 3, 4, 5, 6]'
    """
    from pprint import pformat  # not an import a line may make

    def inner(v):
        return pformat(v)

    return inner(values)
'''


class DataclassesAndNestedHelpers(unittest.TestCase):
    """A function that builds dataclasses is a line (the runner runs it in a module sys.modules knows), and so is one
    whose helpers are defined inside it; an import inside a function is held to the imports a line may make."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        (Path(cls.tmp.name) / "jobs.py").write_text(DATACLASSES, encoding="utf-8")
        cls.train, cls.held, cls.summary, _ = build("--no-exclude", "--heldout-share", "0", src=Path(cls.tmp.name))
        cls.got = {(r["entry"], r["input"]): r["output"] for r in cls.train}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_a_dataclass_function_is_kept(self):
        self.assertEqual(self.got[("busiest", "[(2, 'b'), (5, 'e'), (1, 'a')]")], "'e:5'")
        code = next(r["code"] for r in self.train if r["entry"] == "busiest")
        self.assertIn("@dataclass(order=True)\nclass Job:", code)
        self.assertTrue(code.startswith("from __future__ import annotations\n"))
        rerun_each(self, [r for r in self.train if r["entry"] == "busiest"])

    def test_the_runner_resolves_the_dataclass_in_its_module(self):
        # unresolved, the ClassVar would be a field: Job(1) would show limit=3 and sort on it
        code = next(r["code"] for r in self.train if r["entry"] == "busiest")
        runner = Runner(sys.executable, 5.0, 300, 120)
        try:
            res = runner.run(code + "\n\ndef show(p):\n    return repr(Job(p))\n", "1", "show")
        finally:
            runner.close()
        self.assertEqual(res.get("output"), '"Job(priority=1, name=\'\', tags=[])"', res)

    def test_helpers_defined_inside_a_function(self):
        self.assertEqual(self.got[("longest_run", "[1, 1, 2, 2, 2, 3]")], "3")
        self.assertNotIn("pretty", {r["entry"] for r in self.train})
        self.assertGreaterEqual(self.summary["refused"]["needs-import"], 1)


class FrozenHeldout(unittest.TestCase):
    """--frozen-heldout: the held-out file is not touched (its files stay out of training); everything else trains."""

    def test_adds_nothing_to_the_heldout_file(self):
        kept = ('{"code": "def title_words(text):\\n    return text\\n", "input": "\'x\'", "entry": "title_words", "output": "\'x\'", '
                '"id": "kept_words", "source": "realcode_tests/textkit/words.py"}\n')
        train, held, summary, raw = build("--no-exclude", "--keep-heldout", "--frozen-heldout", "--per-function", "5",
                                          src=TESTED, held_text=kept)
        self.assertEqual(raw.rsplit(b"--\n", 1)[1], kept.encode())  # byte for byte: not even its calls that raise
        self.assertEqual(summary["heldout_added_raising"] + summary["heldout_new"], 0)
        self.assertNotIn("realcode_tests/textkit/words.py", {r["source"] for r in train})
        self.assertIn("realcode_tests/textkit/slugs.py", {r["source"] for r in train})  # would be held out at 0.5

    def test_needs_keep_heldout(self):
        with self.assertRaisesRegex(AssertionError, "needs --keep-heldout"):
            build("--no-exclude", "--frozen-heldout")

    def test_a_repository_of_its_own_cap(self):
        rows = lambda *extra: build("--no-exclude", "--heldout-share", "0", *extra, src=TESTED)[0]  # noqa: E731
        per_func = lambda rs: max(Counter(r["entry"] for r in rs).values())  # noqa: E731
        self.assertGreater(per_func(rows("--per-function", "5")), 1)
        self.assertEqual(per_func(rows("--per-function", "5", "--per-function-of", "realcode_tests=1")), 1)


class Scripts(unittest.TestCase):
    """Docstring examples that build objects become scripts: the definitions they read, then module-level code."""
    SRC = REPO / "test" / "python" / "fixtures" / "realcode_scripts"

    @staticmethod
    def run_builder(*extra):
        with tempfile.TemporaryDirectory() as tmp:
            train, held, scripts = (Path(tmp) / n for n in ("train.jsonl", "held.jsonl", "scripts.jsonl"))
            p = subprocess.run([sys.executable, str(SCRIPT), "--src", str(Scripts.SRC), "--out-train", str(train),
                                "--out-heldout", str(held), "--no-exclude", "--scripts-per-file", "5", *extra],
                               capture_output=True, text=True, timeout=120, input=None)
            if p.returncode != 0:
                raise AssertionError(p.stderr)
            rows = lambda f: [json.loads(line) for line in f.read_text().splitlines()] if f.exists() else []  # noqa: E731
            return rows(train), rows(held), rows(scripts), json.loads(p.stderr), Path(tmp)

    @classmethod
    def setUpClass(cls):
        cls.train, _, _, cls.summary, _ = cls.run_builder("--heldout-share", "0")
        cls.scripts = {r["id"]: r for r in cls.train if r.get("script")}

    def test_scripts_of_classes(self):
        self.assertEqual(sorted(self.scripts), ["rs_realcode_scripts_catalog_Catalog", "rs_realcode_scripts_shelf_Clock",
                                                "rs_realcode_scripts_shelf_Shelf", "rs_realcode_scripts_shelf_Shelf.pages"])
        for r in self.scripts.values():
            self.assertEqual((r["input"], "entry" in r, "output" in r), ("", False, False), r["id"])
        shelf = self.scripts["rs_realcode_scripts_shelf_Shelf"]["code"]
        # the examples, as users write them: a shown value printed, an expected exception caught by its name
        self.assertTrue(shelf.endswith('\n\n\nshelf = Shelf(capacity=2)\nshelf.put(Book("Dune", 412))\nshelf.put(Book("Emma", 474))\n'
                                       'print(shelf.pages())\ntry:\n    shelf.put(Book("Ulysses", 730))\n'
                                       'except ShelfFull as error:\n    print(error)\n'), shelf)
        # the definitions it reads, as the file has them; not the function it does not read
        self.assertIn("class ShelfFull(Exception):", shelf)
        self.assertIn("@dataclass\nclass Book:", shelf)
        self.assertNotIn("def longest", shelf)
        # an import of the module's own names is dropped: the script defines them
        self.assertNotIn("from shelf import", self.scripts["rs_realcode_scripts_shelf_Shelf.pages"]["code"].split("return total")[-1])
        # a name imported from another module of the repository is followed there
        self.assertIn("def longest(titles):", self.scripts["rs_realcode_scripts_catalog_Catalog"]["code"])

    def test_refused_as_no_script(self):
        self.assertEqual(self.summary["refused"]["script:calls-only"], 1)  # longest's examples are a function line
        self.assertEqual(self.summary["refused"]["script:import"], 1)  # Wire's imports socket
        self.assertEqual(self.summary["scripts_with_class"], 4)
        self.assertIn("rc_realcode_scripts_shelf_longest_0", {r["id"] for r in self.train})

    def test_each_runs_whole_to_the_same_output(self):
        runner = Runner(sys.executable, 5.0, 400, 120)
        try:
            for r in self.scripts.values():
                a, b = (runner.run(r["code"], "", script=True, max_stdout=600) for _ in range(2))
                self.assertTrue(a["ok"], (r["id"], a))
                self.assertEqual(a, b)
                self.assertGreaterEqual(a["events"], 5)
            clock = runner.run(self.scripts["rs_realcode_scripts_shelf_Clock"]["code"], "", script=True)
            self.assertEqual(clock["output"], "2\n")  # its instance's repr has an address: fit in a script
            # a function line still may not show one
            self.assertEqual(runner.run("class C:\n    pass\n\ndef f():\n    c = C()\n    return 1\n", "", "f")["why"], "address")
            self.assertEqual(runner.run("x = 1\nraise ValueError(x)\n", "", script=True)["why"], "error")
        finally:
            runner.close()

    def test_a_repository_of_its_own_cap(self):
        train, *_ = self.run_builder("--heldout-share", "0", "--scripts-per-file-of", "realcode_scripts=1")
        self.assertEqual(sorted(r["id"] for r in train if r.get("script")),
                         ["rs_realcode_scripts_catalog_Catalog", "rs_realcode_scripts_shelf_Shelf"])  # the first of each file

    def test_off_by_default(self):
        with tempfile.TemporaryDirectory() as tmp:
            p = subprocess.run([sys.executable, str(SCRIPT), "--src", str(self.SRC), "--out-train", f"{tmp}/t.jsonl",
                                "--out-heldout", f"{tmp}/h.jsonl", "--no-exclude", "--heldout-share", "0"],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertFalse([line for line in Path(f"{tmp}/t.jsonl").read_text().splitlines() if '"script"' in line])

    def test_scripts_of_heldout_files_are_held_out(self):
        """A held-out file's scripts go to --out-heldout-scripts; another file's script that holds a held-out
        function (catalog.py's, which imports shelf.longest) trains on nothing of it: it is refused."""
        line = next(r for r in self.train if r["id"] == "rc_realcode_scripts_shelf_longest_0")
        with tempfile.TemporaryDirectory() as tmp:
            held = Path(tmp) / "held.jsonl"
            held.write_text(json.dumps({k: line[k] for k in ("code", "input", "entry", "output", "id", "source")}) + "\n")
            out = Path(tmp) / "scripts.jsonl"
            p = subprocess.run([sys.executable, str(SCRIPT), "--src", str(self.SRC), "--out-train", f"{tmp}/t.jsonl",
                                "--out-heldout", str(held), "--keep-heldout", "--frozen-heldout", "--no-exclude",
                                "--scripts-per-file", "5", "--out-heldout-scripts", str(out)], capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            train = [json.loads(x) for x in Path(f"{tmp}/t.jsonl").read_text().splitlines()]
            self.assertEqual(train, [])
            self.assertEqual(sorted(json.loads(x)["id"] for x in out.read_text().splitlines()),
                             ["rs_realcode_scripts_shelf_Clock", "rs_realcode_scripts_shelf_Shelf", "rs_realcode_scripts_shelf_Shelf.pages"])
            self.assertEqual(json.loads(p.stderr)["refused"]["script:in-heldout-elsewhere"], 1)


class NeedsAnExcludedCorpus(unittest.TestCase):
    def run_script(self, script, *args):
        with tempfile.TemporaryDirectory() as tmp:
            return subprocess.run([sys.executable, str(script), *args, "--out", str(Path(tmp) / "o.jsonl")] if script == PROGRAMS
                                  else [sys.executable, str(script), *args, "--out-train", str(Path(tmp) / "t"),
                                        "--out-heldout", str(Path(tmp) / "h")], capture_output=True, text=True, timeout=120)

    def test_realcode_refuses_without_one(self):
        p = self.run_script(SCRIPT, "--src", str(FIXTURE))
        self.assertEqual(p.returncode, 2)
        self.assertIn("--no-exclude", p.stderr)
        p = self.run_script(SCRIPT, "--src", str(FIXTURE), "--exclude", str(FIXTURE / "missing.jsonl"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("no such file", p.stderr)

    def test_programs_refuses_a_missing_one(self):
        p = self.run_script(PROGRAMS, "--count", "3", "--exclude", str(FIXTURE / "missing.jsonl"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("--no-exclude", p.stderr)
        p = self.run_script(PROGRAMS, "--count", "3", "--no-exclude")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn('"excluded_corpora": "none (--no-exclude)"', p.stderr)


class CommittedHeldout(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rows = [json.loads(line) for line in HELDOUT.read_text(encoding="utf-8").splitlines()]

    def test_the_first_lines_never_change(self):
        # the 451 lines of the first build, which earlier measurements refer to; new lines only follow them
        first = "".join(line + "\n" for line in HELDOUT.read_text(encoding="utf-8").splitlines()[:451])
        self.assertEqual(hashlib.sha256(first.encode()).hexdigest(), "859bbdccdae1686e491d5a07443d4adc192174c6c4588b3577bf9ca96ef68f74")

    def test_shape(self):
        self.assertGreaterEqual(len(self.rows), 400)
        self.assertEqual(len({r["id"] for r in self.rows}), len(self.rows))
        for r in self.rows:
            self.assertTrue(r["code"] and r["input"] is not None and (r.get("output") or r.get("raises")) and r["source"], r["id"])
            ast.parse(r["code"])
            call = ast.parse(f"{r['entry']}({r['input']})", mode="eval").body
            self.assertTrue(all(isinstance(a, ast.expr) for a in call.args), r["id"])
            self.assertIn(f"def {r['entry']}(", r["code"])

    def test_spread_over_files(self):
        per_file = {}
        for r in self.rows:
            per_file[r["source"]] = per_file.get(r["source"], 0) + 1
        self.assertGreaterEqual(len(per_file), 100)
        self.assertLessEqual(max(per_file.values()), 8)  # up to 4 calls, and up to 4 calls that raise
        for raises in (False, True):
            lines = [r["source"] for r in self.rows if ("raises" in r) == raises]
            self.assertLessEqual(max(lines.count(f) for f in set(lines)), 4)

    def test_runs_standalone_to_its_output(self):
        rerun_each(self, self.rows)

    @unittest.skipUnless(CRUXEVAL.exists(), f"{CRUXEVAL} is not here")
    def test_no_cruxeval_function(self):
        ws, keys = dedupe.load_excluded([CRUXEVAL])
        for r in self.rows:
            texts, mine = realcode.benchmark_keys(r["code"], r["entry"])
            self.assertFalse(set(texts) & ws or set(mine) & keys, r["id"])

    @unittest.skipUnless(TRAIN.exists(), f"{TRAIN} is not built (see training/DATA.md)")
    def test_not_in_the_training_build(self):
        train = [json.loads(line) for line in TRAIN.read_text(encoding="utf-8").splitlines()]
        self.assertFalse({r["source"] for r in self.rows} & {r["source"] for r in train})
        held = {ast.dump(ast.parse(r["code"])) for r in self.rows}
        self.assertFalse(held & {ast.dump(ast.parse(r["code"])) for r in train})



class CommittedHeldoutScripts(unittest.TestCase):
    """training/heldout/realcode-scripts.jsonl: the scripts of the held-out files (training/DATA.md)."""

    @classmethod
    def setUpClass(cls):
        cls.rows = [json.loads(line) for line in HELDOUT_SCRIPTS.read_text(encoding="utf-8").splitlines()]

    def test_shape(self):
        self.assertGreaterEqual(len(self.rows), 20)
        self.assertEqual(len({r["id"] for r in self.rows}), len(self.rows))
        held_files = {json.loads(line)["source"] for line in HELDOUT.read_text(encoding="utf-8").splitlines()}
        for r in self.rows:
            self.assertEqual((r["input"], r["script"], "entry" in r), ("", True, False), r["id"])
            self.assertIn(r["source"], held_files, r["id"])  # a held-out file's, never a training file's
            ast.parse(r["code"])

    def test_runs_whole_to_the_same_output(self):
        runner = Runner(sys.executable, 5.0, 400, 120)
        try:
            for r in self.rows:
                a, b = (runner.run(r["code"], "", script=True, max_stdout=600) for _ in range(2))
                self.assertTrue(a["ok"], (r["id"], a))
                self.assertEqual(a, b, r["id"])
        finally:
            runner.close()

    @unittest.skipUnless(CRUXEVAL.exists(), f"{CRUXEVAL} is not here")
    def test_no_cruxeval_function(self):
        ws, keys = dedupe.load_excluded([CRUXEVAL])
        for r in self.rows:
            texts, mine = realcode.benchmark_keys(r["code"], "")
            self.assertFalse(set(texts) & ws or set(mine) & keys, r["id"])

    @unittest.skipUnless(TRAIN.exists(), f"{TRAIN} is not built (see training/DATA.md)")
    def test_not_in_the_training_build(self):
        train = [json.loads(line) for line in TRAIN.read_text(encoding="utf-8").splitlines()]
        self.assertFalse({r["source"] for r in self.rows} & {r["source"] for r in train})
        # no training script holds a held-out function (one imported from a held-out file)
        held = [json.loads(line) for line in HELDOUT.read_text(encoding="utf-8").splitlines()]
        held_defs = set().union(*(realcode.function_keys(r["code"], r["entry"]) for r in held))
        self.assertFalse(held_defs & set().union(*(realcode.function_keys(r["code"]) for r in train if r.get("script"))))


if __name__ == "__main__":
    unittest.main()

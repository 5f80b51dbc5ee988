"""training/programs.py: valid, terminating, deterministic, deduplicated, diverse programs; never CRUXEval's."""
import ast
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "training" / "programs.py"
sys.path.insert(0, str(REPO))
from training import constructs, dedupe  # noqa: E402
from training.runner import Runner  # noqa: E402

# The CRUXEval file, where programs.py finds it ($NDBG_CRUXEVAL, else ../shared/data/cruxeval.jsonl).
# Not in the repository: without the variable its tests are skipped where it is absent; a variable
# naming a missing file is an error.
CRUXEVAL = dedupe.CRUXEVAL
if os.environ.get("NDBG_CRUXEVAL") and not CRUXEVAL.exists():
    raise FileNotFoundError(f"NDBG_CRUXEVAL names {CRUXEVAL}, which is not there")
NO_CRUXEVAL = f"CRUXEval data not found at {CRUXEVAL} (set NDBG_CRUXEVAL to the cruxeval.jsonl file)"


def generate(*args, timeout=120):
    """Runs the generator; returns (rows, stderr). It excludes CRUXEval where the data is there;
    elsewhere, unless a test names its own corpus, it is told to run without one (these programs
    are test material, never training data)."""
    if "--exclude" not in args and "--no-exclude" not in args and not CRUXEVAL.exists():
        args = (*args, "--no-exclude")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.jsonl"
        p = subprocess.run([sys.executable, str(SCRIPT), "--out", str(out), *args], capture_output=True, text=True, timeout=timeout)
        if p.returncode != 0:
            raise AssertionError(f"programs.py failed ({p.returncode}): {p.stderr}")
        text = out.read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()], p.stderr, text


def ws(code):
    return re.sub(r"\s+", " ", code).strip()


# Runs each (code, input) in a fresh namespace under sys.settrace, counting the events of the
# program's own code, as an independent check of the generator's claims.
CHECKER = r'''
import contextlib, io, json, sys
rows = json.loads(sys.stdin.read())
out = []
for r in rows:
    ns = {"__name__": "__program__"}
    exec(compile(r["code"], "<program>", "exec"), ns)
    n = [0]
    def tr(frame, event, arg):
        if frame.f_code.co_filename != "<program>": return None
        n[0] += 1
        return tr
    with contextlib.redirect_stdout(io.StringIO()):
        sys.settrace(tr)
        try:
            res = eval(r.get("entry", "f") + "(" + r["input"] + ")", ns)
        finally:
            sys.settrace(None)
    out.append({"output": repr(res), "events": n[0]})
print(json.dumps(out))
'''


class GeneratedCorpus(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rows, cls.stderr, cls.text = generate("--count", "400", "--seed", "11", "--quiet")

    def test_count_and_shape(self):
        self.assertEqual(len(self.rows), 400)
        for r in self.rows:
            self.assertIn(sorted(r), (["code", "id", "input", "output"], ["code", "entry", "id", "input", "output"]))
            self.assertTrue(all(isinstance(r[k], str) and r[k] for k in ("code", "input", "output", "id")))
        self.assertEqual(len({r["id"] for r in self.rows}), len(self.rows))

    def test_programs_are_valid_functions(self):
        for r in self.rows:
            tree = ast.parse(r["code"])
            self.assertTrue(any(isinstance(n, ast.FunctionDef) and n.name == r.get("entry", "f") for n in tree.body), r["code"])
            ast.parse(f"f({r['input']})", mode="eval")  # positional arguments, now and then a keyword one
            self.assertLessEqual(r["code"].count("\n"), 31)

    def test_outputs_and_event_counts_hold_when_run_again(self):
        sample = self.rows[::7]
        env = dict(os.environ, PYTHONHASHSEED="0")
        p = subprocess.run([sys.executable, "-c", CHECKER], input=json.dumps(sample), capture_output=True, text=True, timeout=60, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        results = json.loads(p.stdout)
        for r, got in zip(sample, results):
            self.assertEqual(got["output"], r["output"], r["code"] + "\n" + r["input"])
            self.assertGreaterEqual(got["events"], 5, r["code"])
            self.assertLessEqual(got["events"], 300, r["code"])

    def test_deterministic_for_a_seed(self):
        _, _, again = generate("--count", "400", "--seed", "11", "--quiet")
        self.assertEqual(again, self.text)
        _, _, other = generate("--count", "50", "--seed", "12", "--quiet")
        self.assertNotEqual(other, self.text[: len(other)])

    def test_deduplicated(self):
        keys = [dedupe.code_key(r["code"]) + "\0" + dedupe.input_key(r["input"]) for r in self.rows]
        self.assertEqual(len(keys), len(set(keys)))
        # several inputs per function at most --inputs (2): the corpus is mostly distinct functions
        funcs = {dedupe.code_key(r["code"]) for r in self.rows}
        self.assertGreaterEqual(len(funcs), len(self.rows) // 2)

    def test_diverse(self):
        funcs = {r["code"]: r for r in self.rows}
        cons = Counter()
        for code in funcs:
            cons.update(constructs.constructs(code))
        n = len(funcs)
        for kind, at_least in {"for": 0.25, "if": 0.3, "while": 0.05, "try": 0.01, "listcomp": 0.04, "helper": 0.05,
                               "recursion": 0.03, "slice": 0.08, "break": 0.03, "augassign": 0.2, "dictcomp": 0.01,
                               "genexp": 0.02, "class": 0.01, "raise": 0.02, "continue": 0.01}.items():
            self.assertGreaterEqual(cons[kind] / n, at_least, f"{kind}: {cons[kind]} of {n} functions")
        methods = [k for k in cons if k.startswith(".")]
        self.assertGreaterEqual(len(methods), 30, methods)
        for m in (".split", ".join", ".append", ".get", ".pop", ".items", ".replace", ".count"):
            self.assertIn(m, cons)
        types = Counter(type(ast.literal_eval(r["output"])).__name__ for r in self.rows if not r["output"].startswith(("<", "Counter", "Stack")) and self._literal(r["output"]))
        for t in ("int", "str", "list", "bool", "dict", "tuple"):
            self.assertGreater(types[t], 0, types)

    @staticmethod
    def _literal(s):
        try:
            ast.literal_eval(s)
            return True
        except (ValueError, SyntaxError):
            return False

    @unittest.skipUnless(CRUXEVAL.exists(), NO_CRUXEVAL)
    def test_no_cruxeval_function(self):
        crux = [json.loads(line)["code"] for line in CRUXEVAL.read_text(encoding="utf-8").splitlines() if line.strip()]
        self.assertGreater(len(crux), 700)
        crux_ws = {ws(c) for c in crux}
        crux_ast = {dedupe.code_key(c) for c in crux}
        for r in self.rows:  # compared as `f`, as CRUXEval names its functions
            code = dedupe.as_f(r)
            self.assertNotIn(ws(code), crux_ws, code)
            self.assertNotIn(dedupe.code_key(code), crux_ast, code)

    def test_entry_names(self):
        """About half the functions get a name of their own (no builtin, no word of the program);
        at --entry-names 0 the same seed gives the same functions and inputs, all called f."""
        import builtins
        named = {r["code"]: r["entry"] for r in self.rows if "entry" in r}
        funcs = {r["code"] for r in self.rows}
        self.assertTrue(0.3 < len(named) / len(funcs) < 0.7, f"{len(named)} of {len(funcs)} functions named")
        self.assertGreater(len(set(named.values())), 20)
        for code, name in named.items():
            self.assertNotIn(name, dir(builtins))
            self.assertNotIn("f", {n.id for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Name)}, code)
            self.assertEqual(dedupe.rename_entry(dedupe.rename_entry(code, "f", name), name), code)
        plain, _, _ = generate("--count", "400", "--seed", "11", "--quiet", "--entry-names", "0")
        self.assertEqual(len(plain), len(self.rows))
        for p, r in zip(plain, self.rows):
            self.assertNotIn("entry", p)
            self.assertEqual((p["input"], p["output"], p["id"]), (r["input"], r["output"], r["id"]))
            self.assertEqual(p["code"], dedupe.as_f(r))


# Runs each raising line in a fresh namespace: the call must end in the exception the line names.
RAISES = r'''
import json, sys
out = []
for r in json.loads(sys.stdin.read()):
    ns = {"__name__": "__program__"}
    exec(compile(r["code"], "<program>", "exec"), ns)
    try:
        out.append("returned " + repr(eval(r.get("entry", "f") + "(" + r["input"] + ")", ns)))
    except Exception as e:
        out.append(repr(e))
print(json.dumps(out))
'''


class RaisingLines(unittest.TestCase):
    """--raising: up to that share of the lines are calls that end in an exception, written as "raises"."""

    @classmethod
    def setUpClass(cls):
        cls.rows, cls.stderr, cls.text = generate("--count", "200", "--seed", "11", "--raising", "0.2")

    def test_a_share_of_the_lines_raise(self):
        raising = [r for r in self.rows if "raises" in r]
        self.assertEqual(len(self.rows), 200)
        self.assertTrue(5 <= len(raising) <= 40, len(raising))  # the grammar's programs seldom raise: about 7% of them
        self.assertEqual(json.loads(self.stderr)["raising"], len(raising))
        for r in self.rows:
            self.assertEqual(("output" in r) + ("raises" in r), 1, r)

    def test_each_raises_what_its_line_says(self):
        raising = [r for r in self.rows if "raises" in r]
        p = subprocess.run([sys.executable, "-c", RAISES], input=json.dumps(raising), capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, PYTHONHASHSEED="0"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(json.loads(p.stdout), [r["raises"] for r in raising])
        self.assertGreaterEqual(len({r["raises"].split("(")[0] for r in raising}), 2)  # more than one kind of exception

    def test_the_rest_are_the_lines_of_a_run_without_it(self):
        # the same candidates in the same order: the returning lines are those the default run keeps first
        plain, _, _ = generate("--count", "200", "--seed", "11", "--quiet")
        returning = [(r["code"], r["input"], r["output"]) for r in self.rows if "output" in r]
        self.assertEqual(returning, [(r["code"], r["input"], r["output"]) for r in plain[: len(returning)]])

    def test_in_the_real_layout_too(self):
        rows, _, _ = generate("--count", "120", "--seed", "5", "--raising", "0.3", "--layout", "real", "--quiet")
        raising = [r for r in rows if "raises" in r]
        self.assertTrue(raising)
        p = subprocess.run([sys.executable, "-c", RAISES], input=json.dumps(raising), capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, PYTHONHASHSEED="0"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(json.loads(p.stdout), [r["raises"] for r in raising])

    def test_bad_share(self):
        p = subprocess.run([sys.executable, str(SCRIPT), "--count", "3", "--out", "-", "--raising", "1"], capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--raising", p.stderr)


class Options(unittest.TestCase):
    def test_add_dir(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = Path(tmp)
            (d / "sq.py").write_text("def f(xs):\n    out = []\n    for x in xs:\n        out.append(x * x)\n    return out\n")
            (d / "sq.inputs").write_text("# one argument text a line\n[1, 2, 3]\n\n[4]\n")
            (d / "noinputs.py").write_text("def f(x):\n    return x\n")
            (d / "broken.py").write_text("def f(x:\n")
            (d / "nof.py").write_text("def g(x):\n    return x\n")
            (d / "nof.inputs").write_text("1\n")
            rows, err, _ = generate("--count", "0", "--add-dir", str(d))
        self.assertEqual([(r["id"], r["input"], r["output"]) for r in rows], [("add_sq_0", "[1, 2, 3]", "[1, 4, 9]"), ("add_sq_1", "[4]", "[16]")])
        for name in ("noinputs.py", "broken.py", "nof.py"):
            self.assertIn(name, err)

    @unittest.skipUnless(CRUXEVAL.exists(), NO_CRUXEVAL)
    def test_added_cruxeval_function_is_refused(self):
        first = json.loads(CRUXEVAL.read_text(encoding="utf-8").splitlines()[0])
        with tempfile.TemporaryDirectory() as tmp:
            d = Path(tmp)
            (d / "leak.py").write_text("# reformatted, still the same function\n" + first["code"].replace("    ", "  ") + "\n")
            (d / "leak.inputs").write_text(first["input"] + "\n")
            rows, err, _ = generate("--count", "0", "--add-dir", str(d))
        self.assertEqual(rows, [])
        self.assertIn('"excluded": 1', err)

    def test_exclude_file(self):
        rows, _, _ = generate("--count", "30", "--seed", "5", "--quiet")
        with tempfile.TemporaryDirectory() as tmp:
            ex = Path(tmp) / "ex.jsonl"
            ex.write_text("".join(json.dumps(r) + "\n" for r in rows[:10]))
            again, _, _ = generate("--count", "30", "--seed", "5", "--quiet", "--exclude", str(ex))
        self.assertTrue(any("entry" in r for r in rows[:10]), "a named function is excluded by its body, whatever its name")
        banned = {dedupe.code_key(dedupe.as_f(r)) for r in rows[:10]}
        self.assertFalse(banned & {dedupe.code_key(dedupe.as_f(r)) for r in again})

    def test_bad_arguments(self):
        p = subprocess.run([sys.executable, str(SCRIPT), "--count", "3", "--out", "-", "--add-dir", "/nonexistent/dir"],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 2)
        self.assertIn("not a folder", p.stderr)
        p = subprocess.run([sys.executable, str(SCRIPT), "--count", "3"], capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--out", p.stderr)

    def test_runaway_candidates_are_dropped(self):
        runner = Runner(sys.executable, timeout=2.0, max_events=300, max_repr=120)
        try:
            self.assertEqual(runner.run("def f(n):\n    while True:\n        n += 1\n", "0")["why"], "events")
            self.assertEqual(runner.run("def f(n):\n    return 'x' * n\n", "10 ** 10")["why"], "memory")
            self.assertEqual(runner.run("def f(s):\n    return set(s)\n", "'abc'")["why"], "unordered")
            self.assertEqual(runner.run("def f(x):\n    return object()\n", "1")["why"], "address")
            # a helper the function defines is a local whose repr has an address (the tracer masks it): fit to show;
            # returned, it is the line's output, which must be a value
            helper = "def f(x):\n    def twice(v):\n        return 2 * v\n    y = twice(x)\n    return {}\n"
            self.assertEqual(runner.run(helper.format("y + 1"), "3").get("output"), "7")
            self.assertEqual(runner.run(helper.format("twice"), "3")["why"], "address")
            self.assertEqual(runner.run("def f(x):\n    return [x] * 100\n", "1234")["why"], "long")
            # the budget running out inside a generator expression: the exception is swallowed there, the count is not
            nested = ("def f(word):\n    if not word:\n        raise ValueError('empty input')\n    for j in range(1, len(word)):\n"
                      "        for i in range(len(word) - 1, -1, -1):\n            letter = word[i]\n"
                      "            if not (all(ch not in word for ch in word) or word.endswith(letter)):\n                j += j\n"
                      "        j = min(len(word), j)\n    return dict.fromkeys(word, 0)\n")
            self.assertEqual(runner.run(nested, "'oak jam oak'")["why"], "events")
            ok = runner.run("def f(xs):\n    return sorted(xs)\n", "[3, 1]")
            self.assertEqual((ok["ok"], ok["output"], ok["events"]), (True, "[1, 3]", 3))
        finally:
            runner.close()

    def test_code_that_looks_up_its_own_module_runs(self):
        # A dataclass with string annotations reads its module from sys.modules, as real code does; each
        # candidate gets a module of its own, so one program's names never leak into the next.
        code = ("from __future__ import annotations\nfrom dataclasses import dataclass\n\n\n@dataclass\nclass P:\n"
                "    x: int\n    y: int = 0\n\n    def norm(self):\n        return abs(self.x) + abs(self.y)\n\n\n"
                "def f(a, b):\n    p = P(a, b)\n    return p.norm()\n")
        runner = Runner(sys.executable, timeout=2.0, max_events=300, max_repr=120)
        try:
            got = runner.run(code, "1, -2")
            self.assertEqual((got["ok"], got.get("output")), (True, "3"), got)
            self.assertEqual(runner.run("def f(x):\n    return P\n", "1"), {"ok": False, "why": "error", "exc": "NameError"})
        finally:
            runner.close()


if __name__ == "__main__":
    unittest.main()

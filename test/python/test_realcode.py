"""training/realcode.py: real functions with their doctests' inputs, standalone, never a benchmark's, split by file."""
import ast
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "training" / "realcode.py"
FIXTURE = REPO / "test" / "fixtures" / "realcode"
HELDOUT = REPO / "training" / "heldout" / "realcode.jsonl"
TRAIN = REPO / "training" / "data" / "realcode.jsonl"
PROGRAMS = REPO / "training" / "programs.py"
CRUXEVAL = REPO.parent / "shared" / "data" / "cruxeval.jsonl"
sys.path.insert(0, str(REPO))
from training import dedupe, realcode  # noqa: E402
from training.runner import Runner  # noqa: E402


def build(*extra, src=FIXTURE):
    """Runs the builder on src; returns (train rows, held-out rows, summary, raw bytes of both files)."""
    with tempfile.TemporaryDirectory() as tmp:
        train, held = Path(tmp) / "train.jsonl", Path(tmp) / "held.jsonl"
        p = subprocess.run([sys.executable, str(SCRIPT), "--src", str(src), "--out-train", str(train), "--out-heldout", str(held),
                            "--heldout", "2", "--per-file", "2", *extra], capture_output=True, text=True, timeout=120)
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

    def test_shape(self):
        self.assertGreaterEqual(len(self.rows), 400)
        self.assertEqual(len({r["id"] for r in self.rows}), len(self.rows))
        for r in self.rows:
            self.assertTrue(r["code"] and r["input"] is not None and r["output"] and r["source"], r["id"])
            ast.parse(r["code"])
            call = ast.parse(f"{r['entry']}({r['input']})", mode="eval").body
            self.assertTrue(all(isinstance(a, ast.expr) for a in call.args), r["id"])
            self.assertIn(f"def {r['entry']}(", r["code"])

    def test_spread_over_files(self):
        per_file = {}
        for r in self.rows:
            per_file[r["source"]] = per_file.get(r["source"], 0) + 1
        self.assertGreaterEqual(len(per_file), 100)
        self.assertLessEqual(max(per_file.values()), 4)

    def test_runs_standalone_to_its_output(self):
        runner = Runner(sys.executable, 5.0, 300, 120)
        try:
            for r in self.rows:
                res = runner.run(r["code"], r["input"], r["entry"])
                self.assertTrue(res["ok"], (r["id"], res))
                self.assertEqual(res["output"], r["output"], r["id"])
                self.assertGreaterEqual(res["events"], 5, r["id"])
        finally:
            runner.close()

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


if __name__ == "__main__":
    unittest.main()

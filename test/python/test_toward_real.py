"""The generator toward real code: the construct table (training/constructs.py), the real style of
training/grammar.py beside the classic one it keeps byte for byte, and the real layout
(training/layout.py) that canonical_programs.py maps back to the canonical layout exactly."""
import hashlib
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from training import constructs  # noqa: E402
from training.printer import canonical  # noqa: E402
from training.runner import Runner  # noqa: E402

# Real code in the repository: the held-out set of training/realcode.py (functions people wrote).
REAL = REPO / "training" / "heldout" / "realcode.jsonl"
# `--style classic --count 300 --seed 100 --no-exclude`, written by programs.py before the real style
# existed: the classic style is the bundled model's data and must stay it, seed for seed.
CLASSIC_SHA256 = "f2950a86b0cb5230da8770a4a560c2a79fc06d6f0fef373af1b5a76c077413e1"


def run(*args, timeout=180):
    return subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, text=True, timeout=timeout)


class TowardReal(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = Path(cls.tmp.name)
        cls.files = {}
        for name, extra in (("classic", ["--style", "classic"]), ("real", []), ("real_layout", ["--layout", "real"])):
            out = d / f"{name}.jsonl"
            r = run("-m", "training.programs", "--count", "300", "--seed", "100", "--no-exclude", "--out", str(out), *extra)
            if r.returncode != 0:
                raise AssertionError(r.stderr)
            cls.files[name] = out
            if name == "real_layout":
                cls.layout_summary = json.loads(r.stderr)["layout"]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def rows(self, name):
        return [json.loads(line) for line in self.files[name].read_text().splitlines()]

    def test_classic_style_is_the_generator_the_bundled_model_was_trained_on(self):
        self.assertEqual(hashlib.sha256(self.files["classic"].read_bytes()).hexdigest(), CLASSIC_SHA256)

    def test_real_style_is_deterministic_and_nearer_to_real_code(self):
        with tempfile.TemporaryDirectory() as d:
            again = Path(d) / "again.jsonl"
            r = run("training/programs.py", "--count", "300", "--seed", "100", "--no-exclude", "--out", str(again), "--quiet")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(again.read_bytes(), self.files["real"].read_bytes())
        t = constructs.table([REAL, self.files["classic"], self.files["real"]])
        _, classic, real = t["groups"]["constructs"]["distance"]
        self.assertLess(real, classic * 0.75, f"distance from real code: classic {classic}, real {real}")
        rows = t["groups"]["constructs"]["rows"]
        for kind in ("default argument", "early return", "isinstance()", "and/or", "range()", "tuple unpacking"):
            self.assertGreater(rows[kind][2], rows[kind][1], f"{kind}: {rows[kind]}")
        for kind in ("try", "string method", "continue", "augassign"):
            self.assertLess(rows[kind][2], rows[kind][1], f"{kind}: {rows[kind]}")

    def test_real_style_programs_run_under_the_tracer_to_their_output(self):
        runner = Runner(sys.executable, 2.0, 300, 120)
        try:
            for row in self.rows("real"):
                self.assertEqual(canonical(row["code"])["canonical"], row["code"], "written in the canonical layout")
                res = runner.run(row["code"], row["input"], row.get("entry", "f"))
                self.assertTrue(res["ok"], (res, row["code"]))
                self.assertEqual(res["output"], row["output"], row["code"])
        finally:
            runner.close()

    def test_real_layout_maps_back_to_the_canonical_layout_exactly(self):
        with tempfile.TemporaryDirectory() as d:
            back = Path(d) / "back.jsonl"
            r = run("training/canonical_programs.py", str(self.files["real_layout"]), str(back))
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(back.read_bytes(), self.files["real"].read_bytes())
        self.assertGreater(self.layout_summary["real"], 10 * max(1, self.layout_summary["kept_canonical"]), self.layout_summary)
        t = constructs.table([self.files["real_layout"]])["groups"]["layout"]["rows"]
        for kind in ("docstring", "docstring with >>> examples", "comment line", "comment after code", "blank line inside a function",
                     "annotation", "statement over several lines"):
            self.assertGreater(t[kind][0], 5, f"{kind}: {t[kind][0]}% of programs")

    def test_real_layout_programs_run_and_their_examples_are_their_calls(self):
        runner = Runner(sys.executable, 2.0, 1000, 120)
        try:
            for row in self.rows("real_layout"):
                res = runner.run(row["code"], row["input"], row.get("entry", "f"))
                self.assertTrue(res["ok"], (res, row["code"]))
                self.assertEqual(res["output"], row["output"], row["code"])
                if ">>> " in row["code"]:
                    self.assertIn(f">>> {row.get('entry', 'f')}({row['input']})\n", row["code"])
        finally:
            runner.close()

    def test_the_table_command(self):
        r = run("-m", "training.constructs", str(REAL), str(self.files["real"]))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("early return", r.stdout)
        self.assertEqual(r.stdout.count("distance from realcode.jsonl"), 3, r.stdout)
        r = run("-m", "training.constructs", str(REAL), "--json")
        self.assertEqual(json.loads(r.stdout)["groups"]["layout"]["distance"], [0.0])

    def test_the_table_command_refuses_bad_input(self):
        r = run("-m", "training.constructs", "no/such.jsonl")
        self.assertEqual(r.returncode, 2)
        self.assertIn("no such file", r.stderr)
        with tempfile.TemporaryDirectory() as d:
            bad = Path(d) / "bad.jsonl"
            bad.write_text('{"code": "def f(:"}\n')
            r = run("-m", "training.constructs", str(bad))
            self.assertEqual(r.returncode, 1)
            self.assertIn("does not parse", r.stderr)
            bad.write_text('{"input": "1"}\n')
            r = run("-m", "training.constructs", str(bad))
            self.assertEqual(r.returncode, 1)
            self.assertIn("bad.jsonl:1: not a programs line", r.stderr)

    def test_unknown_style_or_layout_is_refused(self):
        r = run("training/programs.py", "--count", "1", "--out", "-", "--no-exclude", "--style", "fancy")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--style", r.stderr)
        r = run("training/programs.py", "--count", "1", "--out", "-", "--no-exclude", "--layout", "pretty")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--layout", r.stderr)


if __name__ == "__main__":
    unittest.main()

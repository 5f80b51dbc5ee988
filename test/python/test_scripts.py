"""The user-style scripts of training/scripts.py: deterministic, each one runs whole to its end within the
budget, what users write is in them (classes with __init__ and methods, dataclasses, readable reprs,
module-level code, try/except/raise across calls, print with f-strings), and none is an evaluation script."""
import ast
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from training import scripts  # noqa: E402


class Scripts(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.kept, cls.summary = scripts.generate(200, 7, 400, 0.1)

    def test_same_seed_same_scripts(self):
        again, _ = scripts.generate(200, 7, 400, 0.1)
        self.assertEqual(again, self.kept)
        other, _ = scripts.generate(20, 8, 400, 0.1)
        self.assertNotEqual(other[:20], self.kept[:20])

    def test_each_runs_whole_within_the_budget(self):
        self.assertEqual(len(self.kept), 200)
        raised = 0
        for name, code in self.kept:
            r = scripts.check(code, 400)
            self.assertTrue(r["ok"], (name, r))
            raised += "raised" in r
        self.assertLessEqual(raised, 20)
        self.assertGreater(raised, 0)
        # and as a script, in a Python of its own
        with tempfile.TemporaryDirectory() as d:
            name, code = self.kept[0]
            (Path(d) / "s.py").write_text(code)
            r = subprocess.run([sys.executable, str(Path(d) / "s.py")], capture_output=True, text=True, timeout=30)
            self.assertEqual(r.stdout, scripts.check(code, 400)["output"])

    def test_what_users_write_is_in_them(self):
        n = len(self.kept)
        share = {k: 0 for k in ("class", "__init__", "method", "dataclass", "__repr__", "try", "raise", "fstring_print",
                                "module_call", "custom_exception")}
        for _, code in self.kept:
            t = ast.parse(code)
            classes = [x for x in t.body if isinstance(x, ast.ClassDef)]
            funcs = [f for c in classes for f in c.body if isinstance(f, ast.FunctionDef)]
            nodes = list(ast.walk(t))
            share["class"] += bool(classes)
            share["__init__"] += any(f.name == "__init__" for f in funcs)
            share["method"] += any(f.name not in ("__init__", "__repr__") for f in funcs)
            share["dataclass"] += any(isinstance(d, ast.Name) and d.id == "dataclass" for c in classes for d in c.decorator_list)
            share["__repr__"] += any(f.name == "__repr__" for f in funcs)
            share["try"] += any(isinstance(x, ast.Try) for x in nodes)
            share["raise"] += any(isinstance(x, ast.Raise) for x in nodes)
            share["fstring_print"] += any(isinstance(x, ast.Call) and getattr(x.func, "id", "") == "print"
                                          and any(isinstance(a, ast.JoinedStr) for a in x.args) for x in nodes)
            share["module_call"] += any(isinstance(x, (ast.Expr, ast.Assign, ast.For, ast.Try)) for x in t.body)
            share["custom_exception"] += any(any(getattr(b, "id", "") == "Exception" for b in c.bases) for c in classes)
        for k, v in share.items():
            self.assertGreater(v / n, 0.1, (k, v))
        self.assertGreater(share["class"] / n, 0.6)
        self.assertGreater(share["try"] / n, 0.6)

    def test_no_script_is_an_evaluation_script(self):
        norm = lambda s: ast.dump(ast.parse(s))  # noqa: E731
        fixtures = {norm(p.read_text()) for p in (REPO / "test/fixtures/userstyle").glob("*.py")}
        self.assertFalse([n for n, c in self.kept if norm(c) in fixtures])

    def test_the_command_writes_a_folder_of_scripts(self):
        with tempfile.TemporaryDirectory() as d:
            r = subprocess.run([sys.executable, "-m", "training.scripts", "--count", "5", "--seed", "3", "--out", d],
                               cwd=REPO, capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(sorted(p.name for p in Path(d).glob("*.py")), [f"s3_{k}.py" for k in range(5)])
            self.assertIn('"scripts": 5', r.stderr)

    def test_the_calibration_scripts_are_the_command_s_jsonl_at_their_seed(self):
        # training/heldout/calibration-scripts.jsonl is data: the 60 scripts of seed 31337, one line
        # each in name order (as `ndbg eval` reads a folder of them), remade here byte for byte.
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "cal.jsonl"
            r = subprocess.run([sys.executable, "-m", "training.scripts", "--count", "60", "--seed", "31337", "--out", str(out), "--quiet"],
                               cwd=REPO, capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(out.read_text(), (REPO / "training/heldout/calibration-scripts.jsonl").read_text())
        lines = [json.loads(x) for x in (REPO / "training/heldout/calibration-scripts.jsonl").read_text().splitlines()]
        self.assertEqual([x["id"] for x in lines], sorted(f"s31337_{k}" for k in range(60)))
        self.assertTrue(all(x["input"] == "" and x["script"] is True for x in lines))


if __name__ == "__main__":
    unittest.main()

"""Hidden-callee sessions (training/hidden.py): the helper moves below everything, its body reads `...` in the
text the model is shown (name, signature and docstring kept), and each kept session never leaves the entry's
frame and steps over a call of the helper, the state after it holding the call's true value."""
import json
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from training import hidden  # noqa: E402

CODE = '''LIMIT = 3


def scale(xs, k):
    """Each item times k."""
    out = []
    for x in xs:
        out.append(x * k)
    return out


def total(xs):
    ys = scale(xs, LIMIT)
    s = 0
    for y in ys:
        s += y
    return s
'''


class Hidden(unittest.TestCase):
    def test_moved_and_hidden(self):
        self.assertEqual(hidden.helper_calls(CODE, "total"), ("scale", [13]))
        moved, hid, keep = hidden.moved_and_hidden(CODE, "scale")
        self.assertTrue(moved.endswith("def scale(xs, k):\n    \"\"\"Each item times k.\"\"\"\n    out = []\n    for x in xs:\n"
                                       "        out.append(x * k)\n    return out\n"))
        self.assertTrue(hid.endswith("def scale(xs, k):\n    \"\"\"Each item times k.\"\"\"\n    ...\n"))
        self.assertEqual(moved.splitlines()[keep[13] - 1], "    ys = scale(xs, LIMIT)")
        for code in (moved, hid):
            compile(code, "<x>", "exec")
        g = {}
        exec(moved, g)
        self.assertEqual(g["total"]([1, 2]), 9)

    def test_no_helper_or_one_read_at_module_level(self):
        self.assertIsNone(hidden.helper_calls("def f(x):\n    return len(x)\n", "f"))
        self.assertIsNone(hidden.helper_calls("def h(x):\n    return x\n\n\nY = h(1)\n\n\ndef f(x):\n    return h(x) + Y\n", "f"))

    def test_sessions(self):
        with tempfile.TemporaryDirectory() as d:
            progs = Path(d) / "p.jsonl"
            progs.write_text(json.dumps({"code": CODE, "input": "[1, 2, 3]", "entry": "total", "output": "18", "id": "t0"}) + "\n")
            out = Path(d) / "h.jsonl"
            r = subprocess.run([sys.executable, "-m", "training.hidden", "--programs", str(progs), "--out", str(out),
                                "--samples-per-program", "40", "--seed", "3"], cwd=REPO, capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            recs = [json.loads(l) for l in out.read_text().splitlines()]
            self.assertGreater(len(recs), 0, r.stderr)
            _, hid, _ = hidden.moved_and_hidden(CODE, "scale")
            line = hid.splitlines().index("    ys = scale(xs, LIMIT)") + 1
            stepped = 0
            for rec in recs:
                text = rec["text"]
                self.assertIn(hid, text)
                self.assertNotIn("out.append", text)
                self.assertTrue(all(d == "0" and fn == "total" for _, _, d, fn in hidden.FRAME.findall(text)))
                for s, e in rec["targets"]:
                    self.assertTrue(text[s:e].startswith(("<|frame_sep|>", "<|exit_")), text[s:e])
                m = re.search(rf"<\|line_sep\|>{line} 0 total[^\n]*\n<\|action_sep\|><\|step_over\|>\n<\|frame_sep\|>[^\n]*", text)
                if m:
                    stepped += 1
                    self.assertIn("ys=[3, 6, 9]", m.group(0))  # the call's true value, after stepping over it
            self.assertGreater(stepped, 0)


if __name__ == "__main__":
    unittest.main()

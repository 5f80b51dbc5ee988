"""The one-command training route, rehearsed on the CPU with the tiny config: programs, real code in
the model's layout, sessions, training and an f16 GGUF in parts that `gguf --join` puts together."""
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_train import NO_TORCH, torch_python  # noqa: E402
from training import gguf  # noqa: E402

NODE_OK = (REPO / "dist" / "ndbg.js").exists()


def run(py, *args, timeout=240):
    return subprocess.run([py, *args], cwd=REPO, capture_output=True, text=True, timeout=timeout)


class Rehearsal(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.py = torch_python()

    def test_refuses_to_generate_without_the_excluded_corpus(self):
        with tempfile.TemporaryDirectory() as d:
            r = run(sys.executable, "-m", "training.pipeline", "--out", d, "--stages", "programs", "--sets", "1", "--programs", "2")
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertIn("--exclude", r.stderr)
            r = run(sys.executable, "-m", "training.pipeline", "--out", d, "--stages", "train,bake")
            self.assertEqual(r.returncode, 2)
            self.assertIn("unknown stages ['bake']", r.stderr)

    def test_whole_route_on_the_cpu(self):
        if not self.py:
            self.skipTest(NO_TORCH)
        self.assertTrue(NODE_OK, "dist/ndbg.js is missing: node scripts/build.mjs")
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            # a few real-code lines stand in for the corpus (training/realcode.py builds the real one)
            real = (REPO / "training/heldout/realcode.jsonl").read_text().splitlines()[:6]
            (d / "rc.jsonl").write_text("\n".join(real) + "\n")
            held = d / "heldout.jsonl"
            r = run(self.py, "training/programs.py", "--count", "10", "--seed", "5", "--no-exclude", "--out", str(held), "--quiet")
            self.assertEqual(r.returncode, 0, r.stderr)
            # sessions made elsewhere: the fixture sessions with the header a 3.12 machine's `ndbg data` writes
            # (no 3.12 here; what the pipeline and the trainer read of them is that header)
            other = d / "other.jsonl"
            with open(other, "w") as f:
                for line in (REPO / "test/fixtures/gguf/train.jsonl").read_text().splitlines()[:20]:
                    rec = json.loads(line)
                    shift = len("#ndbg 2 python3.12") - len("#ndbg 1")
                    rec["text"] = "#ndbg 2 python3.12" + rec["text"][len("#ndbg 1"):]
                    rec["targets"] = [[a + shift, b + shift] for a, b in rec["targets"]]
                    f.write(json.dumps(rec) + "\n")
            here = subprocess.run([self.py, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], capture_output=True, text=True).stdout.strip()
            out = d / "run"
            r = run(self.py, "-m", "training.pipeline", "--sessions", str(other), "--out", str(out), "--node", "node", "--python", self.py,
                    "--config", "tiny", "--steps", "12", "--sets", "2", "--programs", "25", "--no-exclude",
                    "--heldout", str(held), "--heldout-programs", "5", "--realcode", str(d / "rc.jsonl"),
                    "--realcode-heldout", str(d / "rc.jsonl"), "--realcode-samples", "3", "--workers", "2",
                    "--threads", "1", "--device", "cpu", "--part-mib", "0.1")
            self.assertEqual(r.returncode, 0, r.stdout[-2000:] + r.stderr[-2000:])
            t = json.loads((out / "timings.json").read_text())
            self.assertEqual(list(t["stages"]), ["check", "programs", "realcode", "sessions", "train", "export"])
            self.assertTrue(all(s["seconds"] >= 0 for s in t["stages"].values()))
            self.assertRegex(t["traced_python"], r"^3\.\d+\.\d+$")
            sessions = t["stages"]["sessions"]["sessions"]
            self.assertEqual(sessions["d-rc.jsonl"], 18, "3 sessions for each of 6 real programs")
            self.assertGreater(sessions["d-p1.jsonl"], 0)
            self.assertEqual(t["stages"]["train"]["steps"], 12)
            # every session this run made names the traced Python; the model knows both versions
            self.assertTrue(all(json.loads(l)["text"].startswith(f"#ndbg 2 python{here}\n") for l in (out / "d-p1.jsonl").read_text().splitlines()))
            want = ",".join(sorted({here, "3.12"}, key=lambda v: int(v.split(".")[1])))
            self.assertEqual((t["stages"]["train"]["format_version"], t["stages"]["train"]["python_versions"]), (2, want))
            # the real code was trained in the layout the adapter shows it: no docstrings or annotations
            for line in (out / "rc.jsonl").read_text().splitlines():
                code = json.loads(line)["code"]
                self.assertNotIn('"""', code)
                self.assertNotIn("->", code)
            parts = sorted((out / "export").glob("*.part*"))
            self.assertGreater(len(parts), 1)
            self.assertTrue(all(p.stat().st_size <= 0.1 * 2**20 for p in parts))
            r = run(self.py, "-m", "training.gguf", "--join", str(out / "export/model.f16.json"), "--type", "q8_0",
                    "--out", str(d / "m.gguf"), "--card")
            self.assertEqual(r.returncode, 0, r.stderr)
            meta = gguf.check_gguf(d / "m.gguf")
            self.assertEqual(meta["llama.block_count"], 2)
            self.assertEqual((meta["ndbg.format_version"], meta["ndbg.train.python_versions"]), (2, want))
            self.assertTrue((d / "m.md").exists())
            # a damaged part is refused, not joined
            p = parts[1]
            p.write_bytes(b"\1" + p.read_bytes()[1:])
            r = run(self.py, "-m", "training.gguf", "--join", str(out / "export/model.f16.json"), "--out", str(d / "n.gguf"))
            self.assertEqual(r.returncode, 1)
            self.assertIn("damaged", r.stderr)


if __name__ == "__main__":
    unittest.main()

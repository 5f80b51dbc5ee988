"""The one-command training route, rehearsed on the CPU with the tiny config: programs, real code in
the model's layout, sessions, training and an f16 GGUF in parts that `gguf --join` puts together."""
import glob
import json
import os
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


def version_of(py):
    """MAJOR.MINOR of the Python `py`, or None where it does not run (a pyenv shim of a version not selected)."""
    try:
        r = subprocess.run([py, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], capture_output=True, text=True, timeout=30)
    except OSError:
        return None
    return r.stdout.strip() if r.returncode == 0 else None


def _micro(path):
    """The micro version of a pyenv interpreter's path (.../versions/3.12.1/bin/python3): 1."""
    micro = Path(path).parts[-3].split(".")[-1]
    return int(micro) if micro.isdigit() else -1


def other_python(here):
    """A real Python of another version than `here` (3.12, else 3.11) for the second version's sessions: on PATH,
    in /usr/bin, /usr/local/bin, or pyenv's versions (newest first); None where there is none."""
    pyenv = os.path.join(os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv"), "versions")
    for v in [x for x in ("3.12", "3.11") if x != here]:
        installed = sorted(glob.glob(os.path.join(pyenv, v + ".*", "bin", "python3")), key=_micro, reverse=True)
        for py in ["python" + v, "/usr/bin/python" + v, "/usr/local/bin/python" + v, *installed]:
            if version_of(py) == v:
                return py, v
    return None, None


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
            # and a real-code script (training/realcode_scripts.py), run whole
            script = {"code": "class Tally:\n    def __init__(self):\n        self.n = 0\n\n    def add(self, k):\n        self.n += k\n"
                              "        return self.n\n\n\ntally = Tally()\ntally.add(2)\nprint(tally.add(3))\n",
                      "input": "", "script": True, "id": "rs_fixture_tally_Tally", "source": "fixture/tally.py"}
            (d / "rc.jsonl").write_text("\n".join(real + [json.dumps(script)]) + "\n")
            held = d / "heldout.jsonl"
            r = run(self.py, "training/programs.py", "--count", "10", "--seed", "5", "--no-exclude", "--out", str(held), "--quiet")
            self.assertEqual(r.returncode, 0, r.stderr)
            # sessions made elsewhere (`--sessions`), by a second Python version: `ndbg data` with a real one
            # on the comprehension fixtures, whose traces differ between 3.11 and 3.12
            here = version_of(self.py)
            other = d / "other.jsonl"
            other_py, other_v = other_python(here)
            if other_py:
                r = run("node", "dist/ndbg.js", "data", "--programs", "test/fixtures/comprehensions", "--out", str(other),
                        "--samples-per-program", "2", "--python", other_py)
                self.assertEqual(r.returncode, 0, r.stderr[-2000:])
                texts = [json.loads(l)["text"] for l in other.read_text().splitlines()]
                self.assertGreater(len(texts), 10)
                self.assertTrue(all(t.startswith(f"#ndbg 2 python{other_v}\n") for t in texts))
                comp_frames = sum("comp>" in t for t in texts)
                self.assertEqual(comp_frames == 0, other_v == "3.12", f"{comp_frames} sessions with comprehension frames on {other_v}")
            else:
                # no second version here: the fixture sessions with the header its `ndbg data` writes
                # (what the pipeline and the trainer read of them is that header)
                print(f"no second Python version found beside {here}: the other sessions' header is rewritten", file=sys.stderr)
                other_v = "3.12" if here != "3.12" else "3.11"
                with open(other, "w") as f:
                    for line in (REPO / "test/fixtures/gguf/train.jsonl").read_text().splitlines()[:20]:
                        rec = json.loads(line)
                        shift = len(f"#ndbg 2 python{other_v}") - len("#ndbg 1")
                        rec["text"] = f"#ndbg 2 python{other_v}" + rec["text"][len("#ndbg 1"):]
                        rec["targets"] = [[a + shift, b + shift] for a, b in rec["targets"]]
                        f.write(json.dumps(rec) + "\n")
            out = d / "run"
            r = run(self.py, "-m", "training.pipeline", "--sessions", str(other), "--out", str(out), "--node", "node", "--python", self.py,
                    "--config", "tiny", "--steps", "12", "--eval-every", "4", "--sets", "2", "--programs", "25", "--scripts", "6", "--no-exclude",
                    "--heldout", str(held), "--heldout-programs", "5", "--realcode", str(d / "rc.jsonl"),
                    "--realcode-heldout", str(d / "rc.jsonl"), "--realcode-samples", "3", "--workers", "2",
                    "--threads", "1", "--device", "cpu", "--part-mib", "0.1")
            self.assertEqual(r.returncode, 0, r.stdout[-2000:] + r.stderr[-2000:])
            t = json.loads((out / "timings.json").read_text())
            self.assertEqual(list(t["stages"]), ["check", "programs", "realcode", "sessions", "train", "export"])
            self.assertTrue(all(s["seconds"] >= 0 for s in t["stages"].values()))
            self.assertRegex(t["traced_python"], r"^3\.\d+\.\d+$")
            sessions = t["stages"]["sessions"]["sessions"]
            self.assertEqual(sessions["d-rc.jsonl"], 21, "3 sessions for each of 6 real programs and the script")
            tally = [json.loads(l)["text"] for l in (out / "d-rc.jsonl").read_text().splitlines() if "rs_fixture_tally" in l]
            self.assertEqual(len(tally), 3)
            self.assertTrue(all("<module>" in t and "tally = Tally()" in t for t in tally))
            self.assertGreater(sessions["d-p1.jsonl"], 0)
            # user-style scripts with each set, run whole (their <module> frame traced), and held-out ones for the loss
            self.assertEqual(t["stages"]["programs"]["scripts"], 12)
            self.assertEqual(len(list((out / "sc1").glob("*.py"))), 6)
            self.assertGreaterEqual(sessions["d-sc1.jsonl"], 10)
            self.assertGreater(sessions["e-scripts.jsonl"], 50)
            self.assertTrue(any("<module>" in json.loads(l)["text"] for l in (out / "d-sc1.jsonl").read_text().splitlines()))
            # hidden-callee sessions: the helper's body reads `...`, every state is the entry's own
            self.assertGreater(sessions["e-hidden.jsonl"], 0)
            for name in ("d-hid-rc.jsonl", "e-hidden.jsonl", *[n for n in sessions if n.startswith("d-hid-p")]):
                for line in (out / name).read_text().splitlines():
                    rec = json.loads(line)
                    self.assertIn("#hidden:", rec["id"])
                    self.assertIn("    ...\n<|frame_sep|>", rec["text"])
            self.assertEqual(t["stages"]["train"]["steps"], 12)
            # the held-out curve, each set's loss at every evaluation; the best weights are those of the lowest real-code loss
            train = t["stages"]["train"]
            self.assertEqual([c["step"] for c in train["curve"]], [4, 8, 12])  # every 4 steps
            self.assertEqual(set(train["curve"][0]["eval_losses"]), {"e-generated", "e-realcode", "e-realscripts", "e-scripts", "e-hidden"})
            self.assertEqual(sessions["e-realscripts.jsonl"], 24, "one session for each committed held-out real script")
            losses = [(c["eval_losses"]["e-realcode"], c["step"]) for c in train["curve"]]
            self.assertEqual(train["best_on"], "e-realcode")
            self.assertEqual((train["best_loss"], train["best_run_step"]), min(losses, key=lambda x: x[0]))
            best = json.loads((out / "run/best.json").read_text())["meta"]["stats"]
            self.assertEqual((best["checkpoint"], best["steps"], best["best_loss"]), ("best", train["best_run_step"], train["best_loss"]))
            exported = t["stages"]["export"]
            self.assertEqual(exported["last"]["steps"], 12)
            self.assertEqual(exported["best"]["steps"], train["best_run_step"])
            self.assertEqual((out / "export/best.f16.json").exists(), train["best_run_step"] != 12)
            # every session this run made names the traced Python; the model knows both versions
            self.assertTrue(all(json.loads(l)["text"].startswith(f"#ndbg 2 python{here}\n") for l in (out / "d-p1.jsonl").read_text().splitlines()))
            want = ",".join(sorted({here, other_v}, key=lambda v: int(v.split(".")[1])))
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
            self.assertEqual((meta["ndbg.train.checkpoint"], meta["ndbg.train.steps"]), ("last", 12))
            self.assertEqual(meta["ndbg.train.best_step"], train["best_run_step"])
            # best weights of an earlier step than the last come back beside them, each GGUF naming its step
            run_dir = out / "run"
            m = json.loads((run_dir / "model.json").read_text())
            m["meta"]["stats"] = {**m["meta"]["stats"], "checkpoint": "best", "steps": 8, "best_run_step": 8, "best_on": "e-realcode",
                                  "best_loss": 1.5}
            for f in run_dir.glob("model.part*"):
                (run_dir / f.name.replace("model.", "best.")).write_bytes(f.read_bytes())
            m["parts"] = [{**q, "file": q["file"].replace("model.", "best.")} for q in m["parts"]]
            (run_dir / "best.json").write_text(json.dumps(m))
            r = run(self.py, "-m", "training.pipeline", "--out", str(out), "--stages", "export", "--part-mib", "0.1")
            self.assertEqual(r.returncode, 0, r.stdout[-2000:] + r.stderr[-2000:])
            t = json.loads((out / "timings.json").read_text())
            self.assertEqual((t["stages"]["export"]["last"]["steps"], t["stages"]["export"]["best"]["steps"]), (12, 8))
            self.assertTrue(any(n.startswith("best.f16.gguf.part") for n in t["stages"]["export"]["parts"]))
            r = run(self.py, "-m", "training.gguf", "--join", str(out / "export/best.f16.json"), "--type", "q8_0",
                    "--out", str(d / "best.gguf"), "--card")
            self.assertEqual(r.returncode, 0, r.stderr)
            bm = gguf.check_gguf(d / "best.gguf")
            self.assertEqual((bm["ndbg.train.checkpoint"], bm["ndbg.train.steps"], bm["ndbg.train.best_on"]), ("best", 8, "e-realcode"))
            self.assertIn("| checkpoint | best |", (d / "best.md").read_text())
            parts = sorted((out / "export").glob("model.f16.gguf.part*"))
            # a damaged part is refused, not joined
            p = parts[1]
            p.write_bytes(b"\1" + p.read_bytes()[1:])
            r = run(self.py, "-m", "training.gguf", "--join", str(out / "export/model.f16.json"), "--out", str(d / "n.gguf"))
            self.assertEqual(r.returncode, 1)
            self.assertIn("damaged", r.stderr)


if __name__ == "__main__":
    unittest.main()

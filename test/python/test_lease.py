"""A GPU lease rehearsed on the CPU: `training.lease pack` makes the bundle here, `training.lease run` unpacks it,
makes the data with the bundle's own Node and relocated Python, trains the tiny config within the time it has
and leaves what would come back from the machine, which `gguf --join` turns into a model."""
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_pipeline import other_python, version_of  # noqa: E402
from test_train import NO_TORCH, torch_python  # noqa: E402
from training import gguf  # noqa: E402

TRACED = shutil.which("python3") or sys.executable   # the Python whose traces the model learns


def lease(py, *args, timeout=300):
    return subprocess.run([py, "-m", "training.lease", *args], cwd=REPO, capture_output=True, text=True, timeout=timeout)


class Lease(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = Path(tempfile.mkdtemp())
        real = (REPO / "training/heldout/realcode.jsonl").read_text().splitlines()[:6]
        (cls.d / "rc.jsonl").write_text("\n".join(real) + "\n")  # stands in for the corpus training/realcode.py builds
        r = subprocess.run([TRACED, "training/programs.py", "--count", "10", "--seed", "5", "--no-exclude", "--out",
                            str(cls.d / "held.jsonl"), "--quiet"], cwd=REPO, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        (cls.d / "bench.jsonl").write_text((REPO / "test/fixtures/programs/documented.jsonl").read_text())
        cls.bundle = cls.d / "bundle.tar.xz"
        cls.packed = lease(sys.executable, "pack", "--out", str(cls.bundle), "--python", TRACED, "--realcode", str(cls.d / "rc.jsonl"),
                           "--heldout", str(cls.d / "held.jsonl"), "--exclude", str(cls.d / "bench.jsonl"), "--preset", "0")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.d, ignore_errors=True)

    def test_pack_refuses_without_the_corpus(self):
        r = lease(sys.executable, "pack", "--out", str(self.d / "x.tar.xz"), "--realcode", str(self.d / "none.jsonl"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("none.jsonl is missing: the real-code corpus (training/DATA.md builds it)", r.stderr)
        self.assertFalse((self.d / "x.tar.xz").exists())

    def test_the_bundle_holds_what_the_machine_lacks(self):
        self.assertEqual(self.packed.returncode, 0, self.packed.stderr)
        m = json.loads(self.packed.stdout)
        self.assertEqual(m["python"], version_of(TRACED))
        with tarfile.open(self.bundle) as tar:
            names = set(tar.getnames())
        v = m["python"]
        for want in ("node/bin/node", f"python/bin/python{v}", f"python/lib/python{v}/os.py", "repo/dist/ndbg.js",
                     "repo/node_modules/web-tree-sitter/package.json", "data/realcode.jsonl", "data/heldout.jsonl",
                     "data/exclude/bench.jsonl", "manifest.json"):
            self.assertIn(want, names)
        self.assertFalse([n for n in names if n.endswith(".map") or f"python{v}/test/" in n or "site-packages" in n])

    def test_run_leaves_a_model_that_comes_back(self):
        py = torch_python()
        if not py:
            self.skipTest(NO_TORCH)
        self.assertEqual(self.packed.returncode, 0, self.packed.stderr)
        work, out = self.d / "work", self.d / "out"
        second, second_v = other_python(version_of(TRACED))
        common = ["--bundle", str(self.bundle), "--out", str(out), "--work", str(work), "--config", "tiny", "--sets", "2",
                  "--programs", "25", "--realcode-samples", "3", "--scripts", "6", "--hidden", "2", "--seed", "300", "--workers", "2", "--threads", "1", "--device", "cpu",
                  "--pipeline-arg=--realcode-heldout=" + str(self.d / "rc.jsonl"), "--pipeline-arg=--heldout-programs=5"]
        # too little time for training after the data: a clear error, and what there is still comes back
        r = lease(py, "run", *common, "--total-minutes", "1", "--reserve-minutes", "1")
        self.assertEqual(r.returncode, 1, r.stdout[-2000:] + r.stderr[-2000:])
        self.assertIn("minutes left to train after the data", r.stderr)
        self.assertIn("unpacked: Python", (out / "lease.log").read_text())
        shutil.rmtree(out)
        r = lease(py, "run", *common, "--total-minutes", "3", "--reserve-minutes", "0.5", "--min-train-minutes", "0.1",
                  *(["--second-python", second, "--second-sets", "1"] if second else []))
        self.assertEqual(r.returncode, 0, r.stdout[-2000:] + r.stderr[-2000:])
        back = sorted(out.iterdir())
        self.assertLessEqual(len(back), 8, back)
        self.assertTrue(all(f.stat().st_size <= 16 * 2**20 for f in back))
        t = json.loads((out / "timings.json").read_text())
        self.assertEqual(list(t["stages"]), ["check", "programs", "realcode", "sessions", "train", "export"])
        # the data was traced by the bundle's relocated Python, not by the machine's
        self.assertEqual(t["traced_python"].rsplit(".", 1)[0], version_of(TRACED))
        self.assertEqual(t["stages"]["sessions"]["sessions"]["d-rc.jsonl"], 18)
        if second:  # the pipeline's sessions of set 1 and of the real code (half as many), by the machine's Python
            self.assertEqual(t["stages"]["check"]["second_python"].rsplit(".", 1)[0], second_v)
            self.assertEqual(t["stages"]["sessions"]["sessions"]["d-s2-rc.jsonl"], 6)
            self.assertIn("d-s2-p1.jsonl", t["stages"]["sessions"]["sessions"])
            self.assertNotIn("d-s2-p2.jsonl", t["stages"]["sessions"]["sessions"])
        r = subprocess.run([py, "-m", "training.gguf", "--join", str(out / "model.q8_0.json"), "--type", "q8_0",
                            "--out", str(self.d / "m.gguf")], cwd=REPO, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        meta = gguf.check_gguf(self.d / "m.gguf")
        self.assertEqual(meta["llama.block_count"], 2)
        want = sorted({version_of(TRACED), *([second_v] if second else [])}, key=lambda v: int(v.split(".")[1]))
        self.assertEqual(meta["ndbg.train.python_versions"], ",".join(want))
        # the best weights (lowest held-out real-code loss) come back beside the last where they are of an earlier step;
        # timings.json and each GGUF name the step, lease.log has the whole held-out curve
        train, exported = t["stages"]["train"], t["stages"]["export"]
        self.assertEqual(train["best_on"], "e-realcode")
        curve = [(c["eval_losses"]["e-realcode"], c["step"]) for c in train["curve"]]
        self.assertGreaterEqual(len(curve), 2)
        self.assertEqual((train["best_loss"], train["best_run_step"]), min(curve, key=lambda x: x[0]))
        self.assertEqual((meta["ndbg.train.checkpoint"], meta["ndbg.train.steps"]), ("last", train["run_steps"]))
        self.assertEqual(meta["ndbg.train.best_step"], train["best_run_step"])
        log = (out / "lease.log").read_text()
        self.assertIn("== held-out curve", log)
        self.assertEqual(sum('"eval_losses"' in line for line in log.split("== train.log")[0].splitlines()), len(curve))
        if train["best_run_step"] != train["run_steps"]:
            r = subprocess.run([py, "-m", "training.gguf", "--join", str(out / "best.q8_0.json"), "--type", "q8_0",
                                "--out", str(self.d / "best.gguf")], cwd=REPO, capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            bm = gguf.check_gguf(self.d / "best.gguf")
            self.assertEqual((bm["ndbg.train.checkpoint"], bm["ndbg.train.steps"]), ("best", train["best_run_step"]))
        else:
            self.assertTrue(exported["best"]["same_as_last"])
            self.assertFalse((out / "best.q8_0.json").exists())

    def test_both_models_of_the_base_size_come_back(self):
        """What comes back from a lease of the bundled size: two q8_0 models of 29.7 MB in 15 MiB parts with their
        manifests, timings.json and lease.log are at most 8 files of at most 16 MiB."""
        from training import lease as L
        size = 29_685_984  # ndbg-base-28m.q8_0.gguf
        parts = -(-size // (L.PART_MIB * 2**20))
        self.assertLessEqual(2 * (parts + 1) + 2, L.FILES_BACK)
        self.assertLessEqual(L.PART_MIB, 16)


if __name__ == "__main__":
    unittest.main()

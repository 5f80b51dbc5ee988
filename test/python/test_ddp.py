"""Training in two processes under torchrun (gloo, on the CPU) against one process on the same global
batch: the same losses step by step, the same held-out losses and the same weights at the end. A rank
that trained on the wrong shard, or gradients averaged without weighting each rank's share of the
targets, would move the weights elsewhere."""
import json
import socket
import subprocess
import sys
import tempfile
import shutil
import unittest
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_train import FIXTURES, HAS_TORCH, NO_TORCH, records, torch_python  # noqa: E402
from training import gguf  # noqa: E402
from training.distributed import World, shard  # noqa: E402
from training.pipeline import trainer  # noqa: E402
from training.tokenizer import train as train_tokenizer  # noqa: E402

# --batch-tokens of each rank; one process takes both ranks' share in one batch. Of the fixture's first 6 global
# batches of 2048 tokens, one holds a single document: the other rank then has nothing to learn from, but must
# take part in the step
PER_RANK = 1024
STEPS = 6
# torchrun of PyTorch 1.13 under Python 3.11 fails on its own default "0" for these (Python 3.11 no longer lists a
# flag enum's zero member); stdout copied to a log file as well as shown (1) parses on every version. The log files
# go into the test's folder (--log_dir).
TORCHRUN_STREAMS = ["--redirects", "1", "--tee", "1"]


class Shards(unittest.TestCase):
    """How a global batch is dealt out (no PyTorch needed)."""

    def test_every_document_in_one_rank_and_the_tokens_balanced(self):
        rng = np.random.default_rng(0)
        rows = [[(i, int(rng.integers(5, 500))) for i in range(k, k + 7)] for k in range(0, 70, 7)]
        for world_size in (2, 3, 8):
            parts = [shard(rows, World(rank=r, size=world_size), "segments") for r in range(world_size)]
            docs = [d for part in parts for row in part for d in row]
            self.assertEqual(sorted(docs), sorted(d for row in rows for d in row))
            loads = [sum(L for row in part for _, L in row) for part in parts]
            self.assertLessEqual(max(loads) - min(loads), 500, loads)
        # fewer documents than ranks: the last ranks get nothing
        self.assertEqual(shard([[(4, 30)]], World(rank=1, size=2), "segments"), [])
        self.assertEqual(shard([[(4, 30)]], World(rank=0, size=2), "segments"), [[(4, 30)]])

    def test_dense_rows_are_dealt_in_turn(self):
        rows = [[(0, 9)], [(1, 4), (2, 5)], [(3, 8)]]
        self.assertEqual(shard(rows, World(rank=0, size=2), "dense"), [[(0, 9)], [(3, 8)]])
        self.assertEqual(shard(rows, World(rank=1, size=2), "dense"), [[(1, 4), (2, 5)]])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TwoRanks(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.py = torch_python()
        if not cls.py:
            raise unittest.SkipTest("no Python with PyTorch here (apt-get install python3-torch): the two-rank run skipped")
        cls.tmp = Path(tempfile.mkdtemp())
        train_tokenizer([r["text"] for r in records("train.jsonl")], 800).save(cls.tmp / "tok.json")
        common = ["--data", str(FIXTURES / "train.jsonl"), "--eval", str(FIXTURES / "heldout.jsonl"), "--config", "tiny",
                  "--tokenizer", str(cls.tmp / "tok.json"), "--cache", str(cls.tmp / "cache"), "--threads", "1",
                  "--steps", str(STEPS), "--log-every", "1", "--eval-every", "3", "--warmup", "2", "--seed", "3"]
        # one process first: it tokenizes into the shared cache, which the ranks then read
        cls.one = cls.run_train([cls.py, "-m", "training.train"], common + ["--batch-tokens", str(2 * PER_RANK), "--out", str(cls.tmp / "one")])
        cls.two = cls.run_train(cls.torchrun(), common + ["--batch-tokens", str(PER_RANK), "--out", str(cls.tmp / "two")])

    @classmethod
    def torchrun(cls):
        return [cls.py, "-m", "torch.distributed.run", "--nnodes", "1", "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
                "--master_port", str(free_port()), *TORCHRUN_STREAMS, "--log_dir", str(cls.tmp / "torchrun"), "-m", "training.train"]

    @classmethod
    def run_train(cls, head, args, timeout=300):
        r = subprocess.run(head + args, cwd=REPO, capture_output=True, text=True, timeout=timeout)
        if r.returncode:
            raise AssertionError(f"{' '.join(head[1:4])} exited {r.returncode}\n{r.stderr[-3000:]}")
        return r

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def log(self, name):
        return [json.loads(line) for line in (self.tmp / name / "log.jsonl").read_text().splitlines()]

    def test_the_same_losses_step_by_step(self):
        one, two = self.log("one"), self.log("two")
        steps = lambda log: [(r["step"], r["loss"], r["lr"]) for r in log if "lr" in r]  # noqa: E731
        a, b = steps(one), steps(two)
        self.assertEqual([s for s, _, _ in a], list(range(1, STEPS + 1)))
        self.assertEqual([(s, lr) for s, _, lr in b], [(s, lr) for s, _, lr in a], "the schedule counts global batches")
        for (s, la, _), (_, lb, _) in zip(a, b):
            self.assertAlmostEqual(la, lb, delta=2e-4, msg=f"training loss at step {s}")
        self.assertNotEqual(a[0][1], a[-1][1], "the loss moved: the steps trained")
        # rank 0 trained on a part of each global batch (the whole of one that holds a single document)
        rows = list(zip((r["row_len"] for r in two if "row_len" in r), (r["row_len"] for r in one if "row_len" in r)))
        self.assertTrue(all(mine <= whole for mine, whole in rows), rows)
        self.assertTrue(any(mine < whole for mine, whole in rows), rows)
        self.assertTrue(any(mine == whole for mine, whole in rows), f"no step where rank 1 had no document: {rows}")
        # the held-out losses, each rank evaluating its part of every batch
        evals = lambda log: [(r["step"], r["eval_loss"]) for r in log if "eval_loss" in r and "event" not in r]  # noqa: E731
        self.assertEqual([s for s, _ in evals(two)], [s for s, _ in evals(one)])
        for (s, ea), (_, eb) in zip(evals(one), evals(two)):
            self.assertAlmostEqual(ea, eb, delta=1e-5, msg=f"held-out loss at step {s}")
        done_a, done_b = one[-1], two[-1]
        for k in ("steps", "tokens_seen", "target_tokens_seen"):
            self.assertEqual(done_a[k], done_b[k], k)

    def test_the_same_weights_at_the_end(self):
        _, a = gguf.read_tensors(self.tmp / "one", "model")
        meta, b = gguf.read_tensors(self.tmp / "two", "model")
        self.assertEqual(set(a), set(b))
        for k in a:  # (each step moves every weight by about the learning rate, 1e-3 and more)
            np.testing.assert_allclose(b[k], a[k], rtol=0, atol=2e-5, err_msg=k)
        self.assertEqual(meta["stats"]["device"], "cpu x2")

    def test_a_time_budget_ends_every_rank_at_the_same_step(self):
        """Rank 0 writes a checkpoint at every step, which the other rank waits for inside its next step: on its own clock
        it would leave the loop steps earlier, and the ranks' next collectives would no longer match (an error, or a
        wait without end). (Rank 0 trains the tokenizer here too, which the other rank waits for and receives.)"""
        out = self.tmp / "budget"
        self.run_train(self.torchrun(), ["--data", str(FIXTURES / "train.jsonl"), "--config", "tiny", "--threads", "1",
                                         "--batch-tokens", str(PER_RANK), "--minutes", "0.03", "--steps", "100000", "--out", str(out),
                                         "--ckpt-every", "1", "--keep", "1"], timeout=120)
        log = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
        self.assertEqual([r["event"] for r in log if r.get("event") in ("tokenizer", "start", "done")], ["tokenizer", "start", "done"])
        self.assertTrue(0 < log[-1]["steps"] < 100000, log[-1]["steps"])

    def test_only_rank_0_writes(self):
        two = self.log("two")
        self.assertEqual([r["event"] for r in two if r.get("event") in ("start", "done")], ["start", "done"])
        start = next(r for r in two if r.get("event") == "start")
        self.assertEqual((start["world_size"], start["global_batch_tokens"]), (2, 2 * PER_RANK))
        out = self.two.stdout.splitlines()
        self.assertEqual(sum('"event": "done"' in line for line in out), 1, "one log on stdout: rank 0's")
        self.assertEqual(sorted(p.name for p in (self.tmp / "two" / "checkpoints").iterdir()), ["latest", "step_0000006"])


@unittest.skipUnless(HAS_TORCH, NO_TORCH)
class PipelineCommand(unittest.TestCase):
    def test_the_pipeline_command_is_one_torchrun_takes(self):
        from torch.distributed.run import parse_args
        self.assertEqual(trainer(1)[1:], ["-m", "training.train"])
        cmd = trainer(4)
        self.assertEqual(cmd[1:3], ["-m", "torch.distributed.run"])
        a = parse_args(cmd[3:] + ["--steps", "1"])
        self.assertEqual((a.standalone, int(a.nproc_per_node), a.module, a.training_script, a.training_script_args),
                         (True, 4, True, "training.train", ["--steps", "1"]))


if __name__ == "__main__":
    unittest.main()

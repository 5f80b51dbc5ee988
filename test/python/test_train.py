"""Training: loss targets, packing, weight parts, GGUF writing, the PyTorch model, and real
`--config tiny` runs (the loss must fall; resuming from a checkpoint reproduces the run)."""
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from training import gguf  # noqa: E402
from training.tokenizer import Tokenizer, TokenizerError, read_jsonl, train as train_tokenizer  # noqa: E402
from training.train import Docs, TrainError, build_batch, data_versions, load_data, plan_epoch, tokenize_record  # noqa: E402

FIXTURES = REPO / "test" / "fixtures" / "gguf"
HAS_TORCH = importlib.util.find_spec("torch") is not None
NO_TORCH = "PyTorch is absent in this Python (apt-get install python3-torch; run with /usr/bin/python3)"


def torch_python():
    """A Python that has PyTorch: this one, else Debian's."""
    for py in (sys.executable, "/usr/bin/python3"):
        if os.path.exists(py) and subprocess.run([py, "-c", "import torch"], capture_output=True, timeout=120).returncode == 0:
            return py
    return None


def records(name="heldout.jsonl"):
    return list(read_jsonl(FIXTURES / name))


class Fixture(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tok = train_tokenizer([r["text"] for r in records("train.jsonl")], 800)


class LossTargets(Fixture):
    def test_mask_covers_frames_their_newline_and_the_stop_token(self):
        tok = self.tok
        for rec in records():
            ids, mask = tokenize_record(tok, rec, rec["id"])
            text = rec["text"]
            self.assertEqual(len(ids), len(mask))
            # the final exit has no <|action_sep|> after it: one is appended, with loss
            self.assertEqual(ids[-1], tok.stop_id)
            self.assertEqual(mask[-1], 1)
            self.assertEqual(tok.decode(ids[:-1]), text)
            marked = tok.decode([t for t, m in zip(ids[:-1], mask[:-1]) if m])
            want = "".join(text[s:e] + "\n" + "<|action_sep|>" for s, e in rec["targets"][:-1])
            s, e = rec["targets"][-1]
            want += text[s:e] + "\n"
            self.assertEqual(marked, want)
            # inputs (the header, the source, actions) carry no loss
            for sp in ("<|src_sep|>", "<|step_into|>", "<|step_over|>"):
                if sp in tok.id_of:
                    self.assertTrue(all(m == 0 for t, m in zip(ids, mask) if t == tok.id_of[sp]))

    def test_non_ascii_targets(self):
        text = "#ndbg 1\n<|src_sep|>\nx = 'é'\n<|frame_sep|><|line_sep|>1 0 <module><|arg_sep|>x='é€'\n"
        rec = {"id": "u", "text": text, "targets": [[text.index("<|frame_sep|>"), len(text) - 1]]}
        ids, mask = tokenize_record(self.tok, rec, "u")
        self.assertEqual(self.tok.decode([t for t, m in zip(ids, mask) if m]), text[text.index("<|frame_sep|>"):] + "<|action_sep|>")

    def test_bad_records_are_clear_errors(self):
        with self.assertRaisesRegex(TrainError, "bad target span"):
            tokenize_record(self.tok, {"text": "abc", "targets": [[2, 9]]}, "f:1")
        with self.assertRaisesRegex(TrainError, "no \"targets\""):
            tokenize_record(self.tok, {"text": "abc"}, "f:2")


class DataFiles(Fixture):
    """Data files as they travel to a GPU machine: compressed, tokenized in parallel into the cache."""

    def test_compressed_files_read_and_tokenize_like_plain_ones(self):
        import gzip
        import lzma
        plain = FIXTURES / "train.jsonl"
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            (d / "t.jsonl.xz").write_bytes(lzma.compress(plain.read_bytes()))
            (d / "t2.jsonl.gz").write_bytes(gzip.compress(plain.read_bytes()))
            for f in ("t.jsonl.xz", "t2.jsonl.gz"):
                self.assertEqual(list(read_jsonl(d / f)), records("train.jsonl"))
            tp = d / "tok.json"
            self.tok.save(tp)
            logged = []
            # several files to tokenize: worker processes; one: in this process
            sets = load_data([str(plain), str(d / "t.jsonl.xz"), str(d / "t2.jsonl.gz")], str(tp), d / "cache", logged.append)
            self.assertEqual(sorted(r["data"] for r in logged), sorted([str(plain), str(d / "t.jsonl.xz"), str(d / "t2.jsonl.gz")]))
            for other in sets[1:]:
                for k in ("tokens", "mask", "offsets", "idhash"):
                    np.testing.assert_array_equal(other[k], sets[0][k], err_msg=k)
            self.assertGreater(int(sets[0]["mask"].sum()), 0)
            logged.clear()
            again = load_data([str(d / "t.jsonl.xz")], str(tp), d / "cache", logged.append)
            self.assertEqual(logged, [], "a tokenized file is read from the cache")
            np.testing.assert_array_equal(again[0]["tokens"], sets[0]["tokens"])
            # a truncated file, and a broken one among several, are clear errors
            whole = (d / "t.jsonl.xz").read_bytes()
            (d / "cut.jsonl.xz").write_bytes(whole[:len(whole) // 2])
            with self.assertRaisesRegex(TokenizerError, "cut.jsonl.xz: broken compressed file"):
                list(read_jsonl(d / "cut.jsonl.xz"))
            with self.assertRaisesRegex(TokenizerError, "cut.jsonl.xz"):
                load_data([str(d / "cut.jsonl.xz"), str(d / "t2.jsonl.gz")], str(tp), d / "cache2", logged.append)


    def test_trajectory_versions_1_and_2_read_and_say_what_the_model_speaks(self):
        """Data traced by several Pythons (format 2 headers name each) beside version 1 data: all of it
        trains, and the model is written as speaking format 2 and knowing those Python versions."""
        v1 = records("train.jsonl")
        self.assertTrue(all(r["text"].startswith("#ndbg 1 {") for r in v1))

        def as_v2(rec, python):
            head = f"#ndbg 2 python{python}"
            shift = len(head) - len("#ndbg 1")
            return {**rec, "text": head + rec["text"][len("#ndbg 1"):], "targets": [[a + shift, b + shift] for a, b in rec["targets"]]}

        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            files = {"v1": v1, "v311": [as_v2(r, "3.11") for r in v1], "v312": [as_v2(r, "3.12") for r in v1]}
            for name, recs in files.items():
                (d / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
            tp = d / "tok.json"
            self.tok.save(tp)
            logged = []
            sets = load_data([str(d / f"{n}.jsonl") for n in files], str(tp), d / "cache", logged.append)
            self.assertEqual(sets[0]["headers"], {"formats": {"1": len(v1)}, "python": {"unknown": len(v1)}})
            self.assertEqual(sets[2]["headers"], {"formats": {"2": len(v1)}, "python": {"3.12": len(v1)}})
            # the same sessions: the targets are the same tokens whatever the header
            for s in sets[1:]:
                self.assertEqual(int(s["mask"].sum()), int(sets[0]["mask"].sum()))
            self.assertEqual(data_versions(sets[:1]), {"format_version": 1})
            self.assertEqual(data_versions(sets), {"format_version": 2, "python_versions": "3.11,3.12"})
            self.assertEqual(data_versions(sets[2:], {"format_version": 2, "python_versions": "3.11"}), {"format_version": 2, "python_versions": "3.11,3.12"})
            # the model says it: ndbg.format_version and ndbg.train.python_versions, which the adapter reads
            tok = self.tok.to_json()
            model = dict(gguf.load_config("tiny")["model"])
            out = d / "m.gguf"
            gguf.export(gguf.random_weights(model, len(tok["tokens"]), seed=1), model, tok, out, "f16", "t", {"steps": 1, **data_versions(sets)})
            meta = gguf.check_gguf(out)
            self.assertEqual((meta["ndbg.format_version"], meta["ndbg.train.python_versions"]), (2, "3.11,3.12"))
            self.assertNotIn("ndbg.train.format_version", meta)
            self.assertEqual(gguf.read_model(out)[3]["format_version"], 2)
            # a version this does not read, or a text without a header, is a clear error
            bad = d / "v3.jsonl"
            bad.write_text(json.dumps({**v1[0], "text": "#ndbg 3" + v1[0]["text"][len("#ndbg 1"):]}) + "\n")
            with self.assertRaisesRegex(TokenizerError, "v3.jsonl:1: trajectory format version 3 is not supported"):
                load_data([str(bad)], str(tp), d / "cache", logged.append)
            bad.write_text(json.dumps({**v1[0], "text": "#ndbg 1 python3.11" + v1[0]["text"][len("#ndbg 1"):]}) + "\n")
            with self.assertRaisesRegex(TokenizerError, "bad Python version '3.11' in a version 1 header"):
                load_data([str(bad)], str(tp), d / "cache", logged.append)


class Packing(unittest.TestCase):
    def test_every_document_once_per_epoch_and_little_padding(self):
        rng = np.random.default_rng(0)
        lengths = rng.integers(20, 700, size=500)
        plan = plan_epoch(lengths, 512, 4096, np.random.default_rng(1))
        seen = []
        used = padded = 0
        for rows in plan:
            R = max(sum(L for _, L in row) for row in rows)
            self.assertLessEqual(R, 512)
            self.assertLessEqual(len(rows) * R, max(4096, R))
            for row in rows:
                for i, L in row:
                    seen.append(i)
                    self.assertEqual(L, min(lengths[i], 512))
                used += sum(L for _, L in row)
            padded += len(rows) * R
        self.assertEqual(sorted(seen), list(range(500)))
        self.assertLess(1 - used / padded, 0.05)

    def test_batch_labels_positions_and_documents(self):
        toks = np.arange(100, 130, dtype=np.uint16)
        mask = np.zeros(30, np.uint8)
        mask[[3, 4, 12, 25]] = 1
        data = {"tokens": toks, "mask": mask, "offsets": np.array([0, 10, 30], np.int64), "idhash": np.zeros(2, np.uint64)}
        docs = Docs(data, np.arange(2))
        tokens, pos, doc, labels = build_batch(docs, [[(1, 20)], [(0, 10), (1, 5)]])
        self.assertEqual(tokens.shape, (2, 20))
        self.assertEqual(pos[1, :15].tolist(), list(range(10)) + list(range(5)))
        self.assertEqual(doc[1].tolist(), [0] * 10 + [1] * 5 + [-1] * 5)
        # label at i is token i+1 where that token has loss; never across documents
        self.assertEqual(np.nonzero(labels[0] >= 0)[0].tolist(), [1, 14])
        self.assertEqual(labels[0, 1], 112)
        self.assertEqual(np.nonzero(labels[1] >= 0)[0].tolist(), [2, 3, 11])
        _, _, doc1, _ = build_batch(docs, [[(1, 20)]])
        self.assertIsNone(doc1, "rows of one document need no document mask")


class WeightParts(unittest.TestCase):
    def test_round_trip_in_parts_and_damage_is_detected(self):
        rng = np.random.default_rng(0)
        arrays = {"a": rng.standard_normal((40, 33)).astype(np.float32), "b": np.arange(7, dtype=np.int64),
                  "c": rng.standard_normal(1000).astype(np.float32)}
        with tempfile.TemporaryDirectory() as d:
            gguf.write_tensors(d, "w", arrays, {"k": 1}, part_bytes=1000)
            man = json.loads((Path(d) / "w.json").read_text())
            self.assertGreater(len(man["parts"]), 5)
            self.assertTrue(all(p["bytes"] <= 1000 for p in man["parts"]))
            meta, back = gguf.read_tensors(d, "w")
            self.assertEqual(meta, {"k": 1})
            for k in arrays:
                np.testing.assert_array_equal(back[k], arrays[k])
            p = Path(d) / man["parts"][2]["file"]
            p.write_bytes(b"\0" + p.read_bytes()[1:])
            with self.assertRaisesRegex(gguf.GGUFError, "damaged"):
                gguf.read_tensors(d, "w")
            p.unlink()
            with self.assertRaisesRegex(gguf.GGUFError, "missing weight part"):
                gguf.read_tensors(d, "w")


class GGUFWriting(Fixture):
    def test_q8_0_blocks(self):
        rng = np.random.default_rng(0)
        a = rng.standard_normal((4, 64)).astype(np.float32)
        a[1] = 0
        raw = gguf.quantize_q8_0(a)
        self.assertEqual(len(raw), 8 * 34)
        back = gguf.dequantize_q8_0(raw, a.size).reshape(a.shape)
        scale = np.abs(a.reshape(-1, 32)).max(1) / 127
        self.assertTrue(np.all(np.abs(back - a).reshape(-1, 32).max(1) <= scale * 0.5 + 1e-3))
        self.assertTrue(np.all(back[1] == 0))

    def test_refuses_a_file_llama_cpp_would_abort_on(self):
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaisesRegex(gguf.GGUFError, "llama.feed_forward_length"):
                gguf.write_gguf(Path(d) / "x.gguf", [("general.architecture", gguf.STR, "llama")], [])
            self.assertFalse((Path(d) / "x.gguf").exists())
            bad = Path(d) / "bad.gguf"
            bad.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\x01" * 10)
            with self.assertRaises(gguf.GGUFError):
                gguf.check_gguf(bad)

    def test_export_metadata_and_tensors(self):
        tok = self.tok.to_json()
        model = dict(gguf.load_config("tiny")["model"])
        arrays = gguf.random_weights(model, len(tok["tokens"]), seed=3)
        with tempfile.TemporaryDirectory() as d:
            for ftype, tol in (("f16", 1e-3), ("q8_0", 2e-3)):
                out = Path(d) / f"m.{ftype}.gguf"
                gguf.export(arrays, model, tok, out, ftype, "t", {"steps": 5, "eval_loss": 1.5, "device": "cpu"})
                meta = gguf.check_gguf(out)
                self.assertEqual(meta["ndbg.format_version"], 1)
                self.assertEqual(meta["ndbg.dialect"], "native")
                self.assertEqual(meta["general.name"], "t")
                self.assertEqual(meta["ndbg.train.steps"], 5)
                self.assertEqual(meta["tokenizer.ggml.pre"], "gpt-2")
                self.assertEqual(meta["tokenizer.ggml.tokens"], tok["tokens"])
                self.assertEqual(meta["tokenizer.ggml.eos_token_id"], self.tok.stop_id)
                self.assertEqual(meta["tokenizer.ggml.token_type"][:3], [3, 3, 3])
                self.assertEqual(meta["ndbg.special_tokens"], tok["special_tokens"])
                _, infos = gguf.read_gguf(out, tensors=True)
                self.assertEqual(set(infos), set(arrays))
                for k, a in arrays.items():
                    np.testing.assert_allclose(infos[k]["data"], a, atol=tol)
                if ftype == "q8_0":
                    self.assertEqual(infos["blk.0.attn_q.weight"]["type"], gguf.T_Q8_0)
                    self.assertEqual(infos["output_norm.weight"]["type"], gguf.T_F32)
                # read back as training reads a model to continue from
                m2, tok2, arrays2, stats2 = gguf.read_model(out)
                self.assertEqual({k: m2[k] for k in ("dim", "n_layers", "n_heads", "n_kv_heads", "ffn_dim", "ctx")},
                                 {k: model.get(k, model["n_heads"]) for k in ("dim", "n_layers", "n_heads", "n_kv_heads", "ffn_dim", "ctx")})
                self.assertTrue(m2["tie_embeddings"])
                self.assertEqual((tok2["tokens"], tok2["merges"], tok2["special_tokens"]), (tok["tokens"], tok["merges"], tok["special_tokens"]))
                self.assertEqual(stats2, {"steps": 5, "eval_loss": 1.5, "device": "cpu", "format_version": 1})
                for k, a in arrays.items():
                    np.testing.assert_allclose(arrays2[k], a, atol=tol)

    def test_from_rewrites_one_of_our_ggufs_as_another_type(self):
        """A GPU run sends back an f16 GGUF; `--from` makes the q8_0 that ships, keeping name and stats."""
        tok = self.tok.to_json()
        model = dict(gguf.load_config("tiny")["model"])
        arrays = gguf.random_weights(model, len(tok["tokens"]), seed=4)
        with tempfile.TemporaryDirectory() as d:
            f16, q8 = Path(d) / "m.f16.gguf", Path(d) / "m.q8_0.gguf"
            gguf.export(arrays, model, tok, f16, "f16", "ndbg-x", {"steps": 7, "device": "cuda bf16"})
            r = subprocess.run([sys.executable, "-m", "training.gguf", "--from", str(f16), "--type", "q8_0", "--out", str(q8), "--card"],
                               cwd=REPO, capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            meta = gguf.check_gguf(q8)
            self.assertEqual((meta["general.name"], meta["general.file_type"], meta["ndbg.train.steps"]), ("ndbg-x", 7, 7))
            m2, tok2, arrays2, stats2 = gguf.read_model(q8)
            self.assertEqual(stats2, {"steps": 7, "device": "cuda bf16", "format_version": 1})
            self.assertEqual((tok2["tokens"], tok2["merges"]), (tok["tokens"], tok["merges"]))
            _, infos = gguf.read_gguf(q8, tensors=True)
            self.assertEqual(infos["blk.0.attn_q.weight"]["type"], gguf.T_Q8_0)
            for k, a in arrays.items():
                np.testing.assert_allclose(arrays2[k], a, atol=3e-3)
            self.assertIn("cuda bf16", (Path(d) / "m.q8_0.md").read_text())
            r = subprocess.run([sys.executable, "-m", "training.gguf", "--from", str(Path(d) / "absent.gguf"), "--type", "q8_0",
                                "--out", str(Path(d) / "x.gguf")], cwd=REPO, capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 1)
            self.assertIn("absent.gguf", r.stderr)

    def test_random_model_without_torch(self):
        with tempfile.TemporaryDirectory() as d:
            tp = Path(d) / "tok.json"
            self.tok.save(tp)
            code = ("import sys; sys.modules['torch'] = None; from training.gguf import main; "
                    f"sys.exit(main(['--random', '--config', 'tiny', '--tokenizer', {str(tp)!r}, '--out', {str(Path(d) / 'r.gguf')!r}]))")
            r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            meta = gguf.check_gguf(Path(d) / "r.gguf")
            self.assertTrue(meta["ndbg.train.random"])
            r = subprocess.run([sys.executable, "-m", "training.gguf", "--random", "--config", "nope", "--tokenizer", str(tp),
                                "--out", str(Path(d) / "x.gguf")], cwd=REPO, capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 1)
            self.assertIn("known configs", r.stderr)


@unittest.skipUnless(HAS_TORCH, NO_TORCH)
class Model(unittest.TestCase):
    def setUp(self):
        import torch
        from training.model import ModelConfig, Transformer
        torch.manual_seed(0)
        self.torch = torch
        self.model = Transformer(ModelConfig(vocab_size=97, dim=32, n_layers=2, n_heads=4, n_kv_heads=2, ffn_dim=64, ctx=64, init_std=0.2)).eval()

    def test_packed_documents_equal_separate_ones(self):
        torch = self.torch
        a = torch.randint(0, 97, (1, 11))
        b = torch.randint(0, 97, (1, 7))
        with torch.no_grad():
            la, lb = self.model(a), self.model(b)
            row = torch.cat([a, b, torch.zeros(1, 3, dtype=torch.long)], 1)
            pos = torch.tensor([list(range(11)) + list(range(7)) + [0, 0, 0]])
            doc = torch.tensor([[0] * 11 + [1] * 7 + [-1] * 3])
            lp = self.model(row, pos, doc)
        torch.testing.assert_close(lp[:, :11], la, rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(lp[:, 11:18], lb, rtol=1e-4, atol=1e-4)

    def test_rope_rotates_consecutive_pairs(self):
        torch = self.torch
        from training.model import apply_rope, rope_tables
        x = torch.randn(1, 3, 1, 8)
        pos = torch.tensor([[0, 1, 5]])
        cos, sin = rope_tables(pos, 8, 10000.0)
        y = apply_rope(x, cos, sin)
        for t, p in enumerate([0, 1, 5]):
            for i in range(4):
                th = p * 10000.0 ** (-2 * i / 8)
                x0, x1 = x[0, t, 0, 2 * i], x[0, t, 0, 2 * i + 1]
                self.assertAlmostEqual(float(y[0, t, 0, 2 * i]), float(x0 * torch.cos(torch.tensor(th)) - x1 * torch.sin(torch.tensor(th))), places=5)
                self.assertAlmostEqual(float(y[0, t, 0, 2 * i + 1]), float(x0 * torch.sin(torch.tensor(th)) + x1 * torch.cos(torch.tensor(th))), places=5)

    def test_weights_round_trip_through_gguf_names(self):
        from training.model import ModelConfig, Transformer
        arrays = self.model.gguf_state()
        self.assertIn("blk.1.ffn_gate.weight", arrays)
        self.assertNotIn("output.weight", arrays)
        other = Transformer(self.model.cfg)
        other.load_gguf_state(arrays)
        x = self.torch.randint(0, 97, (1, 9))
        with self.torch.no_grad():
            self.torch.testing.assert_close(other.eval()(x), self.model(x))
        with self.assertRaisesRegex(ValueError, "shape"):
            Transformer(ModelConfig(vocab_size=98, dim=32, n_layers=2, n_heads=4, n_kv_heads=2, ffn_dim=64)).load_gguf_state(arrays)


class TinyTraining(unittest.TestCase):
    """Real training runs of --config tiny on the fixture (seconds each on one thread)."""

    @classmethod
    def setUpClass(cls):
        cls.py = torch_python()
        if not cls.py:
            raise unittest.SkipTest("no Python with PyTorch here (apt-get install python3-torch): training runs skipped")
        cls.tmp = Path(tempfile.mkdtemp())

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def train(self, out, *extra, timeout=300):
        cmd = [self.py, "-m", "training.train", "--data", str(FIXTURES / "train.jsonl"), "--eval", str(FIXTURES / "heldout.jsonl"),
               "--config", "tiny", "--out", str(out), "--threads", "1", *extra]
        r = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout)
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        return [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]

    def test_tiny_lowers_the_loss_and_writes_weights(self):
        out = self.tmp / "tiny"
        log = self.train(out)
        done = log[-1]
        self.assertEqual(done["event"], "done")
        evals = [r["eval_loss"] for r in log if "eval_loss" in r]
        self.assertLess(done["eval_loss"], done["first_loss"] - 1.0, "held-out loss must fall well below the start")
        self.assertLess(evals[-1], evals[0])
        meta, arrays = gguf.read_tensors(out, "model")
        self.assertEqual(meta["stats"]["steps"], gguf.load_config("tiny")["train"]["steps"])
        self.assertIn("blk.1.ffn_down.weight", arrays)
        self.assertTrue(all(p.stat().st_size <= gguf.PART_BYTES for p in out.rglob("*.bin")))
        self.assertTrue((out / "tokenizer.json").exists())
        # the token cache is reused by a second run
        log2 = self.train(self.tmp / "tiny2", "--tokenizer", str(out / "tokenizer.json"), "--cache", str(out / "cache"), "--steps", "2")
        self.assertFalse(any(r.get("event") == "tokenized" for r in log2))
        # a run too short to reach an evaluation step still ends with each held-out set's loss
        log3 = self.train(self.tmp / "tiny3", "--tokenizer", str(out / "tokenizer.json"), "--cache", str(out / "cache"), "--steps", "1",
                          "--eval", str(FIXTURES / "train.jsonl"))
        # (the end's evaluation is the curve's one point, and its weights are the best so far)
        self.assertEqual([(r["step"], r["eval_losses"]) for r in log3[:-1] if "eval_loss" in r], [(1, log3[-1]["eval_losses"])])
        self.assertEqual(len(log3[-1]["eval_losses"]), 2)
        self.assertTrue(all(v > 0 for v in log3[-1]["eval_losses"].values()))
        best = [r for r in log3 if r.get("event") == "best"]
        self.assertEqual([(r["step"], r["set"]) for r in best], [(1, "all")])
        self.assertEqual((log3[-1]["checkpoint"], log3[-1]["best_run_step"]), ("last", 1))
        self.assertEqual(gguf.read_tensors(self.tmp / "tiny3", "best")[0]["stats"]["checkpoint"], "best")

    def test_resume_reproduces_the_run(self):
        out = self.tmp / "full"
        self.train(out, "--steps", "20", "--ckpt-every", "10", "--keep", "3")
        ck = out / "checkpoints"
        self.assertTrue((ck / "step_0000010").is_dir())
        part = self.tmp / "part"
        shutil.copytree(out, part)
        (part / "checkpoints" / "latest").write_text("step_0000010")
        log = self.train(part, "--steps", "20", "--resume")
        self.assertEqual(next(r for r in log if r.get("event") == "resumed")["step"], 10)
        _, a = gguf.read_tensors(out, "model")
        _, b = gguf.read_tensors(part, "model")
        for k in a:
            np.testing.assert_allclose(a[k], b[k], rtol=1e-5, atol=1e-6, err_msg=k)

    def test_init_continues_from_a_gguf(self):
        first = self.train(self.tmp / "first", "--steps", "30")[-1]
        model = self.tmp / "first.q8_0.gguf"
        r = subprocess.run([self.py, "-m", "training.gguf", "--weights", str(self.tmp / "first"), "--type", "q8_0", "--out", str(model)],
                           cwd=REPO, capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        log = self.train(self.tmp / "more", "--init", str(model), "--steps", "3")
        done = log[-1]
        self.assertEqual(next(x for x in log if x.get("event") == "init")["steps"], 30)
        # it starts where the first run ended (q8_0 rounding aside), far below a fresh start
        self.assertLess(done["first_loss"], first["first_loss"] - 1.0)
        self.assertLess(abs(done["first_loss"] - first["final_train_loss"]), 0.5)
        self.assertEqual((done["steps"], done["init"]), (33, model.name))
        self.assertGreater(done["tokens_seen"], first["tokens_seen"])
        kept = json.loads((self.tmp / "more" / "tokenizer.json").read_text())
        made = json.loads((self.tmp / "first" / "tokenizer.json").read_text())
        self.assertEqual((kept["tokens"], kept["merges"]), (made["tokens"], made["merges"]))
        # a file that is no model of ours, or a second tokenizer, is a clear error
        text = self.tmp / "text.gguf"
        text.write_text("not a model")
        for extra, why in ((["--init", str(text)], "not a GGUF"), (["--init", str(model), "--tokenizer", str(self.tmp / "first" / "tokenizer.json")], "own tokenizer")):
            r = subprocess.run([self.py, "-m", "training.train", "--data", str(FIXTURES / "train.jsonl"), "--config", "tiny",
                                "--out", str(self.tmp / "bad"), "--threads", "1", "--steps", "1", *extra], cwd=REPO, capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertIn(why, r.stderr)

    def test_time_budget_ends_the_run(self):
        log = self.train(self.tmp / "budget", "--minutes", "0.03", "--steps", "100000", "--warmup", "3")
        self.assertEqual(next(r for r in log if r.get("event") == "start")["train"]["warmup"], 3)
        done = log[-1]
        self.assertEqual(done["event"], "done")
        self.assertGreater(done["steps"], 0)
        self.assertLess(done["steps"], 100000)


if __name__ == "__main__":
    unittest.main()

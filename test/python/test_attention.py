"""The two ways the trainer attends packed documents learn the same thing: a flat stream attended per
document (Segments; the flash kernel on CUDA) gives the loss and gradients of rows masked by a dense
per-document matrix, on one fixed packed batch: fp32 on the CPU, bf16 on a GPU when there is one."""
import contextlib
import importlib.util
import sys
import unittest
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

HAS_TORCH = importlib.util.find_spec("torch") is not None


def packed_set(rng: np.random.Generator, lengths: list[int], vocab: int) -> dict:
    """A tokenized set of documents of these lengths, about a third of each one's tokens learned."""
    tokens = rng.integers(0, vocab, size=sum(lengths)).astype(np.uint16)
    mask = (rng.random(sum(lengths)) < 0.35).astype(np.uint8)
    return {"tokens": tokens, "mask": mask, "offsets": np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
            "idhash": np.zeros(len(lengths), np.uint64)}


@unittest.skipUnless(HAS_TORCH, "PyTorch is absent in this Python (apt-get install python3-torch; run with /usr/bin/python3)")
class SameLossAndGradients(unittest.TestCase):
    def loss_and_grads(self, model, batch, device, bf16):
        import torch
        model.zero_grad(set_to_none=True)
        tokens, pos, doc, at, targets = batch.to(device)
        with torch.autocast("cuda", dtype=torch.bfloat16) if bf16 else contextlib.nullcontext():
            loss = model.loss_at(tokens, pos, doc, at, targets)
        loss.backward()
        return float(loss), {n: p.grad.detach().float().cpu().clone() for n, p in model.named_parameters()}

    def compare(self, device: str, bf16: bool, rtol: float):
        import torch
        from training.model import ModelConfig, Segments, Transformer
        from training.train import Docs, make_batch, plan_epoch
        torch.manual_seed(0)
        cfg = ModelConfig(vocab_size=256, dim=64, n_layers=2, n_heads=4, n_kv_heads=2, ffn_dim=128, ctx=256)
        model = Transformer(cfg).to(device)
        lengths = [200, 37, 120, 5, 64, 256, 90, 2, 150, 33]
        docs = Docs(packed_set(np.random.default_rng(3), lengths, cfg.vocab_size), np.arange(len(lengths)))
        rows = plan_epoch(docs.length, cfg.ctx, 2048, np.random.default_rng(1))[0]
        self.assertGreater(max(len(r) for r in rows), 1, "the fixed batch packs several documents into a row")
        dense = make_batch(docs, rows, "dense")
        stream = make_batch(docs, rows, "segments")
        self.assertIsInstance(stream.doc, Segments)
        self.assertEqual(stream.tokens.shape[0], 1)
        self.assertEqual(stream.n_tgt, dense.n_tgt)
        self.assertEqual(sorted(stream.targets.tolist()), sorted(dense.targets.tolist()))
        l_dense, g_dense = self.loss_and_grads(model, dense, device, bf16)
        l_seg, g_seg = self.loss_and_grads(model, stream, device, bf16)
        self.assertTrue(np.isfinite(l_dense))
        self.assertAlmostEqual(l_seg, l_dense, delta=rtol * abs(l_dense))
        for n, g in g_dense.items():
            scale = float(g.abs().max()) or 1.0
            err = float((g_seg[n] - g).abs().max())
            self.assertLessEqual(err, rtol * scale, f"gradient of {n}: off by {err:.3g} of {scale:.3g}")
        return model, docs, rows, l_dense, l_seg

    def test_cpu_fp32(self):
        model, docs, rows, l_dense, l_seg = self.compare("cpu", False, 1e-4)
        # documents that see each other (no mask) differ far more than the two paths do: the check is not vacuous
        from training.train import make_batch
        leaky = make_batch(docs, rows, "dense")
        leaky.doc = None
        l_leak, _ = self.loss_and_grads(model, leaky, "cpu", False)
        self.assertGreater(abs(l_leak - l_dense), 100 * max(abs(l_seg - l_dense), 1e-7))

    @unittest.skipUnless(HAS_TORCH and __import__("torch").cuda.is_available(), "no CUDA device here (the GPU half of this check)")
    def test_cuda_bf16_flash(self):
        from training.model import flash_segments_available
        self.assertTrue(flash_segments_available("cuda"), "this PyTorch has no variable-length flash attention")
        self.compare("cuda", True, 3e-2)


if __name__ == "__main__":
    unittest.main()

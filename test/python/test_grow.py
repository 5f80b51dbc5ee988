"""Growing a model (training/grow.py): the larger model computes what the smaller one did, every
new part can still learn, and the shipped model grows into a config's shape through the CLI."""
import importlib.util
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from training import gguf  # noqa: E402
from training.grow import GrowError, grow, grown_config  # noqa: E402

HAS_TORCH = importlib.util.find_spec("torch") is not None
NO_TORCH = "PyTorch is absent in this Python (apt-get install python3-torch; run with /usr/bin/python3)"
SHIPPED = REPO / "models" / "ndbg-base-28m.q8_0.gguf"

SMALL = {"dim": 32, "n_layers": 2, "n_heads": 2, "n_kv_heads": 2, "ffn_dim": 64, "ctx": 64, "tie_embeddings": True}
LARGE = {**SMALL, "dim": 48, "n_layers": 3, "n_heads": 3, "n_kv_heads": 3, "ffn_dim": 96}


class Grow(unittest.TestCase):
    def test_refuses_a_shape_it_cannot_keep_the_function_in(self):
        arrays = gguf.random_weights(SMALL, 50, seed=1)
        with self.assertRaisesRegex(GrowError, "head size 24 is not 16"):
            grow(SMALL, arrays, {**LARGE, "n_heads": 2, "n_kv_heads": 2})
        with self.assertRaisesRegex(GrowError, "layers"):
            grow(SMALL, arrays, {**LARGE, "n_layers": 1})

    @unittest.skipUnless(HAS_TORCH, NO_TORCH)
    def test_the_grown_model_computes_the_same_and_every_new_part_learns(self):
        import torch
        from training.model import ModelConfig, Transformer, to_gguf_name
        vocab = 50
        arrays = gguf.random_weights(SMALL, vocab, seed=1, std=0.3)  # large weights: differences would show
        small = Transformer(ModelConfig(vocab_size=vocab, **SMALL)).eval()
        small.load_gguf_state(arrays)
        large = Transformer(ModelConfig(vocab_size=vocab, **grown_config(SMALL, LARGE))).eval()
        large.load_gguf_state(grow(SMALL, arrays, LARGE))
        x = torch.randint(0, vocab, (2, 17), generator=torch.Generator().manual_seed(0))
        with torch.no_grad():
            a, b = small(x), large(x)
        self.assertGreater(float(a.std()), 0.5)
        torch.testing.assert_close(b, a, atol=2e-5, rtol=1e-5)
        # Zero weights that write and zero weights that read would never move: each new part must get a gradient.
        large.train()
        torch.nn.functional.cross_entropy(large(x).flatten(0, 1), x.roll(-1, 1).flatten()).backward()
        named = {to_gguf_name(n): p for n, p in large.named_parameters()}
        for name, rows, cols in [("blk.2.attn_output.weight", slice(None), slice(None)),  # a new layer's output
                                 ("blk.0.attn_output.weight", slice(None), slice(32, 48)),  # a new head's columns
                                 ("blk.0.attn_output.weight", slice(32, 48), slice(None)),  # new dimensions' rows
                                 ("blk.1.ffn_down.weight", slice(None), slice(64, 96)),  # new FFN units
                                 ("token_embd.weight", slice(None), slice(32, 48))]:
            g = named[name].grad[rows, cols]
            self.assertGreater(float(g.abs().max()), 0, f"{name}[{rows}, {cols}] gets no gradient")

    def test_the_shipped_model_grows_through_the_command_line(self):
        if not SHIPPED.exists():
            self.fail(f"{SHIPPED} is missing: the bundled model is part of the repository")
        with tempfile.TemporaryDirectory() as tmp:
            config = Path(tmp) / "mid.json"
            target = {"dim": 576, "n_layers": 9, "n_heads": 9, "n_kv_heads": 9, "ffn_dim": 1536, "ctx": 2048, "tie_embeddings": True}
            config.write_text(json.dumps({"model": target, "train": {}}))
            out = Path(tmp) / "mid.gguf"
            r = subprocess.run([sys.executable, "-m", "training.grow", "--from", str(SHIPPED), "--config", str(config), "--out", str(out)],
                               cwd=REPO, capture_output=True, text=True, timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr)
            model, _, arrays, stats = gguf.read_model(out)
            _, _, old, old_stats = gguf.read_model(SHIPPED)
        self.assertEqual({k: model[k] for k in ("dim", "n_layers", "n_heads", "ffn_dim")}, {k: target[k] for k in ("dim", "n_layers", "n_heads", "ffn_dim")})
        self.assertAlmostEqual(model["norm_eps"], 1e-5 * 512 / 576, places=10)
        self.assertEqual(stats["params"], sum(a.size for a in arrays.values()))
        self.assertIn(str(old_stats["params"]), stats["grown_from"])
        self.assertEqual(stats["tokens_seen"], old_stats["tokens_seen"])
        # q8_0 blocks of the old weights come back exactly: the same scale, the same integers.
        np.testing.assert_array_equal(arrays["blk.3.ffn_up.weight"][:1408, :512], old["blk.3.ffn_up.weight"])
        self.assertFalse(arrays["blk.8.attn_output.weight"].any())
        self.assertIn("mid.gguf", r.stdout)


if __name__ == "__main__":
    unittest.main()

"""A Llama-architecture decoder in PyTorch, laid out so that its weights are llama.cpp's as they are.

llama.cpp runs arch "llama" with its default ("normal", non-NeoX) RoPE, which rotates pairs of
consecutive values of each head (x[2i], x[2i+1]). Hugging Face Llama checkpoints rotate the two
halves of each head instead, which is why llama.cpp's converter permutes their q/k rows
(reshape(n_head, 2, hd/2, dim).swapaxes(1, 2)). This model rotates consecutive pairs itself, so
its q/k weights need no permutation on export: gguf.py copies every tensor as it is, and
test/gguf.test.ts checks the logits against llama.cpp.

Blocks: RMSNorm -> attention (RoPE on q, k; grouped kv heads allowed) -> residual ->
RMSNorm -> SwiGLU (down(silu(gate(x)) * up(x))) -> residual; final RMSNorm; output projection
tied to the embedding or not. No biases.

Packed documents, two ways, each training exactly like separate sequences (`pos` restarts at 0
for each document):
- `Segments` (the trainer's default): one flat stream [1, N] of whole documents, their bounds in
  cumulative offsets. On CUDA it runs the variable-length flash kernel (no mask at all); elsewhere,
  one causal attention per document (masks only as large as a document).
- `doc` (the reference): rows [B, T] with a document number per position, masked by a dense
  [B, 1, T, T] matrix. Simple, but such a mask keeps scaled_dot_product_attention off its flash
  kernel. test_attention.py checks that both give the same loss and gradients.

CLI (reference outputs for the export test):
  python3 -m training.model logits --weights DIR --prompts P.json --out R.json [--last 4] [--greedy 8]
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

if __package__ in (None, ""):  # run as a script: make "training" importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

HAS_SDPA = hasattr(F, "scaled_dot_product_attention")
try:  # PyTorch 2.9+: flash attention over variable-length documents of one flat stream
    from torch.nn.attention.varlen import varlen_attn as _varlen_attn
except ImportError:
    _varlen_attn = None

# GGUF tensor name of each parameter, with %d for the layer.
GGUF_NAMES = {
    "tok_embeddings.weight": "token_embd.weight",
    "norm.weight": "output_norm.weight",
    "output.weight": "output.weight",
    "layers.%d.attention_norm.weight": "blk.%d.attn_norm.weight",
    "layers.%d.attention.wq.weight": "blk.%d.attn_q.weight",
    "layers.%d.attention.wk.weight": "blk.%d.attn_k.weight",
    "layers.%d.attention.wv.weight": "blk.%d.attn_v.weight",
    "layers.%d.attention.wo.weight": "blk.%d.attn_output.weight",
    "layers.%d.ffn_norm.weight": "blk.%d.ffn_norm.weight",
    "layers.%d.feed_forward.w1.weight": "blk.%d.ffn_gate.weight",
    "layers.%d.feed_forward.w3.weight": "blk.%d.ffn_up.weight",
    "layers.%d.feed_forward.w2.weight": "blk.%d.ffn_down.weight",
}


@dataclass
class ModelConfig:
    vocab_size: int = 4096
    dim: int = 256
    n_layers: int = 4
    n_heads: int = 4
    n_kv_heads: int = 4
    ffn_dim: int = 704
    ctx: int = 1024
    rope_base: float = 10000.0
    norm_eps: float = 1e-5
    tie_embeddings: bool = True
    init_std: float = 0.02

    @classmethod
    def from_dict(cls, d: dict) -> "ModelConfig":
        known = {f.name for f in fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"unknown model config keys: {sorted(unknown)}")
        cfg = cls(**d)
        cfg.check()
        return cfg

    def check(self) -> None:
        if self.dim % self.n_heads or self.n_heads % self.n_kv_heads:
            raise ValueError("dim must divide into n_heads, and n_heads into n_kv_heads")
        if (self.dim // self.n_heads) % 2:
            raise ValueError("the head size must be even (RoPE rotates pairs)")

    @property
    def head_dim(self) -> int:
        return self.dim // self.n_heads

    def to_dict(self) -> dict:
        return asdict(self)


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).type_as(x) * self.weight


def rope_tables(pos: torch.Tensor, head_dim: int, base: float) -> tuple[torch.Tensor, torch.Tensor]:
    """cos, sin of shape [B, T, 1, head_dim/2] for positions pos [B, T] (theta_i = p * base^(-2i/d))."""
    inv = base ** (-torch.arange(0, head_dim, 2, device=pos.device, dtype=torch.float32) / head_dim)
    ang = pos.float()[..., None] * inv
    return ang.cos()[:, :, None, :], ang.sin()[:, :, None, :]


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotates consecutive pairs (llama.cpp's normal RoPE); x is [B, T, H, D]."""
    xf = x.float().unflatten(-1, (-1, 2))
    x0, x1 = xf[..., 0], xf[..., 1]
    out = torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1)
    return out.flatten(-2).type_as(x)


@dataclass
class Segments:
    """The documents of one flat stream: document i is positions bounds[i] .. bounds[i+1]-1."""
    bounds: list[int]

    def __post_init__(self):
        self.max_len = max((b - a for a, b in zip(self.bounds, self.bounds[1:])), default=0)
        self._cu: dict = {}

    def cu(self, device) -> torch.Tensor:
        """The bounds as the int32 tensor the flash kernel takes, made once per device."""
        key = str(device)
        if key not in self._cu:
            self._cu[key] = torch.tensor(self.bounds, dtype=torch.int32, device=device)
        return self._cu[key]


def flash_segments_available(device) -> bool:
    return _varlen_attn is not None and torch.device(device).type == "cuda"


def _attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Attention of q, k, v [..., H, T, D] under a boolean mask (True: may attend), causal without one."""
    if HAS_SDPA:
        if mask is None:
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    T = q.shape[-2]  # PyTorch 1.x: scores in place, so only two T x T tensors exist
    if mask is None:
        mask = torch.ones(T, T, dtype=torch.bool, device=q.device).tril()
    s = (q * (1.0 / math.sqrt(q.shape[-1]))) @ k.transpose(-1, -2)
    s.masked_fill_(~mask, float("-inf"))
    return s.softmax(-1) @ v


def segment_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, seg: Segments) -> torch.Tensor:
    """Causal attention inside each document of a flat stream; q, k, v and the result are [N, H, D]."""
    if _varlen_attn is not None and q.is_cuda and q.dtype in (torch.float16, torch.bfloat16):
        return _flash_varlen(q, k, v, seg)
    outs = []
    for a, b in zip(seg.bounds, seg.bounds[1:]):
        qa, ka, va = (t[a:b].transpose(0, 1) for t in (q, k, v))
        outs.append(_attend(qa, ka, va).transpose(0, 1))
    return torch.cat(outs)


def _flash_varlen(q, k, v, seg: Segments) -> torch.Tensor:
    cu = seg.cu(q.device)
    if _VARLEN_CAUSAL_ARG == "is_causal":  # PyTorch 2.9
        return _varlen_attn(q, k, v, cu, cu, seg.max_len, seg.max_len, is_causal=True)
    return _varlen_attn(q, k, v, cu, cu, seg.max_len, seg.max_len, window_size=(-1, 0))  # 2.10+: causal window


def _causal_arg() -> str | None:
    if _varlen_attn is None:
        return None
    import inspect
    return "is_causal" if "is_causal" in inspect.signature(_varlen_attn).parameters else "window_size"


_VARLEN_CAUSAL_ARG = _causal_arg()


class Attention(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.n_heads, self.n_kv, self.hd = cfg.n_heads, cfg.n_kv_heads, cfg.head_dim
        self.wq = nn.Linear(cfg.dim, cfg.n_heads * self.hd, bias=False)
        self.wk = nn.Linear(cfg.dim, cfg.n_kv_heads * self.hd, bias=False)
        self.wv = nn.Linear(cfg.dim, cfg.n_kv_heads * self.hd, bias=False)
        self.wo = nn.Linear(cfg.n_heads * self.hd, cfg.dim, bias=False)
        self.rope = apply_rope  # compile_pointwise swaps in a fused kernel

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, mask) -> torch.Tensor:
        """mask: None (one causal sequence per row), a dense [B, 1, T, T] mask, or Segments (B == 1)."""
        B, T, _ = x.shape
        q = self.rope(self.wq(x).view(B, T, self.n_heads, self.hd), cos, sin)
        k = self.rope(self.wk(x).view(B, T, self.n_kv, self.hd), cos, sin)
        v = self.wv(x).view(B, T, self.n_kv, self.hd)
        if self.n_kv != self.n_heads:  # query head h uses kv head h // (n_heads / n_kv), as llama.cpp
            rep = self.n_heads // self.n_kv
            k, v = k.repeat_interleave(rep, dim=2), v.repeat_interleave(rep, dim=2)
        if isinstance(mask, Segments):
            o = segment_attention(q[0], k[0], v[0], mask)[None]
            return self.wo(o.reshape(B, T, -1))
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # [B, H, T, D]
        o = _attend(q, k, v, mask)
        return self.wo(o.transpose(1, 2).reshape(B, T, -1))


class FeedForward(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.w1 = nn.Linear(cfg.dim, cfg.ffn_dim, bias=False)  # gate
        self.w3 = nn.Linear(cfg.dim, cfg.ffn_dim, bias=False)  # up
        self.w2 = nn.Linear(cfg.ffn_dim, cfg.dim, bias=False)  # down

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.attention_norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.attention = Attention(cfg)
        self.ffn_norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.feed_forward = FeedForward(cfg)

    def forward(self, x, cos, sin, mask):
        x = x + self.attention(self.attention_norm(x), cos, sin, mask)
        return x + self.feed_forward(self.ffn_norm(x))


class Transformer(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        cfg.check()
        self.cfg = cfg
        self.tok_embeddings = nn.Embedding(cfg.vocab_size, cfg.dim)
        self.layers = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.output = None if cfg.tie_embeddings else nn.Linear(cfg.dim, cfg.vocab_size, bias=False)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        std = self.cfg.init_std
        for name, p in self.named_parameters():
            if name.endswith("norm.weight"):
                nn.init.ones_(p)
            elif name.endswith(("wo.weight", "w2.weight")):  # residual outputs: scaled by depth (GPT-2)
                nn.init.normal_(p, 0.0, std / math.sqrt(2 * self.cfg.n_layers))
            else:
                nn.init.normal_(p, 0.0, std)

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def hidden(self, tokens: torch.Tensor, pos: torch.Tensor | None = None, doc=None) -> torch.Tensor:
        """Final-norm hidden states [B, T, dim]. pos defaults to 0..T-1; doc separates packed
        documents: a document number per position ([B, T]) or Segments of a flat stream (B == 1)."""
        B, T = tokens.shape
        if pos is None:
            pos = torch.arange(T, device=tokens.device).expand(B, T)
        cos, sin = rope_tables(pos, self.cfg.head_dim, self.cfg.rope_base)
        mask = doc
        if isinstance(doc, torch.Tensor):
            causal = torch.ones(T, T, dtype=torch.bool, device=tokens.device).tril()
            mask = ((doc[:, :, None] == doc[:, None, :]) & causal)[:, None]  # [B, 1, T, T]
        x = self.tok_embeddings(tokens)
        for layer in self.layers:
            x = layer(x, cos, sin, mask)
        return self.norm(x)

    def logits(self, h: torch.Tensor) -> torch.Tensor:
        w = self.tok_embeddings.weight if self.output is None else self.output.weight
        return h @ w.t()

    def forward(self, tokens, pos=None, doc=None):
        return self.logits(self.hidden(tokens, pos, doc))

    def loss_at(self, tokens, pos, doc, at: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Mean cross-entropy of predicting targets at the flat positions `at` of tokens. The output
        projection is computed only there (most of a document is prompt, not target), and nothing
        waits for the device: the caller knows the positions."""
        h = self.hidden(tokens, pos, doc)
        logits = self.logits(h.flatten(0, 1)[at]).float()
        return F.cross_entropy(logits, targets)

    # -- weights as plain arrays, named as in GGUF --

    def gguf_state(self) -> dict:
        """{gguf tensor name: float32 numpy array} of every weight."""
        out = {}
        for name, t in self.state_dict().items():
            out[to_gguf_name(name)] = t.detach().float().cpu().numpy()
        return out

    def load_gguf_state(self, arrays: dict) -> None:
        sd = {}
        for name, t in self.state_dict().items():
            g = to_gguf_name(name)
            if g not in arrays:
                raise KeyError(f"weights lack {g}")
            a = torch.from_numpy(arrays[g].copy()).to(t.dtype)
            if a.shape != t.shape:
                raise ValueError(f"{g}: shape {tuple(a.shape)} but the config expects {tuple(t.shape)}")
            sd[name] = a
        self.load_state_dict(sd)


def compile_pointwise(model: Transformer) -> None:
    """torch.compile the memory-bound parts (norms, RoPE, SwiGLU) into fused kernels. Attention stays
    eager: its documents change every batch, and it already runs in one kernel."""
    rope = torch.compile(apply_rope, dynamic=True)
    for m in model.modules():
        if isinstance(m, Attention):
            m.rope = rope
        elif isinstance(m, (RMSNorm, FeedForward)):
            m.forward = torch.compile(m.forward, dynamic=True)


def to_gguf_name(name: str) -> str:
    parts = name.split(".")
    if parts[0] == "layers":
        key = "layers.%d." + ".".join(parts[2:])
        return GGUF_NAMES[key] % int(parts[1])
    return GGUF_NAMES[name]


@torch.no_grad()
def greedy(model: Transformer, ids: list[int], n: int) -> tuple[list[int], list[float]]:
    """n greedy tokens after ids, and at each step the gap between the best and second-best logit
    (a comparison with another runtime is only meaningful where that gap is not tiny)."""
    out, gaps = list(ids), []
    for _ in range(n):
        x = torch.tensor([out[-model.cfg.ctx:]])
        top = model(x)[0, -1].topk(2)
        out.append(int(top.indices[0]))
        gaps.append(float(top.values[0] - top.values[1]))
    return out[len(ids):], gaps


def load_trained(weights_dir: str, name: str = "model") -> Transformer:
    """A model from the weight parts that train.py writes (config in the manifest's meta)."""
    from training.gguf import read_tensors  # numpy-only reader
    meta, arrays = read_tensors(weights_dir, name)
    model = Transformer(ModelConfig.from_dict(meta["model"]))
    model.load_gguf_state(arrays)
    return model.eval()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m training.model")
    sub = ap.add_subparsers(dest="cmd", required=True)
    lg = sub.add_parser("logits", help="reference logits and greedy tokens for token-id prompts")
    lg.add_argument("--weights", required=True, help="directory written by train.py (or gguf.py --random --save-weights)")
    lg.add_argument("--name", default="model")
    lg.add_argument("--prompts", required=True, help="JSON list of token-id lists")
    lg.add_argument("--last", type=int, default=4, help="positions (from the end) whose logits are written")
    lg.add_argument("--greedy", type=int, default=8)
    lg.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    model = load_trained(a.weights, a.name)
    prompts = json.load(open(a.prompts))
    res = []
    with torch.no_grad():
        for p in prompts:
            logits = model(torch.tensor([p]))[0]
            last = logits[-a.last:]
            toks, gaps = greedy(model, p, a.greedy)
            res.append({"positions": list(range(len(p) - last.shape[0], len(p))), "logits": last.tolist(),
                        "greedy": toks, "gaps": gaps})
    json.dump(res, open(a.out, "w"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

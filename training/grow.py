"""Grow a trained model into a larger config without changing what it computes.

    python3 -m training.grow --from models/ndbg-base-28m.q8_0.gguf --config large --out grown.gguf [--type q8_0]

The grown model answers as the small one did (the same next tokens; only float rounding differs),
so it serves twice: `ndbg bench` on it times a larger model's step on real answers (a random model
of that size rambles until its token limit), and `training.train --init grown.gguf` starts the
larger model from everything the small one learned instead of from noise.

How the function is kept, in GGUF layout (rows are outputs, columns inputs):
- the residual stream gets new dimensions that start at zero and that nothing writes to at first:
  the embedding, and the rows of every attention output and FFN down projection for them, are zero;
- RMSNorm divides by the root mean square over all dimensions, so the old gains are scaled by
  sqrt(old dim / new dim) and its epsilon by old dim / new dim to give the old dimensions the
  same values;
- new attention heads and FFN units read with small random weights but write with zero ones
  (their columns of the output projections), so they add nothing, yet training moves them at once;
- new layers come after the old ones with zero output projections: each is the identity.
Head size must stay the same (the rotary embedding and the attention scale depend on it).
"""
from __future__ import annotations

import argparse
import math
import sys

import numpy as np

from .gguf import GGUFError, export, load_config, read_model

#: The scale of the random weights that read into new heads, units and layers (the trainer's init).
READ_STD = 0.02


class GrowError(Exception):
    pass


def grown_config(model: dict, target: dict) -> dict:
    """`target` with the RMSNorm epsilon that keeps `model`'s function (see the module's docstring)."""
    return {**target, "norm_eps": model.get("norm_eps", 1e-5) * model["dim"] / target["dim"]}


def grow(model: dict, arrays: dict[str, np.ndarray], target: dict, seed: int = 0) -> dict[str, np.ndarray]:
    """`arrays` (GGUF layout, of `model`) as weights of the larger `target` that compute the same
    function, given `grown_config(model, target)`'s epsilon."""
    d0, d1 = model["dim"], target["dim"]
    hd = d0 // model["n_heads"]
    checks = [
        (d1 >= d0, f"dim {d1} < {d0}"),
        (target["n_layers"] >= model["n_layers"], f"{target['n_layers']} layers < {model['n_layers']}"),
        (target["ffn_dim"] >= model["ffn_dim"], f"ffn_dim {target['ffn_dim']} < {model['ffn_dim']}"),
        (d1 // target["n_heads"] == hd and d1 % target["n_heads"] == 0, f"head size {d1 / target['n_heads']:g} is not {hd}"),
        (model.get("n_kv_heads", model["n_heads"]) == model["n_heads"] and target.get("n_kv_heads", target["n_heads"]) == target["n_heads"],
         "grouped-query attention is not supported"),
        (model.get("tie_embeddings", True) == target.get("tie_embeddings", True), "tied and untied embeddings differ"),
    ]
    for ok, why in checks:
        if not ok:
            raise GrowError(f"cannot grow {d0}x{model['n_layers']} into {d1}x{target['n_layers']}: {why}")
    rng = np.random.default_rng(seed)
    gain = np.float32(math.sqrt(d0 / d1))

    def pad(a: np.ndarray, rows: int, cols: int, reads: bool = False) -> np.ndarray:
        """`a` in a [rows, cols] matrix; the new part is zero, or small random weights for a matrix
        whose new rows and columns only read (`reads`)."""
        out = np.zeros((rows, cols), np.float32)
        if reads:
            out[a.shape[0]:, :] = rng.standard_normal((rows - a.shape[0], cols), dtype=np.float32) * READ_STD
            out[:, a.shape[1]:] = rng.standard_normal((rows, cols - a.shape[1]), dtype=np.float32) * READ_STD
        out[: a.shape[0], : a.shape[1]] = a
        return out

    def norm(a: np.ndarray) -> np.ndarray:
        out = np.full(d1, gain, np.float32)
        out[:d0] = a * gain
        return out

    ffn = target["ffn_dim"]
    out = {"token_embd.weight": pad(arrays["token_embd.weight"], arrays["token_embd.weight"].shape[0], d1),
           "output_norm.weight": norm(arrays["output_norm.weight"])}
    if "output.weight" in arrays:
        out["output.weight"] = pad(arrays["output.weight"], arrays["output.weight"].shape[0], d1)
    for i in range(target["n_layers"]):
        b = f"blk.{i}."
        if i < model["n_layers"]:
            old = {k[len(b):]: v for k, v in arrays.items() if k.startswith(b)}
        else:  # a new layer: reads like a fresh one, writes nothing (zero output projections)
            old = {"attn_norm.weight": np.ones(d0, np.float32), "ffn_norm.weight": np.ones(d0, np.float32),
                   **{k: np.zeros((0, 0), np.float32) for k in ("attn_q.weight", "attn_k.weight", "attn_v.weight",
                                                              "attn_output.weight", "ffn_gate.weight", "ffn_up.weight",
                                                              "ffn_down.weight")}}
        out.update({
            b + "attn_norm.weight": norm(old["attn_norm.weight"]),
            b + "ffn_norm.weight": norm(old["ffn_norm.weight"]),
            # q, k, v: new heads (rows) read with random weights; the new input dimensions are zero
            # at first, so what their columns hold changes nothing: random, to train from.
            **{b + k: pad(old[k], d1, d1, reads=True) for k in ("attn_q.weight", "attn_k.weight", "attn_v.weight")},
            # The output projection writes nothing new: zero rows (new dimensions), zero columns (new heads).
            b + "attn_output.weight": pad(old["attn_output.weight"], d1, d1),
            **{b + k: pad(old[k], ffn, d1, reads=True) for k in ("ffn_gate.weight", "ffn_up.weight")},
            b + "ffn_down.weight": pad(old["ffn_down.weight"], d1, ffn),
        })
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m training.grow", description=__doc__.split("\n\n")[0])
    ap.add_argument("--from", dest="source", required=True, metavar="GGUF", help="one of our native GGUFs")
    ap.add_argument("--config", required=True, help="the larger config (a name in training/configs or a path)")
    ap.add_argument("--out", required=True, help="the grown .gguf")
    ap.add_argument("--type", default="q8_0", choices=["f16", "q8_0", "f32"])
    ap.add_argument("--seed", type=int, default=0, help="for the random weights that only read")
    args = ap.parse_args(argv)
    try:
        model, tok, arrays, stats = read_model(args.source)
        target = grown_config(model, {**model, **{k: v for k, v in load_config(args.config)["model"].items() if k != "ctx"}})
        grown = grow(model, arrays, target, args.seed)
        # What the small model was trained on stays true of the grown one; its size does not.
        stats = {**stats, "params": int(sum(a.size for a in grown.values())), "config": args.config,
                 "grown_from": f"{model['dim']}x{model['n_layers']}, {stats.get('params', '?')} parameters"}
        res = export(grown, target, tok, args.out, args.type, stats=stats,
                     name=f"{model['dim']}x{model['n_layers']} grown to {target['dim']}x{target['n_layers']}")
    except (GGUFError, GrowError, OSError) as e:
        print(f"training.grow: {e}", file=sys.stderr)
        return 1
    print(f"training.grow: {args.out}: {res['params'] / 1e6:.1f}M parameters, {res['bytes'] / 1e6:.1f} MB ({args.type})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

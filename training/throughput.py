"""Training throughput of the trainer's own step, setting against setting, on one machine.

  python3 -m training.throughput --config base [--attention segments dense] [--compile off on]
      [--batch-tokens 131072 262144] [--steps 40] [--warmup-steps 8] [--data D.jsonl ...] [--out R.json]

Each setting builds a fresh model of the config and runs the trainer's step (make_batch,
train_step, the fused optimizer on CUDA) on documents of real lengths: those of --data (a tokenized
set, read through the trainer's cache) or, without it, lengths drawn like those of generated sessions
(log-normal, median ~350 tokens, cut at the context). Token values do not change the arithmetic, so
random ones are used. Reported per setting: median tokens/s over the timed steps, model TFLOP/s and
model FLOPs utilization (see train.py's model_flops), and peak GPU memory.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from training.gguf import load_config  # noqa: E402
from training.train import Docs, make_batch, make_optimizer, model_flops, peak_tflops, plan_epoch, train_step  # noqa: E402


def synthetic_docs(n: int, ctx: int, vocab: int, rng: np.random.Generator) -> Docs:
    lengths = np.clip(rng.lognormal(np.log(350), 0.7, size=n).astype(np.int64), 16, ctx)
    tokens = rng.integers(0, vocab, size=int(lengths.sum())).astype(np.uint16)
    mask = (rng.random(int(lengths.sum())) < 0.2).astype(np.uint8)  # about the share of target tokens in sessions
    data = {"tokens": tokens, "mask": mask, "offsets": np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
            "idhash": np.zeros(n, np.uint64)}
    return Docs(data, np.arange(n))


def measure(cfg: dict, docs: Docs, attention: str, compiled: bool, batch_tokens: int, steps: int, warmup: int, device: str) -> dict:
    import torch

    from training.model import ModelConfig, Transformer, compile_pointwise
    mcfg = ModelConfig.from_dict(cfg["model"] | {"vocab_size": cfg["train"].get("vocab", 4096)})
    torch.manual_seed(0)
    model = Transformer(mcfg).to(device)
    if compiled:
        compile_pointwise(model)
    opt = make_optimizer(model, cfg["train"], device)
    bf16 = device == "cuda"
    plan = plan_epoch(docs.length, mcfg.ctx, batch_tokens, np.random.default_rng(0))
    if len(plan) < steps + warmup:
        raise SystemExit(f"only {len(plan)} batches of {batch_tokens} tokens: give more documents")
    batches = [make_batch(docs, rows, attention) for rows in plan[:steps + warmup]]
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    rates, flops = [], []
    t_start = time.time()
    for i, b in enumerate(batches):
        if device == "cuda":
            torch.cuda.synchronize()
        t0 = time.time()
        train_step(model, opt, b, device, bf16)
        if device == "cuda":
            torch.cuda.synchronize()
        dt = time.time() - t0
        if i >= warmup:
            rates.append(b.n_tok / dt)
            flops.append(model_flops(mcfg, b) / dt)
    out = {"attention": attention, "compile": compiled, "batch_tokens": batch_tokens, "steps": steps,
           "tok_s": round(statistics.median(rates)), "tflops": round(statistics.median(flops) / 1e12, 1),
           "seconds": round(time.time() - t_start, 1), "params": model.num_params()}
    if device == "cuda":
        peak = peak_tflops(torch.cuda.get_device_name())
        if peak:
            out["mfu"] = round(out["tflops"] / peak, 3)
        out["gpu_mem_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 1)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m training.throughput", description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default="base")
    ap.add_argument("--attention", nargs="+", default=["segments", "dense"], choices=["segments", "dense"])
    ap.add_argument("--compile", nargs="+", default=["off"], choices=["off", "on"])
    ap.add_argument("--batch-tokens", nargs="+", type=int)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--warmup-steps", type=int, default=8)
    ap.add_argument("--docs", type=int, default=30000, help="synthetic documents (without --data)")
    ap.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    ap.add_argument("--out", help="also write the results here (JSON)")
    a = ap.parse_args(argv)
    import torch
    device = ("cuda" if torch.cuda.is_available() else "cpu") if a.device == "auto" else a.device
    if device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
    cfg = load_config(a.config)
    docs = synthetic_docs(a.docs, cfg["model"]["ctx"], cfg["train"].get("vocab", 4096), np.random.default_rng(0))
    results = []
    for bt in a.batch_tokens or [cfg["train"]["batch_tokens"]]:
        for att in a.attention:
            for comp in a.compile:
                try:
                    r = measure(cfg, docs, att, comp == "on", bt, a.steps, a.warmup_steps, device)
                except Exception as e:  # one setting failing (memory, a missing compiler) must not hide the others
                    r = {"attention": att, "compile": comp == "on", "batch_tokens": bt, "error": f"{type(e).__name__}: {e}"[:400]}
                    if device == "cuda":
                        torch.cuda.empty_cache()
                print(json.dumps(r), flush=True)
                results.append(r)
    meta = {"device": torch.cuda.get_device_name() if device == "cuda" else "cpu", "torch": torch.__version__, "config": a.config}
    if a.out:
        Path(a.out).write_text(json.dumps({"meta": meta, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

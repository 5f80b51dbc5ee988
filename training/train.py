"""Trains the native model on trajectories: loss only on the frames the model must predict.

  python3 -m training.train --data train.jsonl [--eval eval.jsonl] --config small --out runs/small \\
      [--tokenizer tok.json | --init MODEL.gguf] [--minutes 60] [--steps N] [--threads 2] [--device auto] [--resume]
      [--attention segments|dense] [--compile]

Data: JSONL lines {"id", "text", "targets": [[start, end], ...]} (`ndbg data`), plain or compressed
(.xz, .gz: ~15x smaller, for moving data to a GPU machine); targets are character spans of
predicted frames. The loss covers each target's tokens, the whitespace after
it and the <|action_sep|> that ends it (so generation stops there); a target with no
<|action_sep|> after it (the final exit) gets one appended. Each file is tokenized once (several
in parallel processes) into a cache of .npy arrays (uint16 tokens, uint8 loss mask, document offsets).

Batches hold whole documents (pools of shuffled documents, longest first, first fit) up to the
batch's token count; documents longer than the context are cut. Each document starts at position 0
and sees no other. With --attention segments (the default) a batch is one flat stream of
documents with no padding, and attention runs per document (the variable-length flash kernel on
CUDA); with --attention dense, documents are packed into rows as long as the longest one and
masked by a dense [B, 1, T, T] matrix (the reference: slower, and it keeps attention off the
flash kernel). A background thread builds the next batch in pinned memory while the GPU works,
and the loss is read back only at log steps, so the host never waits for the device in between.

Throughput is logged as tokens/s, model TFLOP/s (the model's own arithmetic: 6 per weight per
token, the output projection on target tokens only, and attention over the pairs each document
really attends) and, on a GPU whose peak is known, model FLOPs utilization (mfu).

Schedule: linear warmup, then cosine to min_lr over --steps, or over --minutes of training time
when no step count is given (both: whichever ends first). --minutes and --steps count the whole
run, across resumes. Outputs in --out: model.json + model.partNNN.bin (final fp32 weights, GGUF
tensor names, parts <= 16 MiB), tokenizer.json, log.jsonl, checkpoints/ (same part format, with
optimizer state, data position and RNG state; --resume continues from the latest one).

The best model: at every evaluation the held-out loss of `--best-on` (by default the held-out set
whose name holds "realcode", else the mean over every held-out set) decides, and the weights with
the lowest so far are written as best.json + best.partNNN.bin beside the last ones, their stats
naming the step (`checkpoint` best, `best_on`, `best_loss`; the last weights' stats name the best
step too). A continued run's held-out loss can rise on a small corpus seen again and again (real
code) while it keeps falling on the rest: both ends are kept, and the log's eval lines
(`eval_losses` per set) are the curve between them.

Several GPUs or machines: under torchrun (`python3 -m torch.distributed.run --nproc_per_node N -m
training.train ...`) each process trains on its shard of every global batch, DistributedDataParallel
averaging the gradients (training/distributed.py). --batch-tokens is then each process's: a step
takes one global batch of N times as many tokens, and the steps, the schedule and the tokens seen
count global batches. Each rank's loss is weighted by its share of the batch's targets, so the
weights move as one process's would on the whole batch. Rank 0 alone writes the log, checkpoints
and weights; held-out losses are summed over every rank's shard; the time budget is rank 0's clock.

Threads: --threads sets torch, OpenMP and OpenBLAS threads (of each process). On Debian, torch links the reference
BLAS; when /usr/lib/x86_64-linux-gnu/openblas-pthread exists the trainer restarts itself with it
on LD_LIBRARY_PATH (30x faster matrix products; NDBG_KEEP_BLAS=1 turns this off).
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import os
import shutil
import signal
import sys
import time
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import numpy as np

if __package__ in (None, ""):  # run as a script: make "training" importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from training import distributed  # noqa: E402
from training.gguf import GGUFError, load_config, read_model, read_tensors, write_tensors  # noqa: E402
from training.tokenizer import Tokenizer, TokenizerError, read_jsonl, read_texts, trajectory_header, train as train_tokenizer  # noqa: E402

OPENBLAS_DIR = "/usr/lib/x86_64-linux-gnu/openblas-pthread"
CACHE_VERSION = 3  # bump when what the token cache holds changes
REPO = Path(__file__).resolve().parent.parent


class TrainError(Exception):
    pass


# ---- tokenized data ----

def _byte_offsets(text: str, chars: list[int]) -> list[int]:
    if text.isascii():
        return list(chars)
    return [len(text[:c].encode("utf-8")) for c in chars]


def tokenize_record(tok: Tokenizer, rec: dict, where: str) -> tuple[list[int], list[int]]:
    """Token ids and loss mask of one record (see the module doc for what the loss covers)."""
    text = rec["text"]
    try:
        ids, offs = tok.encode_with_offsets(text)
    except UnicodeEncodeError as e:
        raise TrainError(f"{where}: text is not valid Unicode ({e})") from e
    targets = rec.get("targets")
    if targets is None:
        raise TrainError(f'{where}: record has no "targets" (character spans of the frames to predict)')
    spans = []
    for t in targets:
        if not (isinstance(t, list) and len(t) == 2 and 0 <= t[0] <= t[1] <= len(text)):
            raise TrainError(f"{where}: bad target span {t} (text has {len(text)} characters)")
        spans.append(tuple(_byte_offsets(text, t)))
    mask = [0] * len(ids)
    ws = tok.whitespace_ids
    extra_stop = False
    j = 0
    spans.sort()
    for bs, be in spans:
        while j < len(ids) and offs[j] < bs:
            j += 1
        k = j
        while k < len(ids) and offs[k] < be:
            mask[k] = 1
            k += 1
        if k == j:
            continue
        while k < len(ids) and ids[k] in ws:  # the newline that ends the frame
            mask[k] = 1
            k += 1
        if k < len(ids) and ids[k] == tok.stop_id:
            mask[k] = 1
        elif k == len(ids):
            extra_stop = True
    if extra_stop:
        ids.append(tok.stop_id)
        mask.append(1)
    return ids, mask


def _cache_dir(path: str, tok_key: str, cache_dir: Path) -> Path:
    """The cache folder of one data file, named by the tokenizer (tok_key) and the file's identity."""
    p = Path(path)
    try:
        st = p.stat()
    except OSError as e:
        raise TrainError(f"cannot read data {path}: {e}") from e
    key = tok_key + "-" + hashlib.sha256(f"{CACHE_VERSION}|{p.resolve()}|{st.st_size}|{st.st_mtime_ns}".encode()).hexdigest()[:12]
    return cache_dir / f"{p.stem}.{key}"


_ARRAYS = ("tokens", "mask", "offsets", "idhash")
_HEADERS = "headers.json"  # the trajectory format versions and Python versions of a file's texts, counted


def tokenize_file(path: str, tok_path: str, d: Path) -> dict:
    """Tokenizes one JSONL file into the cache folder d; returns the log record."""
    tok = Tokenizer.load(tok_path)
    if tok.vocab_size > 65535:
        raise TrainError("vocabularies above 65535 tokens do not fit the uint16 cache")
    t0 = time.time()
    toks, masks, offsets, idh, chars = [], [], [0], [], 0
    formats, pythons = Counter(), Counter()
    for n, rec in enumerate(read_jsonl(path), 1):
        fmt, python = trajectory_header(rec["text"], f"{path}:{n}")
        formats[fmt] += 1
        pythons[python or "unknown"] += 1
        ids, m = tokenize_record(tok, rec, f"{path}:{n}")
        toks.append(np.asarray(ids, dtype=np.uint16))
        masks.append(np.asarray(m, dtype=np.uint8))
        offsets.append(offsets[-1] + len(ids))
        chars += len(rec["text"])
        # samples of one program ("PROGRAM#k") share a hash, so a held-out split by hash holds out programs
        prog = str(rec.get("id", n)).split("#")[0]
        idh.append(int.from_bytes(hashlib.sha256(prog.encode()).digest()[:8], "little"))
    if not toks:
        raise TrainError(f"{path} holds no records")
    arrays = {"tokens": np.concatenate(toks), "mask": np.concatenate(masks),
              "offsets": np.asarray(offsets, dtype=np.int64), "idhash": np.asarray(idh, dtype=np.uint64)}
    tmp = d.with_name(d.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for n, a in arrays.items():
        np.save(tmp / f"{n}.npy", a)
    headers = {"formats": {str(k): v for k, v in sorted(formats.items())}, "python": dict(sorted(pythons.items()))}
    (tmp / _HEADERS).write_text(json.dumps(headers))
    shutil.rmtree(d, ignore_errors=True)
    os.replace(tmp, d)
    return {"event": "tokenized", "data": str(path), "docs": len(toks), **headers, "tokens": int(arrays["offsets"][-1]),
            "target_tokens": int(arrays["mask"].sum()), "chars_per_token": round(chars / max(int(arrays["offsets"][-1]), 1), 3),
            "seconds": round(time.time() - t0, 1), "cache": str(d)}


def load_data(paths: list[str], tok_path: str, cache_dir: Path, log) -> list[dict]:
    """{tokens uint16, mask uint8, offsets int64 [docs+1], idhash uint64} of each file: from the
    cache, or tokenized once into it (several files in parallel processes)."""
    tok_key = hashlib.sha256(Path(tok_path).read_bytes()).hexdigest()[:12]
    dirs = [_cache_dir(p, tok_key, cache_dir) for p in paths]
    todo = sorted({(p, d) for p, d in zip(paths, dirs) if not all((d / f"{n}.npy").exists() for n in _ARRAYS) or not (d / _HEADERS).exists()})
    if len(todo) == 1:
        log(tokenize_file(todo[0][0], tok_path, todo[0][1]))
    elif todo:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor
        # spawn, not fork: the parent may already hold torch's threads (and CUDA)
        with ProcessPoolExecutor(min(len(todo), os.cpu_count() or 1), mp_context=mp.get_context("spawn")) as pool:
            for rec in pool.map(tokenize_file, [p for p, _ in todo], [tok_path] * len(todo), [d for _, d in todo]):
                log(rec)
    return [{**{n: np.load(d / f"{n}.npy", mmap_mode="r") for n in _ARRAYS}, "headers": json.loads((d / _HEADERS).read_text())} for d in dirs]


def data_versions(sets: list[dict], prior: dict | None = None) -> dict:
    """What a model trained on `sets` speaks: the newest trajectory format among its texts, and the
    Python versions their headers name (with those of the model it continues); version 1 texts
    name none. Written into the GGUF (ndbg.format_version, ndbg.train.python_versions), whence
    the adapter knows which prompt header and which versions the model knows."""
    formats = {int(k) for s in sets for k in s["headers"]["formats"]}
    pythons = {v for s in sets for v in s["headers"]["python"] if v != "unknown"}
    if prior and prior.get("python_versions"):
        pythons |= set(str(prior["python_versions"]).split(","))
    out = {"format_version": max(formats | {int((prior or {}).get("format_version", 1))})}
    if pythons:
        out["python_versions"] = ",".join(sorted(pythons, key=lambda v: int(v.split(".")[1])))
    return out


class Docs:
    """A view of some documents of a tokenized set."""

    def __init__(self, data: dict, index: np.ndarray):
        self.data, self.index = data, index
        off = data["offsets"]
        self.start = off[index]
        self.length = off[index + 1] - off[index]

    def __len__(self):
        return len(self.index)


def plan_epoch(lengths: np.ndarray, ctx: int, batch_tokens: int, rng: np.random.Generator) -> list[list[list[tuple[int, int]]]]:
    """Batches of rows of (doc, length) for one epoch: pools of shuffled documents are packed
    longest first; each batch's rows are as long as its longest document, and shorter
    documents fill the rest of its rows (largest that fits first)."""
    import bisect
    order = rng.permutation(len(lengths))
    batches = []
    pool_size = 4096
    for p in range(0, len(order), pool_size):
        pool = sorted((min(int(lengths[i]), ctx), int(i)) for i in order[p:p + pool_size] if lengths[i] > 1)
        while pool:
            R = pool[-1][0]
            n_rows = max(1, batch_tokens // R)
            rows = []
            for _ in range(n_rows):
                if not pool:
                    break
                row, room = [], R
                while pool:
                    k = bisect.bisect_right(pool, (room, len(lengths))) - 1
                    if k < 0:
                        break
                    L, i = pool.pop(k)
                    row.append((i, L))
                    room -= L
                rows.append(row)
            batches.append(rows)
    rng.shuffle(batches)
    return batches


def build_batch(docs: Docs, rows: list[list[tuple[int, int]]]):
    """numpy arrays tokens, pos, doc, labels [B, R] for rows of (doc, length); labels are -100 off target."""
    R = max(sum(L for _, L in row) for row in rows)
    B = len(rows)
    tokens = np.zeros((B, R), np.int64)
    pos = np.zeros((B, R), np.int64)
    doc = np.full((B, R), -1, np.int64)
    labels = np.full((B, R), -100, np.int64)
    T, M = docs.data["tokens"], docs.data["mask"]
    packed = False
    for b, row in enumerate(rows):
        c = 0
        packed |= len(row) > 1
        for n, (i, L) in enumerate(row):
            s = int(docs.start[i])
            t = np.asarray(T[s:s + L], dtype=np.int64)
            m = np.asarray(M[s:s + L])
            tokens[b, c:c + L] = t
            pos[b, c:c + L] = np.arange(L)
            doc[b, c:c + L] = n
            lab = np.where(m[1:] > 0, t[1:], -100)
            labels[b, c:c + L - 1] = lab
            c += L
    return tokens, pos, (doc if packed else None), labels



class Batch:
    """One training batch as the model takes it: tokens, pos, doc (None, a [B, T] document number
    per position, or Segments), and the flat positions `at` whose next token `targets` is learned."""

    def __init__(self, tokens, pos, doc, labels, n_tok: int, pairs: int):
        flat = labels.reshape(-1)
        self.at = np.nonzero(flat >= 0)[0]
        self.targets = flat[self.at]
        self.tokens, self.pos, self.doc = tokens, pos, doc
        self.n_tok, self.n_tgt, self.pairs = n_tok, len(self.at), pairs

    def to(self, device: str) -> tuple:
        """(tokens, pos, doc, at, targets) as tensors on device (through pinned memory on CUDA)."""
        import torch

        def put(a):
            t = torch.from_numpy(np.ascontiguousarray(a))
            return t.pin_memory().to(device, non_blocking=True) if device == "cuda" else t
        doc = put(self.doc) if isinstance(self.doc, np.ndarray) else self.doc
        return put(self.tokens), put(self.pos), doc, put(self.at), put(self.targets)


def make_batch(docs: Docs, rows: list[list[tuple[int, int]]], attention: str) -> Batch:
    """The batch of planned rows: rows as they are (dense), or their documents in one stream (segments)."""
    from training.model import Segments
    lengths = [L for row in rows for _, L in row]
    pairs = sum(L * (L + 1) // 2 for L in lengths)
    if attention == "dense":
        tokens, pos, doc, labels = build_batch(docs, rows)
        return Batch(tokens, pos, doc, labels, sum(lengths), pairs)
    tokens, pos, _, labels = build_batch(docs, [[d for row in rows for d in row]])
    return Batch(tokens, pos, Segments(np.concatenate([[0], np.cumsum(lengths)]).tolist()), labels, sum(lengths), pairs)


class Totals:
    """A global batch's counts where each rank holds a part of it (tokens seen, FLOPs, the loss's divisor)."""

    def __init__(self, n_tok: int, n_tgt: int, pairs: int):
        self.n_tok, self.n_tgt, self.pairs = n_tok, n_tgt, pairs


def rank_batch(docs: Docs, rows: list[list[tuple[int, int]]], attention: str,
               world: distributed.World) -> tuple[Batch | None, Batch | Totals]:
    """This rank's shard of a planned global batch (None where it gets no document), and the global
    batch's totals; one process takes the whole batch. Every rank plans the same batches, so each
    counts the others' targets from the loss mask, with no message between them."""
    if not world.on:
        b = make_batch(docs, rows, attention)
        return b, b
    mine = distributed.shard(rows, world, attention)
    M = docs.data["mask"]
    every = [(int(docs.start[i]), L) for row in rows for i, L in row]
    # a document's targets are the tokens after its first whose mask is set (build_batch's labels)
    whole = Totals(sum(L for _, L in every), sum(int(np.count_nonzero(M[s + 1:s + L])) for s, L in every),
                   sum(L * (L + 1) // 2 for _, L in every))
    return (make_batch(docs, mine, attention) if mine else None), whole


def batch_loss(model, batch: Batch, device: str, bf16: bool):
    """The mean loss of a batch's targets, left on the device."""
    import torch
    tokens, pos, doc, at, targets = batch.to(device)
    with torch.autocast("cuda", dtype=torch.bfloat16) if bf16 else contextlib.nullcontext():
        if isinstance(model, torch.nn.parallel.DistributedDataParallel):  # its forward is the loss
            return model(tokens, pos, doc, at, targets)
        return model.loss_at(tokens, pos, doc, at, targets)


def train_step(model, opt, batch: Batch, device: str, bf16: bool):
    """One optimizer step (gradients clipped to norm 1); the loss, still on the device, or None for a
    batch without targets (possible only in tiny data), which teaches nothing."""
    import torch
    if not batch.n_tgt:
        return None
    loss = batch_loss(model, batch, device, bf16)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    return loss.detach()


# What a rank with no targets in its shard runs: one token, its loss weighted 0. DDP waits for every
# rank's gradients, so each one runs forward and backward at every step; zeros change nothing.
_IDLE = None


def _idle_batch() -> Batch:
    global _IDLE
    if _IDLE is None:
        z = np.zeros((1, 1), np.int64)
        _IDLE = Batch(z, z, None, z, 0, 0)
    return _IDLE


def train_step_ranks(ddp, model, opt, batch: Batch | None, whole, world_size: int, device: str, bf16: bool):
    """One optimizer step of a global batch `whole` (its totals) of which `batch` is this rank's shard
    (None: no document). Each rank's loss is the mean over its targets weighted by its share of the
    global batch's targets, times the number of ranks, which DDP's averaging divides away: the
    gradient is that of the mean over every target of the global batch, as one process would take
    it. Returns this rank's part of that mean (summed over ranks at log steps), or None for a global
    batch without targets, which every rank skips alike."""
    import torch
    if not whole.n_tgt:
        return None
    share = batch.n_tgt / whole.n_tgt if batch is not None and batch.n_tgt else 0.0
    loss = batch_loss(ddp, batch if share else _idle_batch(), device, bf16)
    opt.zero_grad(set_to_none=True)
    (loss * (share * world_size)).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    return (loss * share).detach()


def make_optimizer(model, tc: dict, device: str):
    """AdamW, weight decay on matrices only; fused (one kernel for every parameter) on CUDA."""
    import torch
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    fused = {"fused": True} if device == "cuda" else {}
    return torch.optim.AdamW([{"params": decay, "weight_decay": tc.get("weight_decay", 0.1)},
                              {"params": no_decay, "weight_decay": 0.0}],
                             lr=tc["lr"], betas=(0.9, 0.95), eps=1e-8, **fused)


def model_flops(mcfg, batch: Batch) -> float:
    """Training arithmetic of one batch (forward and backward: 3x the forward's 2 per multiply-add)."""
    d, L = mcfg.dim, mcfg.n_layers
    kv = mcfg.n_kv_heads * mcfg.head_dim
    per_token = L * (d * d * 2 + d * kv * 2 + 3 * d * mcfg.ffn_dim)  # q, o; k, v; gate, up, down
    attn = L * 2 * d * batch.pairs  # q.k and p.v for each attended pair, per layer
    out = d * mcfg.vocab_size * batch.n_tgt
    return 6.0 * (per_token * batch.n_tok + attn + out)


# Dense bf16 peak of the GPUs we train on (TFLOP/s, the vendor's figure), for model FLOPs utilization.
PEAK_TFLOPS = {"H100": 989.0, "H200": 989.0, "A100": 312.0}


def peak_tflops(device_name: str) -> float | None:
    return next((v for k, v in PEAK_TFLOPS.items() if k in device_name), None)


class Prefetcher:
    """Builds batches in a background thread, `ahead` at most, so the GPU never waits for the host."""

    def __init__(self, make, ahead: int = 3):
        import queue
        import threading
        self.q: "queue.Queue" = queue.Queue(maxsize=ahead)
        self.make = make
        self.done = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        try:
            while not self.done:
                self.q.put(self.make())
        except BaseException as e:  # handed to the consumer, which raises it
            self.q.put(e)

    def next(self):
        item = self.q.get()
        if isinstance(item, BaseException):
            raise item
        return item

    def close(self):
        self.done = True
        while self.thread.is_alive():
            try:
                self.q.get_nowait()
            except Exception:
                self.thread.join(0.05)

# ---- training ----

def _reexec_with_openblas(device: str) -> None:
    """Restarts this process with OpenBLAS when torch would otherwise use Debian's reference BLAS."""
    if device == "cuda" or os.environ.get("NDBG_KEEP_BLAS") or not os.path.isdir(OPENBLAS_DIR):
        return
    if OPENBLAS_DIR in os.environ.get("LD_LIBRARY_PATH", "").split(":"):
        return
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = ":".join(x for x in (OPENBLAS_DIR, env.get("LD_LIBRARY_PATH")) if x)
    env["PYTHONPATH"] = ":".join(x for x in (str(REPO), env.get("PYTHONPATH")) if x)
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable, "-m", "training.train", *sys.argv[1:]], env)


def lr_at(progress: float, step: int, tc: dict) -> float:
    if step < tc["warmup"]:
        return tc["lr"] * (step + 1) / tc["warmup"]
    p = min(max(progress, 0.0), 1.0)
    lo = tc["lr"] * tc.get("min_lr_frac", 0.1)
    return lo + (tc["lr"] - lo) * 0.5 * (1 + math.cos(math.pi * p))


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="python3 -m training.train", description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", action="append", required=True, help="training JSONL (repeatable)")
    ap.add_argument("--eval", action="append", help="held-out JSONL (default: --eval-frac of --data, by id)")
    ap.add_argument("--eval-frac", type=float, default=0.02, help="without --eval: this share of programs (id before '#') is held out")
    ap.add_argument("--config", default="tiny", help="training/configs/NAME.json or a path")
    ap.add_argument("--out", required=True)
    ap.add_argument("--tokenizer", help="tokenizer JSON (default: OUT/tokenizer.json, trained on --data if absent)")
    ap.add_argument("--init", metavar="GGUF", help="continue from a native GGUF (e.g. the bundled model): its weights, "
                    "architecture and tokenizer; --config then gives only the training settings")
    ap.add_argument("--vocab", type=int, help="vocabulary size when training the tokenizer (default: the config's)")
    ap.add_argument("--minutes", type=float, help="training-time budget of the whole run")
    ap.add_argument("--steps", type=int, help="optimizer steps of the whole run (default: the config's)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    ap.add_argument("--resume", action="store_true", help="continue from OUT/checkpoints/latest")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch-tokens", type=int)
    ap.add_argument("--lr", type=float)
    ap.add_argument("--warmup", type=int, help="warmup steps (default: the config's; short when continuing with --init)")
    ap.add_argument("--eval-every", type=int)
    ap.add_argument("--ckpt-every", type=int)
    ap.add_argument("--log-every", type=int)
    ap.add_argument("--keep", type=int, default=2, help="checkpoints kept")
    ap.add_argument("--cache", help="token cache folder (default: OUT/cache)")
    ap.add_argument("--attention", default="segments", choices=["segments", "dense"],
                    help="documents as one flat stream attended per document (default), or rows with a dense mask (the reference)")
    ap.add_argument("--compile", action="store_true", help="torch.compile the model's pointwise parts (PyTorch 2, CUDA)")
    ap.add_argument("--name", help="model name written into the weights and GGUF")
    ap.add_argument("--best-on", default="auto", help="the held-out set whose loss picks the best weights (best.json): "
                    "a set's name (e-realcode), 'all' (the mean over every set) or 'none'; auto: the set whose name "
                    "holds 'realcode', else all")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv if argv is not None else sys.argv[1:])
    for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[v] = str(args.threads)
    if args.device != "cuda":
        _reexec_with_openblas(args.device)
    world = distributed.from_env()  # one process, or one of those torchrun started
    try:
        return run(args, world)
    except (TrainError, TokenizerError, GGUFError) as e:
        print(f"error: {e}" if not world.on else f"error (rank {world.rank}): {e}", file=sys.stderr)
        return 1
    finally:
        distributed.finish(world)


def run(args, world: distributed.World | None = None) -> int:
    """One training run: the set-up (device, config, tokenizer, data, model and optimizer, where a
    resumed run left off), then the Trainer's loop."""
    import torch  # noqa: F401 (where PyTorch is absent, the run fails here, before it writes anything)

    world = world or distributed.World()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = RunLog(out / "log.jsonl" if world.writer else None)
    device = _start_device(args, world)
    resume = _latest_checkpoint(args, world, out / "checkpoints")
    cfg, checkpoint, init_arrays = _run_config(args, out, resume, world)
    tc = _train_config(args, cfg)
    tok_path = _shared_tokenizer(args, tc, out, resume, world, log)
    corpus = _corpus(args, out, tok_path, world, log)
    model, opt = _model(args, cfg, tc, corpus.tok, device, init_arrays, log)
    # The run's progress, kept in checkpoints: steps, training time, what was seen, where the data stands.
    state = {"step": 0, "elapsed": 0.0, "tokens": 0, "target_tokens": 0, "epoch": 0, "batch": 0, "first_loss": None,
             "best": None}
    if resume:
        meta, arrays = checkpoint
        _restore(model, opt, arrays, meta, state)
        log({"event": "resumed", "checkpoint": str(resume), **state})
    use_bf16 = _ready_for_device(args, model, device)
    trainer = Trainer(args, world, log, device, use_bf16, cfg, tc, corpus, model, opt, state)
    return trainer.train()


# ---- the set-up ----

class RunLog:
    """log.jsonl in --out, each record printed too: one JSON object a line, stamped with the time.
    One log, rank 0's: with no path (the other ranks) records go nowhere."""

    def __init__(self, path: Path | None):
        self.file = open(path, "a") if path else None

    def __call__(self, rec: dict) -> None:
        if self.file is None:
            return
        rec = {"t": round(time.time(), 1), **rec}
        line = json.dumps(rec)
        print(line, flush=True)
        self.file.write(line + "\n")
        self.file.flush()

    def close(self) -> None:
        self.file.close()


def _start_device(args, world: distributed.World) -> str:
    """Torch's threads, the device ("cuda" or "cpu"), and under torchrun the process group."""
    import torch
    torch.set_num_threads(args.threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    if args.device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    else:
        device = args.device
    if device == "cuda" and not torch.cuda.is_available():
        raise TrainError("--device cuda but no CUDA device is available")
    if world.on:
        distributed.start(world, device)
    return device


def _latest_checkpoint(args, world: distributed.World, ckpt_root: Path) -> Path | None:
    """With --resume, the checkpoint to continue from (ckpt_root/latest names it), the same on every rank."""
    resume = None
    if args.resume and (ckpt_root / "latest").exists():
        resume = ckpt_root / (ckpt_root / "latest").read_text().strip()
    if world.on:  # every rank continues from rank 0's checkpoint, or none does
        name = distributed.from_rank0(world, resume.name if resume else "")
        if name != (resume.name if resume else ""):
            raise TrainError(f"rank 0 resumes from {name or 'no checkpoint'}, this rank finds {resume or 'none'} in {ckpt_root}: "
                             "with --resume every machine needs rank 0's --out")
    return resume


def _run_config(args, out: Path, resume: Path | None, world: distributed.World) -> tuple[dict, tuple | None, dict | None]:
    """The run's config, the checkpoint read (its metadata and arrays) and --init's weights: a
    resumed run's config is its checkpoint's; else --config's, where --init's GGUF gives the model's
    architecture (its weights returned, its tokenizer written to OUT, its stats kept in "init")."""
    checkpoint = None
    if resume:
        checkpoint = read_tensors(resume, "ckpt")
        cfg = checkpoint[0]["config"]
    else:
        cfg = load_config(args.config)
    init_arrays = None
    if args.init and not resume:
        if args.tokenizer:
            raise TrainError("--init brings its own tokenizer: leave out --tokenizer")
        try:
            init_model, init_tok, init_arrays, prior = read_model(args.init)
        except (OSError, KeyError) as e:
            raise TrainError(f"cannot continue from {args.init}: {e}") from e
        cfg = {**cfg, "model": {**cfg["model"], **init_model},
               "init": {"from": Path(args.init).name, "stats": {k: v for k, v in prior.items() if k in _CUMULATIVE or k in _SPOKEN}}}
        if world.writer:
            (out / "tokenizer.json").write_text(json.dumps(init_tok, ensure_ascii=False), encoding="utf-8")
    return cfg, checkpoint, init_arrays


def _train_config(args, cfg: dict) -> dict:
    """The config's training settings, the command line's over them; a run needs a length (steps or minutes)."""
    tc = dict(cfg.get("train", {}))
    for k, v in (("batch_tokens", args.batch_tokens), ("lr", args.lr), ("warmup", args.warmup), ("eval_every", args.eval_every),
                 ("ckpt_every", args.ckpt_every), ("log_every", args.log_every), ("steps", args.steps)):
        if v is not None:
            tc[k] = v
    tc.setdefault("warmup", 100)
    tc.setdefault("batch_tokens", 8192)
    tc.setdefault("lr", 1e-3)
    if not tc.get("steps") and not args.minutes:
        raise TrainError("give --steps or --minutes (the config sets no step count)")
    return tc


def _shared_tokenizer(args, tc: dict, out: Path, resume: Path | None, world: distributed.World, log) -> Path:
    """OUT/tokenizer.json: rank 0's (given, kept from an earlier run, or trained now), on every machine."""
    tok_path = out / "tokenizer.json"
    if world.writer:
        _make_tokenizer(args, tc, tok_path, resume, log)
    if world.on:  # rank 0's tokenizer on every machine (another machine's --out is its own folder)
        raw = distributed.from_rank0(world, tok_path.read_bytes() if world.writer else None)
        if world.local_rank == 0 and not world.writer and (not tok_path.exists() or tok_path.read_bytes() != raw):
            tmp = tok_path.with_name(f"{tok_path.name}.{os.getpid()}.tmp")
            tmp.write_bytes(raw)
            os.replace(tmp, tok_path)
    return tok_path


class Corpus(NamedTuple):
    """The tokenized data of a run."""
    tok: Tokenizer
    train_sets: list  # each --data file's arrays
    data: dict  # the training arrays (those of every --data file, one after the other)
    train_docs: Docs
    eval_parts: list  # [(name, Docs)]: each held-out set


def _corpus(args, out: Path, tok_path: Path, world: distributed.World, log) -> Corpus:
    """--data and --eval tokenized (through the cache), and the documents trained on and held out:
    each --eval file a set of its own, else --eval-frac of the programs of --data."""
    cache = Path(args.cache) if args.cache else out / "cache"
    # one process on each machine tokenizes into the cache; the others then read it from there
    sets = load_data(args.data + (args.eval or []), str(tok_path), cache, log) if world.local_rank == 0 else None
    distributed.barrier(world)
    if sets is None:
        sets = load_data(args.data + (args.eval or []), str(tok_path), cache, log)
    tok = Tokenizer.load(tok_path)
    train_sets, ev_sets = sets[:len(args.data)], sets[len(args.data):]
    data = _concat(train_sets) if len(train_sets) > 1 else train_sets[0]
    all_idx = np.arange(len(data["offsets"]) - 1)
    if args.eval:  # each held-out file evaluated on its own too (generated programs and real code learn differently)
        train_docs = Docs(data, all_idx)
        eval_parts = [(_set_name(p), Docs(d, np.arange(len(d["offsets"]) - 1))) for p, d in zip(args.eval, ev_sets)]
    else:
        held = (np.asarray(data["idhash"]) % 10000) < int(args.eval_frac * 10000)
        train_docs = Docs(data, all_idx[~held])
        eval_parts = [("held-out", Docs(data, all_idx[held]))]
    if len(train_docs) == 0:
        raise TrainError("no training documents")
    return Corpus(tok, train_sets, data, train_docs, eval_parts)


def _model(args, cfg: dict, tc: dict, tok: Tokenizer, device: str, init_arrays: dict | None, log):
    """The model (seeded with --seed, or --init's weights) on the device, and its optimizer."""
    import torch

    from training.model import ModelConfig, Transformer
    mcfg = ModelConfig.from_dict({**cfg["model"], "vocab_size": tok.vocab_size})
    torch.manual_seed(args.seed)
    model = Transformer(mcfg).to(device)
    if init_arrays is not None:
        try:
            model.load_gguf_state(init_arrays)
        except (KeyError, ValueError) as e:
            raise TrainError(f"cannot continue from {args.init}: {e}") from e
        log({"event": "init", "from": args.init, **cfg["init"]["stats"]})
    return model, make_optimizer(model, tc, device)


def _ready_for_device(args, model, device: str) -> bool:
    """--compile, and TF32 matrix products on CUDA; whether the steps run in bf16 (CUDA that has it)."""
    import torch

    from training.model import compile_pointwise
    if args.compile:
        if not hasattr(torch, "compile"):
            raise TrainError(f"--compile needs PyTorch 2 (this is {torch.__version__})")
        compile_pointwise(model)
    use_bf16 = device == "cuda" and torch.cuda.is_bf16_supported()
    if device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    return use_bf16


def _eval_batches(eval_parts: list, ctx: int, global_tokens: int, attention: str, world: distributed.World,
                  eval_tokens: int) -> dict[str, list[Batch]]:
    """Up to eval_tokens of each held-out set, the same batches at every evaluation (each rank its shard of every batch)."""
    eval_batches: dict[str, list[Batch]] = {}
    for name, docs in eval_parts:
        eval_batches[name] = []
        n_tok = 0
        for rows in plan_epoch(docs.length, ctx, global_tokens, np.random.default_rng(1234)) if len(docs) else []:
            mine, whole = rank_batch(docs, rows, attention, world)
            if mine is not None:
                eval_batches[name].append(mine)
            n_tok += whole.n_tok
            if n_tok >= eval_tokens:
                break
    return eval_batches


def _best_on(best_on: str, names: list[str]) -> str:
    """--best-on resolved against the held-out sets' names: a set's name, "all" or "none"."""
    if best_on == "auto":
        return next((n for n in names if "realcode" in n), "all")
    if best_on not in ("all", "none") and best_on not in names:
        raise TrainError(f"--best-on {best_on}: no held-out set of that name (sets: {', '.join(names) or 'none'})")
    return best_on


# ---- the loop ----

class _Window:
    """The steps since the last log line: when it began, their tokens, targets and FLOPs, and their
    summed loss, left on the device until the log line reads it."""

    def __init__(self, device: str):
        import torch
        self.t = time.time()
        self.tok, self.tgt, self.flops, self.n = 0, 0, 0.0, 0
        self.loss = torch.zeros((), device=device)


class Trainer:
    """The training loop over what run() set up. Until the run's steps or minutes are spent (or
    SIGTERM or SIGINT stops it): take a batch, step, and at their intervals log, evaluate (keeping
    the best weights) and checkpoint. Then a last evaluation, checkpoint and the last weights."""

    def __init__(self, args, world: distributed.World, log: RunLog, device: str, use_bf16: bool, cfg: dict, tc: dict,
                 corpus: Corpus, model, opt, state: dict):
        import torch
        self.args, self.world, self.log = args, world, log
        self.device, self.use_bf16 = device, use_bf16
        self.cfg, self.tc, self.corpus = cfg, tc, corpus
        self.model, self.opt, self.state = model, opt, state
        self.mcfg = model.cfg
        self.n_params = model.num_params()
        self.out = Path(args.out)
        self.ckpt_root = self.out / "checkpoints"
        self.total_steps = tc.get("steps")
        self.budget = args.minutes * 60 if args.minutes else None
        # --batch-tokens is each rank's: a step takes one global batch of them all, and the schedule, the step
        # count and the tokens seen count global batches
        self.global_tokens = tc["batch_tokens"] * world.size
        self.eval_batches = _eval_batches(corpus.eval_parts, self.mcfg.ctx, self.global_tokens, args.attention, world,
                                          tc.get("eval_tokens", 65536))
        self.best_on = _best_on(args.best_on, [n for n, _ in corpus.eval_parts])
        self.name = args.name or f"ndbg-{cfg.get('name', 'model')}"
        self.gpu = torch.cuda.get_device_name() if device == "cuda" else None
        self.peak = peak_tflops(self.gpu) if self.gpu else None
        self.stop = False  # a signal asked the run to end (it ends as if its time were up)
        self.lv = float("nan")  # the training loss of the last log line
        self.evaluated_at = None  # the step of the last evaluation
        self.window: _Window | None = None
        self.t_last = 0.0  # where the training time was last counted

    def train(self) -> int:
        """The loop, then the end (finish); 0, the command's exit code."""
        self.log_start()
        self.catch_signals()
        ddp = distributed.wrap(self.model, self.world) if self.world.on else None
        source = self.batches(self.state["epoch"], self.state["batch"])
        feed = Prefetcher(lambda: next(source))
        self.model.train()
        self.window = _Window(self.device)
        self.t_last = time.time()
        try:
            while not self.finished():
                epoch, index, batch, whole = feed.next()  # this rank's shard of a global batch, and the global batch's totals
                lr = self.step(ddp, batch, whole)
                self.state["epoch"], self.state["batch"] = epoch, index + 1  # where a resumed run takes the data up
                at_log = self.state["step"] % self.tc.get("log_every", 10) == 0 or self.state["step"] == 1
                now = self.count_time(wait=at_log)
                if at_log:
                    self.log_window(lr, batch, now)
                aside = time.time()
                if self.due("eval_every"):
                    eval_loss, each = self.evaluate_and_log()
                    self.consider_best(eval_loss, each, self.window_loss() if self.window.n else self.lv)
                if self.due("ckpt_every") and self.world.writer:
                    self.checkpoint()
                self.t_last = time.time()  # logging, evaluation and checkpoints are not training time
                self.window.t += self.t_last - aside
        finally:
            feed.close()
        return self.finish()

    # ---- the steps of the loop ----

    def finished(self) -> bool:
        if self.world.on:  # rank 0's clock and stop flag: every rank takes the same learning rate and ends at the same step
            self.state["elapsed"], self.stop = distributed.agree_clock(self.world, self.state["elapsed"], self.stop)
        return self.progress() >= 1.0 or self.stop

    def progress(self) -> float:
        """How much of the run is done (0 to 1): of its steps, or of its minutes, whichever is further."""
        p = 0.0
        if self.total_steps:
            p = max(p, self.state["step"] / self.total_steps)
        if self.budget:
            p = max(p, self.state["elapsed"] / self.budget)
        return p

    def due(self, every: str) -> bool:
        """Whether this step is one of the config's `every` steps ("eval_every", "ckpt_every"; none where unset)."""
        return bool(self.tc.get(every)) and self.state["step"] % self.tc[every] == 0

    def batches(self, epoch: int, start: int):
        """(epoch, index, this rank's Batch, the global batch's totals) from a position of the plan on, epoch after epoch."""
        docs = self.corpus.train_docs
        while True:
            plan = plan_epoch(docs.length, self.mcfg.ctx, self.global_tokens, np.random.default_rng([self.args.seed, epoch]))
            for i in range(start, len(plan)):
                yield (epoch, i, *rank_batch(docs, plan[i], self.args.attention, self.world))
            epoch, start = epoch + 1, 0

    def step(self, ddp, batch: Batch | None, whole) -> float:
        """One optimizer step at the schedule's learning rate (returned), counted in the run and the log window."""
        state, win = self.state, self.window
        lr = lr_at(self.progress(), state["step"], self.tc)
        for g in self.opt.param_groups:
            g["lr"] = lr
        if ddp is None:
            loss = train_step(self.model, self.opt, batch, self.device, self.use_bf16)
        else:
            loss = train_step_ranks(ddp, self.model, self.opt, batch, whole, self.world.size, self.device, self.use_bf16)
        if loss is not None:
            win.loss += loss
            win.n += 1
        state["step"] += 1
        state["tokens"] += whole.n_tok
        state["target_tokens"] += whole.n_tgt
        win.tok += whole.n_tok
        win.tgt += whole.n_tgt
        win.flops += model_flops(self.mcfg, whole)
        return lr

    def count_time(self, wait: bool) -> float:
        """Adds the time since it was last counted to the run's training time; returns the time now.
        `wait`: at a log step, where the device is waited for first (time and loss are read there)."""
        import torch
        if wait and self.device == "cuda":
            torch.cuda.synchronize()  # the only wait for the device
        now = time.time()
        self.state["elapsed"] += now - self.t_last
        self.t_last = now
        return now

    def log_window(self, lr: float, batch: Batch | None, now: float) -> None:
        """The log line of the steps since the last: their loss, the learning rate, throughput; a new window."""
        state, win = self.state, self.window
        dt = max(now - win.t, 1e-9)
        self.lv = self.window_loss()
        if not math.isfinite(self.lv):
            raise TrainError(f"loss became {self.lv} by step {state['step']}; lower --lr")
        if state["first_loss"] is None:
            state["first_loss"] = self.lv
        rec = {"step": state["step"], "loss": round(self.lv, 4), "lr": round(lr, 6), "tok_s": round(win.tok / dt),
               "target_tok_s": round(win.tgt / dt), "tflops": round(win.flops / dt / 1e12, 1)}
        if self.peak:  # of every GPU together
            rec["mfu"] = round(win.flops / dt / 1e12 / (self.peak * self.world.size), 3)
        rows, row_len = batch.tokens.shape if batch is not None else (0, 0)
        self.log({**rec, "rows": rows, "row_len": row_len, "epoch": state["epoch"], "elapsed_min": round(state["elapsed"] / 60, 2)})
        self.window = _Window(self.device)

    def window_loss(self) -> float:
        """The mean training loss of the steps since the last log line (under DDP each rank holds its part of it)."""
        total = self.window.loss
        if self.world.on:
            total = total.clone()
            distributed.all_sum(self.world, total, self.device)
        return float(total) / max(self.window.n, 1)

    def evaluate_and_log(self) -> tuple[float | None, dict]:
        """The held-out losses now (the mean and each set's), logged once a step (at the end, unless
        the last step was evaluated: the end of the curve)."""
        eval_loss, each = self.evaluate()
        if self.evaluated_at != self.state["step"]:
            self.evaluated_at = self.state["step"]
            self.log({"step": self.state["step"], "eval_loss": eval_loss, **({"eval_losses": each} if len(each) > 1 else {})})
        return eval_loss, each

    def evaluate(self) -> tuple[float | None, dict]:
        """The mean target loss over every held-out set, and each set's."""
        import torch
        self.model.eval()
        tot, n, each = 0.0, 0, {}
        with torch.no_grad():
            for name, batches in self.eval_batches.items():
                t, k = 0.0, 0
                for b in batches:
                    if b.n_tgt:
                        t += float(batch_loss(self.model, b, self.device, self.use_bf16)) * b.n_tgt
                        k += b.n_tgt
                if self.world.on:  # every rank's shard of the set
                    t, k = distributed.all_sum(self.world, [t, k], self.device)
                if k:
                    each[name] = round(t / k, 5)
                tot, n = tot + t, n + k
        self.model.train()
        return (tot / n if n else None), each

    def consider_best(self, eval_loss, each: dict, lv) -> None:
        """The weights of the lowest held-out loss of `best_on` so far, as best.json + parts beside the last ones."""
        best_on, state = self.best_on, self.state
        loss = eval_loss if best_on == "all" else each.get(best_on, eval_loss if len(each) <= 1 else None)
        if not self.world.writer or best_on == "none" or loss is None or not math.isfinite(loss):
            return
        if state["best"] is not None and loss >= state["best"]["loss"]:
            return
        state["best"] = {"step": state["step"], "loss": round(float(loss), 5), "set": best_on}
        stats = {**self.stats_now(eval_loss, lv), "checkpoint": "best", "best_on": best_on, "best_loss": state["best"]["loss"],
                 "best_run_step": state["step"]}
        write_tensors(self.out, "best", self.model.gguf_state(), {"model": self.mcfg.to_dict(), "stats": stats, "name": self.name})
        self.log({"event": "best", "step": state["step"], "set": best_on, "loss": state["best"]["loss"], "weights": str(self.out / "best.json")})

    def checkpoint(self) -> None:
        _checkpoint(self.ckpt_root, self.model, self.opt, self.state, self.cfg, self.args.keep, self.log)

    # ---- the start and the end ----

    def log_start(self) -> None:
        import torch
        args, world, corpus = self.args, self.world, self.corpus
        log_world = {"world_size": world.size, "global_batch_tokens": self.global_tokens} if world.on else {}
        self.log({"event": "start", "device": self.device, **log_world,
                  "bf16": self.use_bf16, "threads": args.threads, "params": self.n_params,
                  "config": self.cfg.get("name"), "model": self.mcfg.to_dict(), "train": self.tc, "train_docs": len(corpus.train_docs),
                  "eval_docs": {name: len(docs) for name, docs in corpus.eval_parts}, "train_tokens": int(corpus.train_docs.length.sum()),
                  "attention": args.attention, "compile": args.compile, "gpu": self.gpu,
                  "train_target_tokens": _targets(corpus.data, corpus.train_docs) if world.writer else None,
                  "torch": torch.__version__, "blas": "openblas" if OPENBLAS_DIR in os.environ.get("LD_LIBRARY_PATH", "") else "default"})

    def catch_signals(self) -> None:
        """SIGTERM and SIGINT end the run at the next step, as if its time were up (the last weights are written)."""
        def on_signal(signum, frame):
            self.stop = True
        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)

    def finish(self) -> int:
        """After the loop: a last evaluation, then (rank 0) the last checkpoint and the last weights."""
        state = self.state
        if self.window.n:
            self.lv = self.window_loss()
            if state["first_loss"] is None:
                state["first_loss"] = self.lv
        eval_loss, each = self.evaluate_and_log()
        self.consider_best(eval_loss, each, self.lv)
        if not self.world.writer:  # rank 0 writes the weights
            return 0
        self.checkpoint()
        stats = {**self.stats_now(eval_loss, self.lv), "checkpoint": "last"}
        if state["best"]:  # which step the best weights are (their steps counted as the last ones' are)
            b = state["best"]
            stats.update(best_on=b["set"], best_loss=b["loss"], best_run_step=b["step"],
                         best_step=stats["steps"] - state["step"] + b["step"])
        write_tensors(self.out, "model", self.model.gguf_state(), {"model": self.mcfg.to_dict(), "stats": stats, "name": self.name})
        self.log({"event": "done", "weights": str(self.out / "model.json"), **stats, **({"eval_losses": each} if len(each) > 1 else {})})
        self.log.close()
        return 0

    def stats_now(self, eval_loss, lv) -> dict:
        """The model's training stats as of now (totals over both runs for a continued model)."""
        state, cfg, args = self.state, self.cfg, self.args
        stats = {"params": self.n_params, "steps": state["step"], "tokens_seen": state["tokens"],
                 "target_tokens_seen": state["target_tokens"], "train_minutes": round(state["elapsed"] / 60, 2),
                 "first_loss": state["first_loss"] if state["first_loss"] is not None else float("nan"),
                 "final_train_loss": lv,
                 "eval_loss": eval_loss if eval_loss is not None else float("nan"),
                 "device": self.device + (" bf16" if self.use_bf16 else "") + (f" x{self.world.size}" if self.world.on else ""),
                 "threads": args.threads, "config": cfg.get("name", ""), "data": ",".join(Path(p).name for p in args.data),
                 "vocab": self.corpus.tok.vocab_size, **data_versions(self.corpus.train_sets, cfg.get("init", {}).get("stats"))}
        if "init" in cfg:  # a continued model: totals over both runs, and where it started
            prior = cfg["init"]["stats"]
            for k in _CUMULATIVE:
                if isinstance(prior.get(k), (int, float)):
                    stats[k] = round(stats[k] + prior[k], 2) if isinstance(stats[k], float) else stats[k] + prior[k]
            stats["init"] = cfg["init"]["from"]
        return stats


def _make_tokenizer(args, tc: dict, tok_path: Path, resume, log) -> None:
    """The tokenizer at tok_path: given, kept from an earlier run, or trained now on the training data."""
    if args.tokenizer:
        if Path(args.tokenizer).resolve() != tok_path.resolve():
            if resume and tok_path.exists() and tok_path.read_bytes() != Path(args.tokenizer).read_bytes():
                raise TrainError("--tokenizer differs from the one this run was trained with")
            shutil.copyfile(args.tokenizer, tok_path)
    elif not tok_path.exists():
        t0 = time.time()
        vocab = args.vocab or tc.get("vocab", 4096)
        # the first 20M characters are plenty for a few thousand merges
        tok = train_tokenizer(read_texts(args.data, 20_000_000), vocab)
        tok.save(tok_path)
        log({"event": "tokenizer", "vocab": tok.vocab_size, "seconds": round(time.time() - t0, 1)})


# Training stats that add up when a run continues from an earlier model (--init).
_CUMULATIVE = ("steps", "tokens_seen", "target_tokens_seen", "train_minutes")
_SPOKEN = ("format_version", "python_versions")  # what a continued model already speaks (data_versions)


def _set_name(path: str) -> str:
    """A data file's name without its folder and extensions (e-realcode.jsonl.xz: e-realcode)."""
    return Path(path).name.split(".")[0]


def _targets(data: dict, docs: Docs) -> int:
    cm = np.concatenate([[0], np.cumsum(np.asarray(data["mask"], dtype=np.int64))])
    return int((cm[docs.start + docs.length] - cm[docs.start]).sum())


def _concat(sets: list[dict]) -> dict:
    offs, base = [np.zeros(1, np.int64)], 0
    for s in sets:
        offs.append(np.asarray(s["offsets"][1:]) + base)
        base += int(s["offsets"][-1])
    return {"tokens": np.concatenate([np.asarray(s["tokens"]) for s in sets]),
            "mask": np.concatenate([np.asarray(s["mask"]) for s in sets]),
            "offsets": np.concatenate(offs), "idhash": np.concatenate([np.asarray(s["idhash"]) for s in sets])}


def _checkpoint(root: Path, model, opt, state: dict, cfg: dict, keep: int, log) -> None:
    """Weights, AdamW moments, data position and RNG state, written to a temporary folder and renamed."""
    import torch
    arrays = {f"model.{k}": v for k, v in model.gguf_state().items()}
    names = {id(p): n for n, p in model.named_parameters()}
    from training.model import to_gguf_name
    opt_steps = {}
    for p, st in opt.state.items():
        g = to_gguf_name(names[id(p)])
        arrays[f"opt.{g}.exp_avg"] = st["exp_avg"].detach().float().cpu().numpy()
        arrays[f"opt.{g}.exp_avg_sq"] = st["exp_avg_sq"].detach().float().cpu().numpy()
        opt_steps[g] = float(st["step"])
    arrays["rng.torch"] = torch.get_rng_state().numpy()
    name = f"step_{state['step']:07d}"
    tmp = root / (name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    write_tensors(tmp, "ckpt", arrays, {"config": cfg, "state": state, "opt_steps": opt_steps})
    shutil.rmtree(root / name, ignore_errors=True)
    os.replace(tmp, root / name)
    (root / "latest.tmp").write_text(name)
    os.replace(root / "latest.tmp", root / "latest")
    for old in sorted(p for p in root.glob("step_*") if p.is_dir() and not p.name.endswith(".tmp"))[:-keep]:
        shutil.rmtree(old, ignore_errors=True)
    log({"event": "checkpoint", "path": str(root / name), "step": state["step"]})


def _restore(model, opt, arrays: dict, meta: dict, state: dict) -> None:
    import torch
    from training.model import to_gguf_name
    model.load_gguf_state({k[6:]: v for k, v in arrays.items() if k.startswith("model.")})
    dev = next(model.parameters()).device
    for n, p in model.named_parameters():
        g = to_gguf_name(n)
        if f"opt.{g}.exp_avg" in arrays:
            on = dev if opt.defaults.get("fused") else "cpu"  # the fused kernel keeps its step count on the device
            opt.state[p] = {"step": torch.tensor(meta["opt_steps"][g], dtype=torch.float32, device=on),
                            "exp_avg": torch.from_numpy(arrays[f"opt.{g}.exp_avg"].copy()).to(dev),
                            "exp_avg_sq": torch.from_numpy(arrays[f"opt.{g}.exp_avg_sq"].copy()).to(dev)}
    torch.set_rng_state(torch.from_numpy(arrays["rng.torch"].copy()))
    state.update(meta["state"])


if __name__ == "__main__":
    sys.exit(main())

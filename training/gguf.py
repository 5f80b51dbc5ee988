"""GGUF export for llama.cpp / node-llama-cpp (pure Python + numpy; never imports torch), and the
weight files that training writes (tensors in parts of at most 16 MiB, movable between machines).

  python3 -m training.gguf --weights DIR --out model.gguf [--type f16|q8_0] [--tokenizer tok.json] [--card]
  python3 -m training.gguf --random --config tiny --tokenizer tok.json --out rand.gguf [--seed 0] [--save-weights DIR]
  python3 -m training.gguf --info model.gguf            (metadata as JSON; checks the required keys)
  python3 -m training.gguf --join PARTS.json --out model.gguf [--type q8_0] [--card]
                                                        (a GGUF that training.pipeline cut into parts, whole again)

A GGUF for arch "llama" that lacks a required key makes llama.cpp abort the whole process, so the
writer refuses to write one (REQUIRED_KEYS) and --info checks a file before anyone loads it.

Tokenizer: tokenizer.ggml.model "gpt2" (byte-level BPE), pre "gpt-2", special tokens of type
CONTROL (parsed as one token each with special tokens enabled). eos is <|action_sep|>, the token
that ends every predicted frame, so generation stops there on its own; bos is set to the same id
but never added (add_bos_token false): trajectories start with their header, not a BOS token.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import struct
import sys
import time
from pathlib import Path

import numpy as np

from training.tokenizer import PRE, Tokenizer, TokenizerError

REPO = Path(__file__).resolve().parent.parent
CONFIGS = Path(__file__).resolve().parent / "configs"
PART_BYTES = 16 * 1024 * 1024
NDBG_FORMAT_VERSIONS = (1, 2)  # the trajectory format versions (docs/TRAJECTORY.md) a model may speak: its "format_version" stat (train.py), else 1

GGUF_MAGIC = b"GGUF"
GGUF_VERSION = 3
ALIGNMENT = 32
# GGUF value types
U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)
# ggml tensor types and file types
T_F32, T_F16, T_Q8_0 = 0, 1, 8
FILE_TYPE = {"f32": 0, "f16": 1, "q8_0": 7}
QK8_0 = 32

REQUIRED_KEYS = [
    "general.architecture", "llama.context_length", "llama.embedding_length", "llama.block_count",
    "llama.feed_forward_length", "llama.attention.head_count", "llama.attention.layer_norm_rms_epsilon",
    "tokenizer.ggml.model", "tokenizer.ggml.tokens", "tokenizer.ggml.merges",
]


class GGUFError(Exception):
    pass


# ---- weight parts: {name: array} + meta, as a byte stream cut into files of <= 16 MiB ----

def write_tensors(directory: str | Path, name: str, arrays: dict[str, np.ndarray], meta: dict,
                  part_bytes: int = PART_BYTES) -> Path:
    """Writes DIR/NAME.json (manifest, written last) and DIR/NAME.partNNN.bin. Returns the manifest path."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    for old in d.glob(f"{name}.part*.bin"):
        old.unlink()
    tensors, parts = [], []
    off = 0
    f = None
    h = None

    def open_part():
        nonlocal f, h
        if f:
            f.close()
            parts[-1]["sha256"] = h.hexdigest()
        fn = f"{name}.part{len(parts):03d}.bin"
        parts.append({"file": fn, "bytes": 0})
        f, h = open(d / fn, "wb"), hashlib.sha256()

    open_part()
    for tname, a in arrays.items():
        a = np.ascontiguousarray(a)
        buf = memoryview(a.reshape(-1).view(np.uint8))
        tensors.append({"name": tname, "dtype": a.dtype.str, "shape": list(a.shape), "offset": off, "nbytes": len(buf)})
        off += len(buf)
        while len(buf):
            room = part_bytes - parts[-1]["bytes"]
            if room == 0:
                open_part()
                room = part_bytes
            chunk = buf[:room]
            f.write(chunk)
            h.update(chunk)
            parts[-1]["bytes"] += len(chunk)
            buf = buf[room:]
    f.close()
    parts[-1]["sha256"] = h.hexdigest()
    manifest = {"format": "ndbg-tensors", "version": 1, "meta": meta, "part_bytes": part_bytes,
                "total_bytes": off, "parts": parts, "tensors": tensors}
    tmp = d / f"{name}.json.tmp"
    tmp.write_text(json.dumps(manifest, indent=1))
    os.replace(tmp, d / f"{name}.json")
    return d / f"{name}.json"


def read_tensors(directory: str | Path, name: str = "model", verify: bool = True) -> tuple[dict, dict[str, np.ndarray]]:
    """(meta, {name: array}) from write_tensors' files; a missing or damaged part is a clear error."""
    d = Path(directory)
    try:
        man = json.loads((d / f"{name}.json").read_text())
    except (OSError, ValueError) as e:
        raise GGUFError(f"cannot read {d / (name + '.json')}: {e}") from e
    if man.get("format") != "ndbg-tensors" or man.get("version") != 1:
        raise GGUFError(f"{d / (name + '.json')} is not an ndbg-tensors v1 manifest")
    blob = read_parts(d, man["parts"], "weight part", verify)
    arrays = {}
    for t in man["tensors"]:
        a = np.frombuffer(blob, dtype=np.dtype(t["dtype"]), count=int(np.prod(t["shape"], dtype=np.int64)), offset=t["offset"])
        arrays[t["name"]] = a.reshape(t["shape"])
    return man["meta"], arrays


def read_parts(folder: Path, parts: list[dict], what: str, verify: bool = True) -> bytearray:
    """The bytes of parts listed as {"file", "bytes", "sha256"}, in order; a missing or damaged one is a clear error."""
    blob = bytearray()
    for p in parts:
        try:
            data = (folder / p["file"]).read_bytes()
        except OSError as e:
            raise GGUFError(f"missing {what} {p['file']}: {e}") from e
        if len(data) != p["bytes"] or (verify and hashlib.sha256(data).hexdigest() != p["sha256"]):
            raise GGUFError(f"{what} {p['file']} is damaged (size or checksum differs)")
        blob += data
    return blob


def split_file(path: str | Path, part_bytes: int) -> list[Path]:
    """Cuts a file into PATH.partNNN of at most part_bytes each, beside a manifest PATH-stem.json (sizes,
    sha256 of each part and of the whole); returns the parts and the manifest."""
    path = Path(path)
    data = path.read_bytes()
    parts, meta = [], []
    for i, at in enumerate(range(0, max(len(data), 1), part_bytes)):
        chunk = data[at:at + part_bytes]
        p = path.with_name(f"{path.name}.part{i:03d}")
        p.write_bytes(chunk)
        parts.append(p)
        meta.append({"file": p.name, "bytes": len(chunk), "sha256": hashlib.sha256(chunk).hexdigest()})
    manifest = path.with_suffix(".json")
    manifest.write_text(json.dumps({"file": path.name, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
                                    "parts": meta}, indent=1))
    return parts + [manifest]


def join_parts(manifest: str | Path, out: str | Path) -> Path:
    """The file that split_file cut, from its manifest and parts (in the manifest's folder), checked."""
    manifest = Path(manifest)
    try:
        m = json.loads(manifest.read_text())
        data = read_parts(manifest.parent, m["parts"], "part")
        if hashlib.sha256(data).hexdigest() != m["sha256"]:
            raise GGUFError(f"the parts of {m['file']} do not make the whole file")
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise GGUFError(f"cannot join the parts of {manifest}: {e}") from e
    Path(out).write_bytes(data)
    return Path(out)


# ---- configs ----

def load_config(name_or_path: str) -> dict:
    """A config from training/configs/NAME.json or a path: {"model": {...}, "train": {...}}."""
    p = Path(name_or_path)
    if not p.suffix:
        p = CONFIGS / f"{name_or_path}.json"
    try:
        cfg = json.loads(p.read_text())
    except (OSError, ValueError) as e:
        known = sorted(x.stem for x in CONFIGS.glob("*.json"))
        raise GGUFError(f"cannot read config {name_or_path} ({e}); known configs: {known}") from e
    if "model" not in cfg:
        raise GGUFError(f"config {p} has no model section")
    cfg.setdefault("name", p.stem)
    return cfg


# ---- tensor encodings ----

def _roundf(x: np.ndarray) -> np.ndarray:
    """C roundf (half away from zero), as ggml's reference quantizer uses."""
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def quantize_q8_0(a: np.ndarray) -> bytes:
    """ggml block_q8_0: per 32 values an f16 scale d = max|x| / 127 then 32 int8 round(x / d)."""
    blocks = a.astype(np.float32).reshape(-1, QK8_0)
    d = np.abs(blocks).max(axis=1, keepdims=True) / 127.0
    with np.errstate(divide="ignore"):
        inv = np.where(d == 0, 0.0, 1.0 / d)
    q = _roundf(blocks * inv).astype(np.int8)
    out = np.empty((blocks.shape[0], 2 + QK8_0), dtype=np.uint8)
    out[:, :2] = d.astype(np.float16).view(np.uint8)
    out[:, 2:] = q.view(np.uint8)
    return out.tobytes()


def dequantize_q8_0(raw: bytes, n: int) -> np.ndarray:
    b = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 2 + QK8_0)
    d = b[:, :2].copy().view(np.float16).astype(np.float32)
    q = b[:, 2:].copy().view(np.int8).astype(np.float32)
    return (q * d).reshape(-1)[:n]


def encode_tensor(name: str, a: np.ndarray, ftype: str) -> tuple[int, bytes]:
    """(ggml type, bytes): norms stay f32; matrices become f16, or q8_0 when rows divide into 32."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    if a.ndim == 1 or ftype == "f32":
        return T_F32, a.tobytes()
    if ftype == "q8_0" and a.shape[-1] % QK8_0 == 0:
        return T_Q8_0, quantize_q8_0(a)
    return T_F16, a.astype(np.float16).tobytes()


# ---- GGUF writer ----

class _Buf:
    def __init__(self):
        self.parts: list[bytes] = []

    def raw(self, b: bytes):
        self.parts.append(b)

    def u32(self, v):
        self.raw(struct.pack("<I", v))

    def u64(self, v):
        self.raw(struct.pack("<Q", v))

    def string(self, s: str):
        b = s.encode("utf-8")
        self.u64(len(b))
        self.raw(b)

    def value(self, t: int, v):
        if t == STR:
            self.string(v)
        elif t == ARR:
            et, items = v
            self.u32(et)
            self.u64(len(items))
            if et == STR:
                for s in items:
                    self.string(s)
            else:
                self.raw(np.asarray(items, dtype=_NP[et]).tobytes())
        elif t == BOOL:
            self.raw(struct.pack("<?", bool(v)))
        else:
            self.raw(np.asarray(v, dtype=_NP[t]).tobytes())

    def bytes(self) -> bytes:
        return b"".join(self.parts)


_NP = {U8: "<u1", I8: "<i1", U16: "<u2", I16: "<i2", U32: "<u4", I32: "<i4", F32: "<f4", U64: "<u8", I64: "<i8", F64: "<f8"}


def write_gguf(path: str | Path, kv: list[tuple[str, int, object]], tensors: list[tuple[str, list[int], int, bytes]]) -> None:
    """kv: (key, type, value) with ARR values as (elem type, list). tensors: (name, numpy shape, ggml type, data)."""
    keys = {k for k, _, _ in kv}
    missing = [k for k in REQUIRED_KEYS if k not in keys]
    if missing:
        raise GGUFError(f"refusing to write a GGUF without {missing}: llama.cpp would abort on it")
    head = _Buf()
    head.raw(GGUF_MAGIC)
    head.u32(GGUF_VERSION)
    head.u64(len(tensors))
    head.u64(len(kv))
    for k, t, v in kv:
        head.string(k)
        head.u32(t)
        head.value(t, v)
    off = 0
    offsets = []
    for name, shape, ggml_type, data in tensors:
        off = (off + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT
        offsets.append(off)
        head.string(name)
        head.u32(len(shape))
        for dim in reversed(shape):  # ggml lists the fastest-varying dimension first
            head.u64(dim)
        head.u32(ggml_type)
        head.u64(off)
        off += len(data)
    header = head.bytes()
    tmp = Path(str(path) + ".tmp")
    with open(tmp, "wb") as f:
        f.write(header)
        f.write(b"\0" * (-len(header) % ALIGNMENT))
        base = f.tell()
        for (name, shape, ggml_type, data), o in zip(tensors, offsets):
            f.write(b"\0" * (base + o - f.tell()))
            f.write(data)
    os.replace(tmp, path)


# ---- GGUF reader (metadata and tensors; for checks and tests) ----

def read_gguf(path: str | Path, tensors: bool = False) -> tuple[dict, dict]:
    """(metadata {key: value}, {tensor name: {"shape", "type", "offset"[, "data"]}})."""
    data = Path(path).read_bytes()
    pos = 0

    def take(n):
        nonlocal pos
        if pos + n > len(data):
            raise GGUFError(f"{path}: truncated GGUF")
        b = data[pos:pos + n]
        pos += n
        return b

    def u32():
        return struct.unpack("<I", take(4))[0]

    def u64():
        return struct.unpack("<Q", take(8))[0]

    def string():
        return take(u64()).decode("utf-8", errors="replace")

    def value(t):
        if t == STR:
            return string()
        if t == BOOL:
            return struct.unpack("<?", take(1))[0]
        if t == ARR:
            et, n = u32(), u64()
            if et == STR:
                return [string() for _ in range(n)]
            dt = np.dtype(_NP[et]) if et != BOOL else np.dtype("?")
            return np.frombuffer(take(dt.itemsize * n), dtype=dt).tolist()
        dt = np.dtype(_NP[t])
        return np.frombuffer(take(dt.itemsize), dtype=dt)[0].item()

    if take(4) != GGUF_MAGIC:
        raise GGUFError(f"{path}: not a GGUF file")
    version = u32()
    n_t, n_kv = u64(), u64()
    meta = {"GGUF.version": version}
    for _ in range(n_kv):
        k = string()
        meta[k] = value(u32())
    infos = {}
    for _ in range(n_t):
        name = string()
        ne = [u64() for _ in range(u32())]
        infos[name] = {"shape": list(reversed(ne)), "type": u32(), "offset": u64()}
    align = int(meta.get("general.alignment", ALIGNMENT))
    base = (pos + align - 1) // align * align
    if tensors:
        for name, info in infos.items():
            n = int(np.prod(info["shape"]))
            start = base + info["offset"]
            if info["type"] == T_F32:
                info["data"] = np.frombuffer(data, np.float32, n, start).reshape(info["shape"])
            elif info["type"] == T_F16:
                info["data"] = np.frombuffer(data, np.float16, n, start).astype(np.float32).reshape(info["shape"])
            elif info["type"] == T_Q8_0:
                raw = data[start:start + n // QK8_0 * (2 + QK8_0)]
                info["data"] = dequantize_q8_0(raw, n).reshape(info["shape"])
    return meta, infos


def check_gguf(path: str | Path) -> dict:
    """Metadata of a GGUF, or a GGUFError naming what would make llama.cpp abort on it."""
    meta, infos = read_gguf(path)
    missing = [k for k in REQUIRED_KEYS if k not in meta]
    if missing:
        raise GGUFError(f"{path} lacks {missing}")
    if meta.get("general.architecture") == "llama":
        L = meta["llama.block_count"]
        need = ["token_embd.weight", "output_norm.weight"] + [f"blk.{i}.{t}.weight" for i in range(L) for t in
                ("attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_norm", "ffn_gate", "ffn_up", "ffn_down")]
        absent = [n for n in need if n not in infos]
        if absent:
            raise GGUFError(f"{path} lacks tensors {absent[:4]}")
    return meta


# ---- export ----

def format_version(stats: dict) -> int:
    """The trajectory format a model speaks: the newest of its training data (train.py's data_versions), else 1."""
    v = stats.get("format_version", 1)
    if v not in NDBG_FORMAT_VERSIONS:
        raise GGUFError(f"trajectory format version {v!r} is not one of {NDBG_FORMAT_VERSIONS}")
    return int(v)


def _metadata(model: dict, tok: dict, ftype: str, name: str, stats: dict) -> list[tuple[str, int, object]]:
    specials = tok["special_tokens"]
    stop_id = tok["tokens"].index(tok.get("stop_token", "<|action_sep|>"))
    types = [3 if i < len(specials) else 1 for i in range(len(tok["tokens"]))]
    hd = model["dim"] // model["n_heads"]
    kv = [
        ("general.architecture", STR, "llama"),
        ("general.name", STR, name),
        ("general.file_type", U32, FILE_TYPE[ftype]),
        ("general.quantization_version", U32, 2),
        ("general.alignment", U32, ALIGNMENT),
        ("llama.vocab_size", U32, len(tok["tokens"])),
        ("llama.context_length", U32, model["ctx"]),
        ("llama.embedding_length", U32, model["dim"]),
        ("llama.block_count", U32, model["n_layers"]),
        ("llama.feed_forward_length", U32, model["ffn_dim"]),
        ("llama.attention.head_count", U32, model["n_heads"]),
        ("llama.attention.head_count_kv", U32, model.get("n_kv_heads", model["n_heads"])),
        ("llama.attention.layer_norm_rms_epsilon", F32, model.get("norm_eps", 1e-5)),
        ("llama.rope.freq_base", F32, model.get("rope_base", 10000.0)),
        ("llama.rope.dimension_count", U32, hd),
        ("tokenizer.ggml.model", STR, "gpt2"),
        ("tokenizer.ggml.pre", STR, tok.get("pre", "gpt-2")),
        ("tokenizer.ggml.tokens", ARR, (STR, tok["tokens"])),
        ("tokenizer.ggml.token_type", ARR, (I32, types)),
        ("tokenizer.ggml.merges", ARR, (STR, tok["merges"])),
        ("tokenizer.ggml.bos_token_id", U32, stop_id),
        ("tokenizer.ggml.eos_token_id", U32, stop_id),
        ("tokenizer.ggml.add_bos_token", BOOL, False),
        ("tokenizer.ggml.add_eos_token", BOOL, False),
        ("ndbg.format_version", U32, format_version(stats)),
        ("ndbg.dialect", STR, "native"),
        ("ndbg.special_tokens", ARR, (STR, specials)),
        ("ndbg.stop_token", STR, tok["tokens"][stop_id]),
    ]
    for k, v in stats.items():  # training stats: numbers and strings only
        if k == "format_version":  # written above, as what the model speaks
            continue
        if isinstance(v, bool):
            kv.append((f"ndbg.train.{k}", BOOL, v))
        elif isinstance(v, int):  # 32-bit where it fits: readers get plain numbers, not BigInts
            kv.append((f"ndbg.train.{k}", I32 if -2**31 <= v < 2**31 else I64, v))
        elif isinstance(v, float):
            kv.append((f"ndbg.train.{k}", F64, v))
        elif isinstance(v, str):
            kv.append((f"ndbg.train.{k}", STR, v))
    return kv


def export(arrays: dict[str, np.ndarray], model: dict, tok: dict, out: str | Path, ftype: str = "f16",
           name: str = "ndbg", stats: dict | None = None) -> dict:
    if ftype not in ("f32", "f16", "q8_0"):
        raise GGUFError(f"unknown type {ftype}: use f16 or q8_0")
    vocab = len(tok["tokens"])
    emb = arrays.get("token_embd.weight")
    if emb is None or emb.shape != (vocab, model["dim"]):
        raise GGUFError(f"token_embd.weight must be [{vocab}, {model['dim']}] for this tokenizer, is {None if emb is None else emb.shape}")
    order = ["token_embd.weight"] + [k for k in sorted(arrays, key=_tensor_order) if k != "token_embd.weight"]
    tensors = []
    for k in order:
        t, data = encode_tensor(k, arrays[k], ftype)
        tensors.append((k, list(arrays[k].shape), t, data))
    write_gguf(out, _metadata(model, tok, ftype, name, stats or {}), tensors)
    return {"out": str(out), "type": ftype, "bytes": Path(out).stat().st_size,
            "params": int(sum(a.size for a in arrays.values()))}


def read_model(path: str | Path) -> tuple[dict, dict, dict[str, np.ndarray], dict]:
    """The inverse of export for our own native GGUFs: (model config, tokenizer, float32 weights, training stats).

    q8_0 weights come back dequantized, so training can continue from a shipped model."""
    meta, infos = read_gguf(path, tensors=True)
    if meta.get("ndbg.dialect") != "native" or meta.get("general.architecture") != "llama":
        raise GGUFError(f"{path} is not a native-dialect llama model written by this exporter")
    if meta.get("ndbg.format_version") not in NDBG_FORMAT_VERSIONS:
        raise GGUFError(f"{path} speaks trajectory format {meta.get('ndbg.format_version')}, not one of {NDBG_FORMAT_VERSIONS}")
    model = {"dim": meta["llama.embedding_length"], "n_layers": meta["llama.block_count"],
             "n_heads": meta["llama.attention.head_count"],
             "n_kv_heads": meta.get("llama.attention.head_count_kv", meta["llama.attention.head_count"]),
             "ffn_dim": meta["llama.feed_forward_length"], "ctx": meta["llama.context_length"],
             "rope_base": meta.get("llama.rope.freq_base", 10000.0),
             "norm_eps": meta["llama.attention.layer_norm_rms_epsilon"],
             "tie_embeddings": "output.weight" not in infos}
    if meta.get("tokenizer.ggml.pre") != PRE:
        raise GGUFError(f"{path} has pre-tokenizer {meta.get('tokenizer.ggml.pre')}, not {PRE}")
    try:  # the same checks and JSON as a tokenizer trained here
        tok = Tokenizer(meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.merges"], meta["ndbg.special_tokens"],
                        meta["ndbg.stop_token"]).to_json()
    except TokenizerError as e:
        raise GGUFError(f"{path}: its tokenizer is not one of ours ({e})") from e
    arrays = {k: np.ascontiguousarray(v["data"], dtype=np.float32) for k, v in infos.items()}
    stats = {k[len("ndbg.train."):]: v for k, v in meta.items() if k.startswith("ndbg.train.")}
    stats["format_version"] = meta["ndbg.format_version"]
    return model, tok, arrays, stats


def _tensor_order(name: str):
    if name.startswith("blk."):
        parts = name.split(".")
        return (1, int(parts[1]), parts[2])
    return (2 if name.startswith("output") else 0, 0, name)


def random_weights(model: dict, vocab: int, seed: int = 0, std: float | None = None) -> dict[str, np.ndarray]:
    """Random weights shaped as the PyTorch model's (numpy only)."""
    rng = np.random.default_rng(seed)
    std = model.get("init_std", 0.02) if std is None else std
    dim, ffn, L = model["dim"], model["ffn_dim"], model["n_layers"]
    hd = dim // model["n_heads"]
    kvd = model.get("n_kv_heads", model["n_heads"]) * hd

    def w(*shape, s=std):
        return (rng.standard_normal(shape, dtype=np.float32) * s).astype(np.float32)

    a = {"token_embd.weight": w(vocab, dim), "output_norm.weight": np.ones(dim, np.float32)}
    if not model.get("tie_embeddings", True):
        a["output.weight"] = w(vocab, dim)
    for i in range(L):
        a.update({
            f"blk.{i}.attn_norm.weight": np.ones(dim, np.float32),
            f"blk.{i}.attn_q.weight": w(model["n_heads"] * hd, dim),
            f"blk.{i}.attn_k.weight": w(kvd, dim),
            f"blk.{i}.attn_v.weight": w(kvd, dim),
            f"blk.{i}.attn_output.weight": w(dim, model["n_heads"] * hd),
            f"blk.{i}.ffn_norm.weight": np.ones(dim, np.float32),
            f"blk.{i}.ffn_gate.weight": w(ffn, dim),
            f"blk.{i}.ffn_up.weight": w(ffn, dim),
            f"blk.{i}.ffn_down.weight": w(dim, ffn),
        })
    return a


def write_card(out: str | Path, name: str, model: dict, tok: dict, ftype: str, stats: dict, res: dict) -> Path:
    """A short model card next to the GGUF: what it is, how it was trained, the numbers known so far."""
    p = Path(out).with_suffix(".md")
    rows = [("file", f"{Path(out).name} ({ftype}, {res['bytes'] / 1e6:.1f} MB)"), ("parameters", f"{res['params']:,}"),
            ("architecture", f"llama: {model['n_layers']} layers, dim {model['dim']}, {model['n_heads']} heads, "
                             f"ffn {model['ffn_dim']}, context {model['ctx']}"),
            ("tokenizer", f"byte-level BPE, {len(tok['tokens'])} tokens ({len(tok['special_tokens'])} special), pre-tokenizer {tok.get('pre')}"),
            ("trajectory format", f"version {format_version(stats)}, dialect native, stop token {tok.get('stop_token', '<|action_sep|>')}")]
    skip = {"params", "vocab", "format_version"}
    labels = {"steps": "optimizer steps", "tokens_seen": "tokens seen", "target_tokens_seen": "target (loss) tokens seen",
              "train_minutes": "training time (min)", "device": "hardware", "threads": "CPU threads", "data": "data",
              "first_loss": "first training loss", "final_train_loss": "last training loss", "eval_loss": "held-out loss (target tokens)",
              "config": "config", "random": "random weights", "init": "continued from (earlier version)",
              "python_versions": "traced with Python (minor versions)"}
    for k, v in stats.items():
        if k in skip:
            continue
        rows.append((labels.get(k, k), f"{v:,.4g}" if isinstance(v, float) else f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)))
    text = f"# {name}\n\nA native-dialect model for the neural Python debugger: given a trajectory and an action, it writes the next program state.\n\n"
    text += "| | |\n|---|---|\n" + "".join(f"| {k} | {v.replace('|', chr(92) + '|')} |\n" for k, v in rows)
    text += "\nAccuracy (`ndbg eval steps`, `ndbg eval cruxeval`) is measured separately and belongs here once known.\n"
    p.write_text(text)
    return p


def _load_tokenizer_json(path: str | Path) -> dict:
    try:
        tok = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise GGUFError(f"cannot read tokenizer {path}: {e}") from e
    if tok.get("format") != "ndbg-bpe" or not tok.get("tokens") or "special_tokens" not in tok:
        raise GGUFError(f"{path} is not an ndbg-bpe tokenizer (python3 -m training.tokenizer train)")
    return tok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m training.gguf", description="Write a GGUF for llama.cpp / node-llama-cpp.")
    ap.add_argument("--weights", help="directory written by train.py (model.json + parts, tokenizer.json, stats.json)")
    ap.add_argument("--name", default="model", help="weight set in --weights (default model)")
    ap.add_argument("--from", dest="source", metavar="GGUF", help="one of our native GGUFs, re-written as --type "
                    "(e.g. the f16 a GPU run sends back, as q8_0); keeps its name and training stats")
    ap.add_argument("--join", metavar="MANIFEST", help="the parts a GPU run sent back (training.pipeline's export), "
                    "joined, checked and written as --type")
    ap.add_argument("--random", action="store_true", help="random weights (numpy only) for adapter tests")
    ap.add_argument("--config", default="tiny", help="with --random: a config name or path")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--std", type=float, help="with --random: weight scale (default: the config's init_std)")
    ap.add_argument("--save-weights", help="with --random: also write the weights as parts here (for reference checks)")
    ap.add_argument("--tokenizer", help="tokenizer JSON (default: WEIGHTS/tokenizer.json)")
    ap.add_argument("--out", help="output .gguf")
    ap.add_argument("--type", default="f16", choices=["f16", "q8_0", "f32"])
    ap.add_argument("--model-name", help="general.name (default: from the config)")
    ap.add_argument("--info", metavar="GGUF", help="print a GGUF's metadata (without token lists) and check it")
    ap.add_argument("--card", action="store_true", help="also write a model card (OUT with .md) from the training stats")
    a = ap.parse_args(argv)
    try:
        if a.info:
            meta = check_gguf(a.info)
            print(json.dumps({k: (f"[{len(v)} items]" if isinstance(v, list) and len(v) > 32 else v) for k, v in meta.items()}, indent=1))
            return 0
        if not a.out:
            ap.error("--out is required")
        t0 = time.time()
        if a.random:
            if not a.tokenizer:
                ap.error("--random needs --tokenizer")
            tok = _load_tokenizer_json(a.tokenizer)
            cfg = load_config(a.config)
            model = dict(cfg["model"])
            model["vocab_size"] = len(tok["tokens"])
            arrays = random_weights(model, len(tok["tokens"]), a.seed, a.std)
            stats = {"random": True, "seed": a.seed, "config": cfg["name"]}
            if a.save_weights:
                write_tensors(a.save_weights, "model", arrays, {"model": model, "stats": stats})
                shutil.copyfile(a.tokenizer, Path(a.save_weights) / "tokenizer.json")
            name = a.model_name or f"ndbg-random-{cfg['name']}"
        elif a.source or a.join:
            source = a.source or join_parts(a.join, Path(a.out).with_name(Path(a.out).name + ".joined"))
            try:
                model, tok, arrays, stats = read_model(source)
                name = a.model_name or read_gguf(source)[0].get("general.name", "ndbg")
            finally:
                if a.join:
                    Path(source).unlink(missing_ok=True)
        else:
            if not a.weights:
                ap.error("give --weights DIR, --from GGUF or --random")
            meta, arrays = read_tensors(a.weights, a.name)
            tok = _load_tokenizer_json(a.tokenizer or Path(a.weights) / "tokenizer.json")
            model = meta["model"]
            stats = dict(meta.get("stats", {}))
            name = a.model_name or meta.get("name", "ndbg")
        res = export(arrays, model, tok, a.out, a.type, name, stats)
        res["seconds"] = round(time.time() - t0, 2)
        if a.card:
            res["card"] = str(write_card(a.out, name, model, tok, a.type, stats, res))
        print(json.dumps(res))
    except (GGUFError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

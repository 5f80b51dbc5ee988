"""Byte-level BPE for trajectories, tokenizing exactly as llama.cpp does for a GGUF with
tokenizer.ggml.model "gpt2" and tokenizer.ggml.pre "gpt-2".

What has to match llama.cpp (src/llama-vocab.cpp, src/unicode.cpp):
- Special tokens are cut out of the text first (longest first; ours never overlap), then each
  piece of free text is pre-tokenized on its own.
- Pre-tokenizer "gpt-2": 's|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)
  as llama.cpp's hand-written splitter implements it, with llama.cpp's own whitespace set
  (not Python's str.isspace: U+001C..U+001F are not whitespace there).
- Bytes map to characters with GPT-2's bytes_to_unicode; merges apply lowest rank first.

Vocabulary layout: the special tokens (specialTokens of adapter/format/format.json, in order) are
ids 0..S-1, the 256 bytes are S..S+255, merges follow. Stdlib only.

CLI:
  python3 -m training.tokenizer train --data A.jsonl [--data B.jsonl] --vocab 4096 --out tok.json
  python3 -m training.tokenizer encode --tokenizer tok.json --text "..." | --texts list.json   (ids as JSON)
  python3 -m training.tokenizer stats --tokenizer tok.json --data A.jsonl   (chars/token)
  python3 -m training.tokenizer specials                                    (the special tokens as JSON)
"""
from __future__ import annotations

import argparse
import gzip
import heapq
import json
import lzma
import re
import sys
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Iterable, Iterator

REPO = Path(__file__).resolve().parent.parent
FORMAT_JSON = REPO / "adapter" / "format" / "format.json"
FORMAT = "ndbg-bpe"
PRE = "gpt-2"


class TokenizerError(Exception):
    pass


# ---- the trajectory format's constants, from the one definition the adapter reads too ----

def trajectory_format(path: Path = FORMAT_JSON) -> dict:
    """adapter/format/format.json: the format's versions, header, special tokens and stop token."""
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise TokenizerError(f"cannot read the trajectory format from {path}: {e}") from e
    toks = d.get("specialTokens") if isinstance(d, dict) else None
    if (not isinstance(toks, list) or not toks or len(set(toks)) != len(toks)
            or not all(isinstance(t, str) and re.fullmatch(r"<\|[a-z_]+\|>", t) for t in toks)):
        raise TokenizerError(f"{path}: specialTokens is not a list of distinct <|name|> tokens")
    if d.get("separators", {}).get(d.get("stop")) not in toks:
        raise TokenizerError(f"{path}: stop names no separator among the special tokens")
    return d


def format_special_tokens(path: Path = FORMAT_JSON) -> list[str]:
    """The special tokens, in the vocabulary's order (token ids of trained models depend on it)."""
    return list(trajectory_format(path)["specialTokens"])


_FORMAT = trajectory_format()
STOP_TOKEN = _FORMAT["separators"][_FORMAT["stop"]]  # ends every predicted frame: the model's end-of-generation token


# ---- bytes <-> characters (GPT-2) ----

def bytes_to_unicode() -> dict[int, str]:
    bs = list(range(0x21, 0x7F)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


BYTE_ENC = bytes_to_unicode()
BYTE_DEC = {c: b for b, c in BYTE_ENC.items()}


# ---- pre-tokenizer "gpt-2", as llama.cpp implements it ----

# llama.cpp's unicode_set_whitespace (src/unicode-data.cpp).
WHITESPACE = frozenset([0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B),
                        0x2028, 0x2029, 0x202F, 0x205F, 0x3000])
_WS = "".join(re.escape(chr(c)) for c in sorted(WHITESPACE))
_CONTRACTIONS = r"'s|'t|'re|'ve|'m|'ll|'d"
_ASCII_RE = re.compile(
    _CONTRACTIONS + r"| ?[A-Za-z]+| ?[0-9]+| ?[^A-Za-z0-9" + _WS + r"]+|[" + _WS + r"]+(?![^" + _WS + r"])|[" + _WS + r"]+")
_unicode_re: re.Pattern[str] | None = None


def _category_class(prefix: str) -> str:
    """A regex character class body for every code point whose Unicode category starts with prefix."""
    ranges: list[tuple[int, int]] = []
    start = None
    for c in range(0x110000 + 1):
        inside = c < 0x110000 and unicodedata.category(chr(c)).startswith(prefix)
        if inside and start is None:
            start = c
        elif not inside and start is not None:
            ranges.append((start, c - 1))
            start = None
    return "".join(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges)


def _get_unicode_re() -> re.Pattern[str]:
    global _unicode_re
    if _unicode_re is None:
        L, N = _category_class("L"), _category_class("N")
        _unicode_re = re.compile(
            _CONTRACTIONS + f"| ?[{L}]+| ?[{N}]+| ?[^{L}{N}{_WS}]+|[{_WS}]+(?![^{_WS}])|[{_WS}]+")
    return _unicode_re


def pretokenize(text: str) -> list[str]:
    """Splits free text (no special tokens) into the words that BPE merges within."""
    rx = _ASCII_RE if text.isascii() else _get_unicode_re()
    return rx.findall(text)


def pretokenize_reference(text: str) -> list[str]:
    """A line-by-line port of llama.cpp's unicode_regex_split_custom_gpt2 (slow; for tests)."""
    cps = [ord(c) for c in text]
    n = len(cps)

    def flags(i: int) -> tuple[bool, bool, bool, bool]:  # letter, number, whitespace, in range
        if i < 0 or i >= n:
            return False, False, False, False
        cat = unicodedata.category(chr(cps[i]))
        return cat[0] == "L", cat[0] == "N", cps[i] in WHITESPACE, True

    out: list[str] = []
    pos = 0
    while pos < n:
        c = cps[pos]
        if c == ord("'") and pos + 1 < n:
            nx = chr(cps[pos + 1])
            if nx in "stmd":
                out.append(text[pos:pos + 2]); pos += 2; continue
            if pos + 2 < n and nx + chr(cps[pos + 2]) in ("re", "ve", "ll"):
                out.append(text[pos:pos + 3]); pos += 3; continue
        f2 = flags(pos + 1) if c == 0x20 else flags(pos)
        start = pos
        if f2[0] or f2[1]:
            k = 0 if f2[0] else 1
            pos += c == 0x20
            while flags(pos)[k]:
                pos += 1
            out.append(text[start:pos]); continue
        if not (f2[0] or f2[1] or f2[2]) and f2[3]:
            pos += c == 0x20
            while (lambda f: not (f[0] or f[1] or f[2]) and f[3])(flags(pos)):
                pos += 1
            out.append(text[start:pos]); continue
        ws = 0
        while flags(pos + ws)[2]:
            ws += 1
        if ws > 1 and pos + ws < n:
            pos += ws - 1
        elif ws > 0:
            pos += ws
        else:
            pos += 1
        out.append(text[start:pos])
    return out


def split_special(text: str, specials: Iterable[str]) -> list[tuple[bool, str]]:
    """Cuts special tokens out of text the way llama.cpp does (each token in turn, longest first,
    leftmost occurrences): a list of (is_special, piece)."""
    frags: list[tuple[bool, str]] = [(False, text)] if text else []
    for tok in sorted(specials, key=len, reverse=True):
        nxt: list[tuple[bool, str]] = []
        for is_sp, piece in frags:
            if is_sp or tok not in piece:
                nxt.append((is_sp, piece))
                continue
            parts = piece.split(tok)
            for i, p in enumerate(parts):
                if i:
                    nxt.append((True, tok))
                if p:
                    nxt.append((False, p))
        frags = nxt
    return frags


# ---- the tokenizer ----

class Tokenizer:
    def __init__(self, tokens: list[str], merges: list[str], special_tokens: list[str], stop_token: str = STOP_TOKEN,
                 stats: dict | None = None):
        self.tokens = tokens
        self.merges = merges
        self.special_tokens = special_tokens
        self.stats = stats or {}
        self.id_of = {t: i for i, t in enumerate(tokens)}
        if len(self.id_of) != len(tokens):
            raise TokenizerError("duplicate token strings in the vocabulary")
        if tokens[:len(special_tokens)] != special_tokens:
            raise TokenizerError("the vocabulary must start with the special tokens")
        missing = [b for b in range(256) if BYTE_ENC[b] not in self.id_of]
        if missing:
            raise TokenizerError(f"the vocabulary lacks byte tokens {missing[:8]}")
        if stop_token not in self.id_of:
            raise TokenizerError(f"the stop token {stop_token} is not a special token")
        self.stop_token = stop_token
        self.stop_id = self.id_of[stop_token]
        self.special_ids = set(range(len(special_tokens)))
        self.byte_ids = [self.id_of[BYTE_ENC[b]] for b in range(256)]
        ws_chars = {BYTE_ENC[b] for b in b" \t\n\r\x0b\x0c"}
        self.whitespace_ids = frozenset(i for i, t in enumerate(tokens)
                                        if i >= len(special_tokens) and t and set(t) <= ws_chars)
        # (left, right) -> (rank, merged id); a merge's result is always in the vocabulary.
        self.ranks: dict[tuple[int, int], tuple[int, int]] = {}
        for r, m in enumerate(merges):
            a, b = m.split(" ", 1)
            try:
                self.ranks[(self.id_of[a], self.id_of[b])] = (r, self.id_of[a + b])
            except KeyError as e:
                raise TokenizerError(f"merge {r} '{m}' refers to a token missing from the vocabulary") from e
        self._cache: dict[str, tuple[int, ...]] = {}

    @property
    def vocab_size(self) -> int:
        return len(self.tokens)

    def token_types(self) -> list[int]:
        """GGUF token types: CONTROL (3) for the special tokens, NORMAL (1) for the rest."""
        return [3 if i in self.special_ids else 1 for i in range(len(self.tokens))]

    def _bpe(self, word: str) -> tuple[int, ...]:
        hit = self._cache.get(word)
        if hit is not None:
            return hit
        parts = [self.byte_ids[b] for b in word.encode("utf-8")]
        ranks = self.ranks
        while len(parts) > 1:
            best = None
            for i in range(len(parts) - 1):
                r = ranks.get((parts[i], parts[i + 1]))
                if r is not None and (best is None or r[0] < best[0]):
                    best = r
                    pair = (parts[i], parts[i + 1])
            if best is None:
                break
            merged, i, out = best[1], 0, []
            while i < len(parts):
                if i + 1 < len(parts) and (parts[i], parts[i + 1]) == pair:
                    out.append(merged)
                    i += 2
                else:
                    out.append(parts[i])
                    i += 1
            parts = out
        res = tuple(parts)
        if len(self._cache) < 500_000:
            self._cache[word] = res
        return res

    def encode(self, text: str) -> list[int]:
        """Token ids with special tokens parsed (llama.cpp: tokenize(text, add_special=false, parse_special=true))."""
        ids: list[int] = []
        for is_sp, piece in split_special(text, self.special_tokens):
            if is_sp:
                ids.append(self.id_of[piece])
            else:
                for w in pretokenize(piece):
                    ids.extend(self._bpe(w))
        return ids

    def encode_with_offsets(self, text: str) -> tuple[list[int], list[int]]:
        """Token ids and the UTF-8 byte offset in text where each token starts."""
        ids: list[int] = []
        offs: list[int] = []
        pos = 0
        for is_sp, piece in split_special(text, self.special_tokens):
            if is_sp:
                ids.append(self.id_of[piece])
                offs.append(pos)
                pos += len(piece)  # special tokens are ASCII
                continue
            for w in pretokenize(piece):
                for t in self._bpe(w):
                    ids.append(t)
                    offs.append(pos)
                    pos += self.token_bytes(t)
        return ids, offs

    def token_bytes(self, t: int) -> int:
        return len(self.tokens[t])  # specials are ASCII; other tokens hold one character per byte

    def decode(self, ids: Iterable[int], specials: bool = True) -> str:
        out = bytearray()
        for t in ids:
            tok = self.tokens[t]
            if t in self.special_ids:
                if specials:
                    out += tok.encode()
            else:
                out += bytes(BYTE_DEC[c] for c in tok)
        return out.decode("utf-8", errors="replace")

    # -- persistence --

    def to_json(self) -> dict:
        return {"format": FORMAT, "version": 1, "pre": PRE, "special_tokens": self.special_tokens,
                "stop_token": self.stop_token, "tokens": self.tokens, "merges": self.merges, "stats": self.stats}

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> "Tokenizer":
        try:
            d = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise TokenizerError(f"cannot read tokenizer {path}: {e}") from e
        if d.get("format") != FORMAT or d.get("version") != 1 or d.get("pre") != PRE:
            raise TokenizerError(f"{path} is not a {FORMAT} v1 tokenizer with pre-tokenizer {PRE}")
        return cls(d["tokens"], d["merges"], d["special_tokens"], d.get("stop_token", STOP_TOKEN), d.get("stats"))


def train(texts: Iterable[str], vocab_size: int, special_tokens: list[str] | None = None,
          min_count: int = 2) -> Tokenizer:
    """Learns merges until the vocabulary holds vocab_size tokens (or no pair occurs min_count times).
    Pair counts are kept up to date incrementally; only words containing the merged pair are touched."""
    specials = list(special_tokens if special_tokens is not None else format_special_tokens())
    base = len(specials) + 256
    if vocab_size < base:
        raise TokenizerError(f"vocab size {vocab_size} is below the {base} special and byte tokens")
    word_counts: Counter[str] = Counter()
    chars = 0
    for text in texts:
        chars += len(text)
        for is_sp, piece in split_special(text, specials):
            if not is_sp:
                word_counts.update(pretokenize(piece))
    tokens = specials + [BYTE_ENC[b] for b in range(256)]
    id_of = {t: i for i, t in enumerate(tokens)}
    words = [[len(specials) + b for b in w.encode("utf-8")] for w in word_counts]
    counts = list(word_counts.values())
    pair_count: dict[tuple[int, int], int] = {}
    where: dict[tuple[int, int], set[int]] = {}
    for wi, w in enumerate(words):
        c = counts[wi]
        for p in zip(w, w[1:]):
            pair_count[p] = pair_count.get(p, 0) + c
            where.setdefault(p, set()).add(wi)
    # Max-heap by count; ties go to the smaller ids, so training is deterministic.
    heap = [(-c, p) for p, c in pair_count.items()]
    heapq.heapify(heap)
    merges: list[str] = []
    while len(tokens) < vocab_size and heap:
        negc, pair = heapq.heappop(heap)
        cur = pair_count.get(pair, 0)
        if cur != -negc:
            if cur > 0:
                heapq.heappush(heap, (-cur, pair))
            continue
        if cur < min_count:
            break
        a, b = pair
        text = tokens[a] + tokens[b]
        new = id_of.get(text)
        if new is None:  # another merge may already have made this string: reuse its id
            new = len(tokens)
            tokens.append(text)
            id_of[text] = new
        merges.append(f"{tokens[a]} {tokens[b]}")
        changed: set[tuple[int, int]] = set()
        for wi in list(where.pop(pair, ())):
            w, c = words[wi], counts[wi]
            for p in zip(w, w[1:]):
                pair_count[p] -= c
                changed.add(p)
                s = where.get(p)
                if s is not None:
                    s.discard(wi)
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and w[i] == a and w[i + 1] == b:
                    out.append(new)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            words[wi] = out
            for p in zip(out, out[1:]):
                pair_count[p] = pair_count.get(p, 0) + c
                changed.add(p)
                where.setdefault(p, set()).add(wi)
        pair_count.pop(pair, None)
        for p in changed:
            c = pair_count.get(p, 0)
            if c <= 0:
                pair_count.pop(p, None)
                where.pop(p, None)
            else:
                heapq.heappush(heap, (-c, p))
    return Tokenizer(tokens, merges, specials, stats={"train_chars": chars, "unique_words": len(words)})


# ---- data ----

# The trajectory header (docs/TRAJECTORY.md): "#ndbg VERSION [pythonMAJOR.MINOR] [JSON]". Version 2
# names the Python that ran the program (traces differ between versions); version 1 does not.
TRAJECTORY_VERSIONS = tuple(_FORMAT["readVersions"])
_HEADER = re.compile(_FORMAT["header"].lstrip("^"))
_PYTHON = re.compile(_FORMAT["pythonVersion"].lstrip("^").rstrip("$"))


def trajectory_header(text: str, where: str) -> tuple[int, str | None]:
    """(format version, Python minor version or None) of an `ndbg data` text; a text that does not
    start with a header of a version this reads is a clear error."""
    m = _HEADER.match(text)
    if not m:
        raise TokenizerError(f"{where}: the text does not start with a trajectory header (#ndbg 2 python3.11)")
    version, python = int(m[1]), m[2]
    if version not in TRAJECTORY_VERSIONS:
        raise TokenizerError(f"{where}: trajectory format version {version} is not supported (this reads {' and '.join(map(str, TRAJECTORY_VERSIONS))})")
    if python is not None and (version < 2 or not _PYTHON.fullmatch(python)):
        raise TokenizerError(f"{where}: bad Python version {python!r} in a version {version} header")
    return version, python


def read_texts(paths: Iterable[str | Path], limit: int) -> Iterator[str]:
    """The texts of the records of JSONL files, in order, until `limit` characters have been read
    (a tokenizer trains on the first of them: a few million characters are plenty)."""
    left = limit
    for p in paths:
        for rec in read_jsonl(p):
            if left <= 0:
                return
            left -= len(rec["text"])
            yield rec["text"]


def read_jsonl(path: str | Path) -> Iterator[dict]:
    """Records of an `ndbg data` file ({"id", "text", "targets"}), plain or compressed (.xz, .gz:
    the files that travel to a training machine); a bad line or a broken file is a clear error."""
    opener = {".xz": lzma.open, ".gz": gzip.open}.get(Path(path).suffix, open)
    n = 0
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except ValueError as e:
                    raise TokenizerError(f"{path}:{n}: not JSON: {e}") from e
                if not isinstance(rec, dict) or not isinstance(rec.get("text"), str):
                    raise TokenizerError(f'{path}:{n}: a record needs a "text" string')
                yield rec
    except (lzma.LZMAError, EOFError, gzip.BadGzipFile) as e:
        raise TokenizerError(f"{path}: broken compressed file after line {n}: {e}") from e


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m training.tokenizer", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train", help="learn a tokenizer from JSONL trajectories")
    t.add_argument("--data", action="append", required=True, help="JSONL with a text field (repeatable)")
    t.add_argument("--vocab", type=int, default=4096)
    t.add_argument("--limit-chars", type=int, default=20_000_000, help="read at most this many characters")
    t.add_argument("--out", required=True)
    e = sub.add_parser("encode", help="print the token ids of a text")
    e.add_argument("--tokenizer", required=True)
    g = e.add_mutually_exclusive_group(required=True)
    g.add_argument("--text", help="one text: prints its ids")
    g.add_argument("--texts", help="a JSON file with a list of texts: prints a list of id lists")
    s = sub.add_parser("stats", help="characters per token on a JSONL file")
    s.add_argument("--tokenizer", required=True)
    s.add_argument("--data", required=True)
    sub.add_parser("specials", help="print the special tokens as read from adapter/format/format.json")
    a = ap.parse_args(argv)
    try:
        if a.cmd == "specials":
            print(json.dumps(format_special_tokens()))
        elif a.cmd == "encode":
            tok = Tokenizer.load(a.tokenizer)
            if a.text is not None:
                print(json.dumps(tok.encode(a.text)))
            else:
                try:
                    texts = json.loads(Path(a.texts).read_text(encoding="utf-8"))
                except (OSError, ValueError) as err:
                    raise TokenizerError(f"cannot read texts {a.texts}: {err}") from err
                if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
                    raise TokenizerError(f"{a.texts} must hold a JSON list of strings")
                print(json.dumps([tok.encode(t) for t in texts]))
        elif a.cmd == "stats":
            tok = Tokenizer.load(a.tokenizer)
            chars = nbytes = ntok = 0
            for rec in read_jsonl(a.data):
                chars += len(rec["text"])
                nbytes += len(rec["text"].encode())
                ntok += len(tok.encode(rec["text"]))
            print(json.dumps({"chars": chars, "bytes": nbytes, "tokens": ntok, "chars_per_token": round(chars / max(ntok, 1), 3)}))
        else:
            tok = train(read_texts(a.data, a.limit_chars), a.vocab)
            tok.save(a.out)
            print(json.dumps({"out": a.out, "vocab": tok.vocab_size, "merges": len(tok.merges), **tok.stats}))
    except TokenizerError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The trajectory tokenizer: llama.cpp's "gpt-2" pre-tokenizer and BPE, special tokens, training.
(Equality with node-llama-cpp's own tokenization on a real GGUF is test/gguf.test.ts.)"""
import heapq
import json
import random
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from training.tokenizer import (  # noqa: E402
    BYTE_DEC, BYTE_ENC, Tokenizer, TokenizerError, pretokenize, pretokenize_reference, read_jsonl,
    format_special_tokens, split_special, train, trajectory_format, STOP_TOKEN,
)

FIXTURES = REPO / "test" / "fixtures" / "gguf"
GOLDEN = sorted((REPO / "test" / "golden").glob("*.ndbg"))


def corpus(name="train.jsonl"):
    return [r["text"] for r in read_jsonl(FIXTURES / name)]


def llama_bpe(tok: Tokenizer, word: str) -> list:
    """llama.cpp's llm_tokenizer_bpe_session for one word: a queue of bigrams by (rank, left
    position), merged while the pair's text still matches. The reference for Tokenizer._bpe."""
    sym = [tok.tokens[tok.byte_ids[b]] for b in word.encode()]
    prev = list(range(-1, len(sym) - 1))
    nxt = list(range(1, len(sym))) + [-1]
    ranks = {(tok.tokens[a], tok.tokens[b]): r for (a, b), (r, _) in tok.ranks.items()}
    q = []

    def add(left, right):
        if left == -1 or right == -1:
            return
        r = ranks.get((sym[left], sym[right]))
        if r is not None:
            heapq.heappush(q, (r, left, right, sym[left] + sym[right]))

    for i in range(1, len(sym)):
        add(i - 1, i)
    while q:
        _, left, right, text = heapq.heappop(q)
        if not sym[left] or not sym[right] or sym[left] + sym[right] != text:
            continue
        sym[left] += sym[right]
        sym[right] = ""
        nxt[left] = nxt[right]
        if nxt[right] != -1:
            prev[nxt[right]] = left
        add(prev[left], left)
        add(left, nxt[left])
    return [tok.id_of[s] for s in sym if s]


class SpecialTokens(unittest.TestCase):
    def test_read_from_format_json_in_order(self):
        toks = format_special_tokens()
        self.assertEqual(toks[:3], ["<|src_sep|>", "<|frame_sep|>", "<|action_sep|>"])
        self.assertIn("<|inv_breakpoint|>", toks)
        self.assertEqual(toks[-1], "<|exit_never|>")
        self.assertEqual(STOP_TOKEN, "<|action_sep|>")
        # The list is the format's parts in order: separators, events, actions, exits.
        f = trajectory_format()
        parts = [*f["separators"].values(), *f["events"].values(), *("<|%s|>" % k for k in f["actions"]), *f["exits"].values()]
        self.assertEqual(toks, parts)
        node = shutil.which("node")
        if not node or not (REPO / "node_modules" / "tsx").exists():
            self.skipTest("node with tsx is absent: the list was checked against its shape only")
        out = subprocess.run(
            [node, "--import", "tsx", "-e",
             'import("./adapter/format/trajectory.ts").then(m => console.log(JSON.stringify([m.SPECIAL_TOKENS, m.STOP_TOKEN, m.FORMAT_VERSION])))'],
            cwd=REPO, capture_output=True, text=True, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(json.loads(out.stdout), [toks, STOP_TOKEN, f["version"]], "the adapter reads the same definition")

    def test_unreadable_definition_is_a_clear_error(self):
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaisesRegex(TokenizerError, "cannot read the trajectory format"):
                format_special_tokens(Path(d) / "missing.json")
            p = Path(d) / "format.json"
            p.write_text("{not json")
            with self.assertRaisesRegex(TokenizerError, "cannot read the trajectory format"):
                format_special_tokens(p)
            p.write_text(json.dumps({"specialTokens": ["<|a|>", "<|a|>"]}))
            with self.assertRaisesRegex(TokenizerError, "distinct"):
                format_special_tokens(p)
            p.write_text(json.dumps({"specialTokens": ["<|a|>"], "separators": {"a": "<|b|>"}, "stop": "a"}))
            with self.assertRaisesRegex(TokenizerError, "stop names no separator"):
                format_special_tokens(p)

    def test_split_special_keeps_escaped_text(self):
        sp = format_special_tokens()
        frags = split_special("a<|frame_sep|>b<\\|frame_sep|><|arg_sep|><|arg_sep|>", sp)
        self.assertEqual(frags, [(False, "a"), (True, "<|frame_sep|>"), (False, "b<\\|frame_sep|>"),
                                 (True, "<|arg_sep|>"), (True, "<|arg_sep|>")])


class PreTokenizer(unittest.TestCase):
    def test_matches_llama_cpp_splitter_on_random_text(self):
        rng = random.Random(7)
        alphabet = list("ab Z09'sdtmrevlS \n\n\t  \r\x0b\x0c\x1c\x1f.,;:<|>_-=+\"()[]{}#\\") + [
            "é", "ß", "中", "٣", "²", "Ⅳ", "\u00a0", "\u2003", "\u3000", "\u0085", "\u0301", "\U0001F600", "\u200b"]
        for _ in range(3000):
            s = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
            got = pretokenize(s)
            self.assertEqual("".join(got), s)
            self.assertEqual(got, pretokenize_reference(s), repr(s))

    def test_known_splits(self):
        self.assertEqual(pretokenize("    s = 0\n"), ["   ", " s", " =", " 0", "\n"])
        self.assertEqual(pretokenize("it's x  \n"), ["it", "'s", " x", "  \n"])
        self.assertEqual(pretokenize("xs=[14, 11]"), ["xs", "=[", "14", ",", " 11", "]"])
        # U+001C is whitespace to Python but not to llama.cpp
        self.assertEqual(pretokenize("a\x1cb"), ["a", "\x1c", "b"])


class Training(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.texts = corpus()
        cls.tok = train(cls.texts, 1024)

    def test_layout_specials_then_bytes_then_merges(self):
        tok = self.tok
        sp = format_special_tokens()
        self.assertEqual(tok.tokens[:len(sp)], sp)
        self.assertEqual(tok.tokens[len(sp):len(sp) + 256], [BYTE_ENC[b] for b in range(256)])
        self.assertLessEqual(tok.vocab_size, 1024)
        self.assertGreater(len(tok.merges), 300)
        self.assertEqual(tok.token_types()[:len(sp)], [3] * len(sp))
        self.assertEqual(set(tok.token_types()[len(sp):]), {1})
        self.assertEqual(tok.tokens[tok.stop_id], "<|action_sep|>")

    def test_deterministic(self):
        again = train(self.texts, 1024)
        self.assertEqual(again.merges, self.tok.merges)
        self.assertEqual(again.tokens, self.tok.tokens)

    def test_round_trip_and_single_special_tokens(self):
        tok = self.tok
        texts = corpus("heldout.jsonl") + [p.read_text() for p in GOLDEN] + ["héllo ☃ 😀 <\\|x|> \x00\x1f"]
        for t in texts:
            ids = tok.encode(t)
            self.assertEqual(tok.decode(ids), t)
            for s in format_special_tokens():
                self.assertEqual(ids.count(tok.id_of[s]), t.count(s))

    def test_compresses_trajectories(self):
        held = corpus("heldout.jsonl")
        chars = sum(len(t) for t in held)
        toks = sum(len(self.tok.encode(t)) for t in held)
        self.assertGreater(chars / toks, 2.5, "a trained BPE should beat bytes clearly on trajectories")

    def test_bpe_equals_llama_cpp_merge_order(self):
        words = set()
        for t in corpus("heldout.jsonl"):
            for frag_sp, frag in split_special(t, self.tok.special_tokens):
                if not frag_sp:
                    words.update(pretokenize(frag))
        words.update(["aaaaaaa", "    ", "========", "ééé", "😀😀"])
        for w in words:
            self.assertEqual(list(self.tok._bpe(w)), llama_bpe(self.tok, w), repr(w))

    def test_offsets(self):
        t = corpus("heldout.jsonl")[0] + "é€😀x"
        ids, offs = self.tok.encode_with_offsets(t)
        raw = t.encode()
        for i, (tid, o) in enumerate(zip(ids, offs)):
            end = offs[i + 1] if i + 1 < len(ids) else len(raw)
            piece = self.tok.tokens[tid]
            want = piece.encode() if tid in self.tok.special_ids else bytes(BYTE_DEC[c] for c in piece)
            self.assertEqual(raw[o:end], want)

    def test_save_load(self):
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / "tok.json"
            self.tok.save(p)
            back = Tokenizer.load(p)
            t = corpus("heldout.jsonl")[1]
            self.assertEqual(back.encode(t), self.tok.encode(t))
            bad = Path(d) / "bad.json"
            bad.write_text('{"format": "other"}')
            with self.assertRaisesRegex(TokenizerError, "not a ndbg-bpe"):
                Tokenizer.load(bad)
            bad.write_text("{")
            with self.assertRaisesRegex(TokenizerError, "cannot read"):
                Tokenizer.load(bad)

    def test_vocab_below_the_base_is_refused(self):
        with self.assertRaisesRegex(TokenizerError, "below"):
            train(["x"], 100)

    def test_cli_train_and_encode(self):
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "tok.json"
            r = subprocess.run([sys.executable, "-m", "training.tokenizer", "train", "--data", str(FIXTURES / "train.jsonl"),
                                "--vocab", "600", "--out", str(out)], cwd=REPO, capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(json.loads(r.stdout)["vocab"], 600)
            texts = Path(d) / "texts.json"
            texts.write_text(json.dumps(["<|frame_sep|>x = 1\n", "abc"]))
            r = subprocess.run([sys.executable, "-m", "training.tokenizer", "encode", "--tokenizer", str(out), "--texts", str(texts)],
                               cwd=REPO, capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            ids = json.loads(r.stdout)
            self.assertEqual(ids[0][0], 1)
            self.assertEqual(len(ids), 2)
            bad = Path(d) / "bad.jsonl"
            bad.write_text('{"text": "ok"}\nnot json\n')
            r = subprocess.run([sys.executable, "-m", "training.tokenizer", "train", "--data", str(bad), "--vocab", "600",
                                "--out", str(out)], cwd=REPO, capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 1)
            self.assertIn("bad.jsonl:2: not JSON", r.stderr)


if __name__ == "__main__":
    unittest.main()

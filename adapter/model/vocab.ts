// Exact text of generated tokens. llama.cpp's detokenizer cleans spaces for GPT-2 style
// vocabularies (" ," becomes ",", ", 's" becomes ",'s"), which would change reprs; for byte-level
// BPE models the vocabulary stored in the GGUF decodes tokens back to the exact bytes.
import type { LlamaModel, Token } from "node-llama-cpp";

const CONTROL = 3;

/** GPT-2's bytes-to-unicode map, inverted: the character standing for each byte. */
function byteDecoder(): Map<string, number> {
  const printable = (b: number) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  const out = new Map<string, number>();
  let n = 0;
  for (let b = 0; b < 256; b++) out.set(String.fromCodePoint(printable(b) ? b : 256 + n++), b);
  return out;
}

/** A decoder of token ids to text: the vocabulary's bytes for byte-level BPE, else the model's own detokenizer. */
export function vocabDecoder(model: LlamaModel): (ids: readonly Token[]) => string {
  const ggml = (model.fileInfo.metadata as unknown as { tokenizer?: { ggml?: { model?: string; tokens?: string[]; token_type?: number[] } } }).tokenizer?.ggml;
  if (ggml?.model !== "gpt2" || !ggml.tokens || !ggml.token_type) return (ids) => model.detokenize(ids, true);
  const { tokens, token_type } = ggml;
  const byteOf = byteDecoder();
  return (ids) => {
    const bytes: number[] = [];
    for (const id of ids) {
      const t = tokens[id];
      if (t === undefined) continue;
      if (token_type[id] === CONTROL) {
        for (const b of Buffer.from(t, "utf8")) bytes.push(b);
        continue;
      }
      for (const ch of t) {
        const b = byteOf.get(ch);
        if (b !== undefined) bytes.push(b);
      }
    }
    return Buffer.from(bytes).toString("utf8");
  };
}

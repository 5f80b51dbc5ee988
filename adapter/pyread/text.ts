// Python text scanned without a parse: where a bracket closes, and what is code rather than a
// comment. The rules read short texts this way (one statement, one header) where a parse would
// be too much, and a string's brackets and `#` must still be skipped.

/** The index of the bracket that closes the one at `open` in `text` (strings skipped), or -1. */
export function closing(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const ch = text[i];
    if (ch === "'" || ch === '"') {
      const end = text.indexOf(ch, i + 1);
      if (end < 0) return -1;
      i = end;
    } else if (ch === "(" || ch === "[" || ch === "{") depth++;
    else if (ch === ")" || ch === "]" || ch === "}") {
      if (--depth === 0) return i;
    }
  }
  return -1;
}

/** Python text without its comments (a `#` inside a string is no comment). */
export function codeOf(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const q = /^('''|"""|'|")/.exec(text.slice(i, i + 3))?.[1];
    if (q) {
      let j = i + q.length;
      while (j < text.length && !text.startsWith(q, j)) j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + q.length);
      i = j + q.length - 1;
    } else if (text[i] === "#") {
      while (i + 1 < text.length && text[i + 1] !== "\n") i++;
    } else out += text[i];
  }
  return out;
}

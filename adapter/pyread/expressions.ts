// Python expressions read as text, without running or computing anything: whether a text is one
// expression (an entry call, a breakpoint's condition, a log message's {part}), and whether it
// names a variable. What an expression's value is, is CPython's to say (`evaluateValues`,
// adapter/real/sealed.ts).
import { getParser } from "./parser.js";

/** Characters of an expression (also of a value the Debug Console sets a variable to). */
export const MAX_EXPRESSION_LENGTH = 10_000;

const STATEMENT_KEYWORDS = new Set(["import", "from", "def", "class", "return", "del", "pass", "raise", "global", "nonlocal", "assert", "with", "while", "for", "try", "break", "continue", "if", "elif", "else", "except", "finally", "async", "yield"]);

/**
 * Whether `src` is one Python expression as far as its token structure tells (balanced
 * brackets, no statement, no `;` or assignment at the top level): a message when it is not.
 * Used to check an entry call before anything runs; Python has the last word.
 */
export function checkSingleExpression(src: string): string | undefined {
  if (!src.trim()) return "the expression is empty";
  const stack: string[] = [];
  let first = true;
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (c === "\\" && src[i + 1] === "\n") {
      i += 2;
      continue;
    }
    if (/\s/.test(c)) {
      if (c === "\n" && stack.length === 0 && src.slice(i).trim() !== "") return "expected a single expression, found a line break";
      i++;
      continue;
    }
    if (c === "#") {
      // A comment runs to the end of its line.
      while (i < src.length && src[i] !== "\n") i++;
      continue;
    }
    const q = /^([rRbBuUfF]{0,2})('''|"""|'|")/.exec(src.slice(i));
    if (q && ["", "r", "u", "b", "br", "rb", "f", "fr", "rf"].includes(q[1].toLowerCase())) {
      // Skip the string (f-strings too: their braces are not ours to balance).
      let j = i + q[0].length;
      for (;;) {
        if (j >= src.length) return "unterminated string";
        if (src.startsWith(q[2], j)) break;
        // A backslash keeps the next character from ending the string, raw or not.
        if (src[j] === "\\") j++;
        else if (src[j] === "\n" && q[2].length === 1) return "unterminated string";
        j++;
      }
      i = j + q[2].length;
      first = false;
      continue;
    }
    const word = /^[\p{ID_Start}_][\p{ID_Continue}]*/u.exec(src.slice(i))?.[0];
    if (word) {
      if (first && STATEMENT_KEYWORDS.has(word) && !(word === "yield")) return `"${word}" starts a statement, not an expression`;
      i += word.length;
      first = false;
      continue;
    }
    first = false;
    if (c === "(" || c === "[" || c === "{") stack.push(c === "(" ? ")" : c === "[" ? "]" : "}");
    else if (c === ")" || c === "]" || c === "}") {
      if (stack.pop() !== c) return `unbalanced "${c}"`;
    } else if (stack.length === 0) {
      if (c === ";") return "expected a single expression, found \";\"";
      const prev = src[i - 1] ?? "";
      const augmented = src.slice(i - 2, i) === ">>" || src.slice(i - 2, i) === "<<";
      if (c === "=" && src[i + 1] !== "=" && (!"=<>!:".includes(prev) || augmented)) return "expected an expression, found an assignment";
    }
    i++;
  }
  if (stack.length) return `unclosed "${{ ")": "(", "]": "[", "}": "{" }[stack[stack.length - 1]]}"`;
  return undefined;
}

/** Whether Python text reads `name` as a whole name (`p` in `q = p + 1`, not in `x.p` or `pp`). */
export function mentions(text: string, name: string): boolean {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(?<![\\p{ID_Continue}.])${escaped}(?![\\p{ID_Continue}])`, "u").test(text);
}

/**
 * Why `src` is not one Python expression (an entry call, a breakpoint's condition), or undefined:
 * its token structure first (checkSingleExpression), then tree-sitter's grammar of Python, which
 * the text must parse in without an error node. CPython may still refuse what this lets by (it
 * says so when the expression is evaluated); this refuses nothing CPython reads.
 */
export async function expressionProblem(src: string): Promise<string | undefined> {
  if (src.length > MAX_EXPRESSION_LENGTH) return `expression longer than ${MAX_EXPRESSION_LENGTH} characters`;
  const shape = checkSingleExpression(src);
  if (shape) return shape;
  const tree = (await getParser()).parse(`(${src}\n)\n`);
  const bad = tree?.rootNode.hasError ?? true;
  tree?.delete();
  return bad ? "invalid syntax" : undefined;
}

// Does a Python file do anything when run as a script, or does it only define functions? A
// tolerant line scan (the file need not parse): top-level lines that are not definitions,
// imports, decorators, docstrings, comments or `pass` count as module-level code.

export interface PythonFunction {
  name: string;
  /** Parameters without a default value (not self/cls, not *args/**kwargs), in order. */
  required: string[];
}

export interface EntryInfo {
  /** Top-level functions, in order. */
  functions: PythonFunction[];
  /** Whether any top-level statement does something when the file runs. */
  hasModuleCode: boolean;
}

/** Splits a parameter list at top-level commas. */
function splitParams(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = "";
  for (const ch of s) {
    if ("([{".includes(ch)) depth++;
    else if (")]}".includes(ch)) depth--;
    if (ch === "," && depth === 0) {
      out.push(cur);
      cur = "";
    } else cur += ch;
  }
  if (cur.trim()) out.push(cur);
  return out.map((p) => p.trim()).filter(Boolean);
}

function requiredParams(params: string): string[] {
  const out: string[] = [];
  for (const p of splitParams(params)) {
    if (p.startsWith("*") || p === "/" || p.includes("=")) continue;
    const name = p.split(":")[0].trim();
    if (/^[A-Za-z_]\w*$/.test(name) && name !== "self" && name !== "cls") out.push(name);
  }
  return out;
}

export function scanEntry(source: string): EntryInfo {
  const lines = source.replace(/\r\n?/g, "\n").split("\n");
  const functions: PythonFunction[] = [];
  let hasModuleCode = false;
  let depth = 0; // open brackets carried over from earlier lines
  let quote: string | undefined; // an open triple-quoted string
  let continued = false; // the previous line ended with a backslash
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const topLevel = depth === 0 && !quote && !continued && /^\S/.test(line);
    if (topLevel && !line.startsWith("#")) {
      const def = /^(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(/.exec(line);
      if (def) {
        // Parameters may span lines: gather text up to the matching parenthesis.
        let text = line.slice(def[0].length);
        for (let j = i + 1; j < lines.length && !balancedClose(text); j++) text += " " + lines[j];
        functions.push({ name: def[1], required: requiredParams(text.slice(0, closeIndex(text))) });
      } else if (!/^(class\s|@|import\s|from\s|pass\b|("""|'''|"|'|[rRuUbB]{1,2}["']))/.test(line)) {
        hasModuleCode = true;
      }
    }
    // Track brackets, strings and continuations to know where the next statement starts.
    for (let k = 0; k < line.length; k++) {
      const ch = line[k];
      if (quote) {
        if (ch === "\\") k++;
        else if (line.startsWith(quote, k)) {
          k += quote.length - 1;
          quote = undefined;
        }
        continue;
      }
      if (ch === "#") break;
      if (ch === '"' || ch === "'") {
        const triple = line.startsWith(ch.repeat(3), k);
        quote = triple ? ch.repeat(3) : ch;
        k += triple ? 2 : 0;
      } else if ("([{".includes(ch)) depth++;
      else if (")]}".includes(ch)) depth = Math.max(0, depth - 1);
    }
    if (quote && quote.length === 1) quote = undefined; // an unterminated short string ends with its line
    continued = /\\$/.test(line);
  }
  return { functions, hasModuleCode };
}

/** Index of the ")" closing a parameter list whose "(" came just before `text`, or text.length. */
function closeIndex(text: string): number {
  let depth = 1;
  for (let i = 0; i < text.length; i++) {
    if ("([{".includes(text[i])) depth++;
    else if (")]}".includes(text[i]) && --depth === 0) return i;
  }
  return text.length;
}

const balancedClose = (text: string): boolean => closeIndex(text) < text.length;

/** The call offered for a module of functions: the first function with its required parameters. */
export function suggestedCall(info: EntryInfo): { value: string; selection: [number, number] } | undefined {
  const f = info.functions[0];
  if (!f) return undefined;
  const args = f.required.length ? f.required.join(", ") : "";
  const value = `${f.name}(${args})`;
  return { value, selection: [f.name.length + 1, f.name.length + 1 + args.length] };
}

// Why an answer is not one of the states `Reach.next` allows: its event, function, depth, line,
// value, output and locals checked against each shape that could stand there, and the first
// reason given. The model's dialects check every parsed answer with it before it is returned,
// and the tests check real traces with it, so both read the one judgement the grammar is built from.
import type { Frame, Step } from "../format/trajectory.js";
import type { Next, NextFrame } from "./shapes.js";

/** Why `step` is not a state `next` allows, or undefined when it is one. */
export function refusal(next: Next, step: Step, prev: Frame | undefined): string | undefined {
  if (step.exit) return next.exits.includes(step.exit.status) ? undefined : `the program cannot exit here (${step.exit.status})`;
  const f = step.frame;
  if (!f) return "no state";
  if (f.file !== undefined) return undefined;
  const cands = next.frames.filter((n) => n.event === f.event && n.func.func === f.func);
  if (!cands.length) return `a ${f.event} event in ${f.func} cannot follow here`;
  const depthOk = (n: NextFrame): boolean => (n.depth === "any" ? true : n.depth === "deeper" ? f.depth >= 1 : n.depth === f.depth);
  const atDepth = cands.filter(depthOk);
  if (!atDepth.length) return `${f.func} cannot be at depth ${f.depth} here`;
  const onLine = atDepth.filter((n) => n.lines.includes(f.line));
  if (!onLine.length) return `a ${f.event} event cannot stand on line ${f.line} of ${f.func} here`;
  const valued = onLine.filter((n) => n.value === "maybe" || (n.value === "yes") === (f.value !== undefined));
  if (!valued.length) return f.value === undefined ? `a ${f.event} on line ${f.line} needs a value` : `a ${f.event} on line ${f.line} has no value`;
  const written = valued.filter((n) => n.stdout === undefined || n.stdout === (f.stdout ?? ""));
  if (!written.length) return `line ${prev?.line} writes ${JSON.stringify(valued[0].stdout)}, not ${JSON.stringify(f.stdout ?? "")}`;
  const why = written.map((n) => localsRefusal(n, f.locals, prev, f.value));
  return why.includes(undefined) ? undefined : why[0];
}

function localsRefusal(n: NextFrame, locals: Record<string, string>, prev: Frame | undefined, value: string | undefined): string | undefined {
  const g = n.func;
  const names = Object.keys(locals);
  const allowed = new Set([...g.required, ...(n.optional ?? g.optional)]);
  const stray = names.filter((x) => !allowed.has(x));
  if (stray.length) return `${g.func} has no local ${stray.map((x) => JSON.stringify(x)).join(", ")}`;
  const missing = g.required.filter((x) => !names.includes(x));
  if (missing.length) return `${g.func} lost its parameter${missing.length > 1 ? "s" : ""} ${missing.join(", ")}`;
  // A line step inside one call writes changed locals only: none of the others can be gone.
  if (n.locals === "delta" && prev && Object.keys(prev.locals).some((x) => !names.includes(x))) return `a line step of ${g.func} dropped a local`;
  if (n.changes && prev) {
    for (const x of names) {
      if (Object.hasOwn(prev.locals, x) && prev.locals[x] === locals[x]) continue;
      if (!n.changes.has(x)) return `${x} cannot change on line ${prev.line}`;
      const starts = n.changes.get(x);
      if (starts && !starts.some((p) => locals[x].startsWith(p)))
        return Object.hasOwn(prev.locals, x) ? `${x} cannot change its type on line ${prev.line}` : `line ${prev.line} binds ${x} to ${starts.join(" or ")}`;
    }
  }
  if (n.keep) {
    const order = n.keep.map((k) => k.name);
    // (after the parameters, which come first in a function's frame)
    const from = g.required.length;
    if (names.slice(from, from + order.length).join(",") !== order.join(",")) return `${g.func}'s names are ${order.join(", ")} first, in that order`;
    for (const k of n.keep) {
      if (k.value !== undefined && locals[k.name] !== k.value) return `${k.name} cannot change here`;
      if (k.starts && !k.starts.some((p) => locals[k.name].startsWith(p))) return `${k.name} cannot change its type here`;
    }
  }
  if (n.valueIs !== undefined && value !== undefined && value !== n.valueIs) return `a return of ${g.func} is ${n.valueIs}`;
  // (a value the state already had stays: the user may have set it)
  const had = (x: string): boolean => prev?.locals[x] === locals[x] || !!n.keep?.some((k) => k.name === x && k.value === locals[x]);
  const wrong = names.find((x) => g.made.has(x) && locals[x] !== g.made.get(x) && !had(x));
  if (wrong) return `${wrong} is ${g.made.get(wrong)} in ${g.func}, not ${locals[wrong]}`;
  const computed = [...(n.values ?? [])].find(([x, v]) => locals[x] !== v);
  if (computed) return `line ${prev?.line} sets ${computed[0]} to ${computed[1]}, not ${locals[computed[0]]}`;
  const unbound = (n.must ?? []).filter((x) => !names.includes(x));
  if (unbound.length) return `line ${prev?.line} assigns ${unbound.join(", ")}, which the next line does not have`;
  return undefined;
}

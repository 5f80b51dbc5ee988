// The call stack at a state of the history, and the values an expression reads there without
// running anything: the top frame's locals with the module's names as its globals, a local as the
// state records it, an object's child as the run recorded it. A state's own values are exact, so
// the engine answers from them before it asks an evaluator or the predictor.
import type { Frame } from "../format/trajectory.js";
import { rootName, valueAtPath } from "../format/values.js";
import type { Evaluated, Predicted, Predictor } from "./predictor.js";

/**
 * The call stack at the last state of `path` (a history up to that state), innermost first:
 * that state's frame, then its callers as `predictor` knows them, else as `path` shows them.
 */
export function stackAt(path: readonly Predicted[], predictor: Pick<Predictor, "callers">): Frame[] {
  const cur = path.at(-1)?.step.frame;
  if (!cur) return [];
  const stack = callersOf(path, cur, predictor);
  // At a return, the caller as the run shows it then (Frame.caller), not its state before the call.
  return cur.caller ? [cur, cur.caller, ...stack.slice(stack[1]?.depth === cur.caller.depth ? 2 : 1)] : stack;
}

/** The state `cur` at the end of `path`, then its callers as the predictor knows them, else each caller's latest state in `path`. */
function callersOf(path: readonly Predicted[], cur: Frame, predictor: Pick<Predictor, "callers">): Frame[] {
  const known = predictor.callers?.(path);
  if (known) return [cur, ...known];
  const out = [cur];
  let want = cur.depth - 1;
  for (let k = path.length - 2; k >= 0 && want >= 0; k--) {
    const f = path[k].step.frame;
    if (!f || f.depth > want) continue; // a deeper frame that has finished
    if (f.event === "return") {
      // That frame at this depth had finished: the caller at this depth is not known.
      want = f.depth - 1;
      continue;
    }
    out.push(f);
    want = f.depth - 1;
  }
  return out;
}

/**
 * The names an expression reads in the top frame of `stack` (innermost first), as Python looks
 * them up: its locals, then the program's globals (its <module> frame's names, where that frame
 * is on the stack and the top frame is in the program's own file).
 */
export function namesOf(stack: readonly Frame[]): Record<string, string> {
  const [top] = stack;
  if (!top) return {};
  const globals = globalsOf(stack);
  return globals ? { ...globals.locals, ...top.locals } : top.locals;
}

/** The <module> frame whose names are the top frame's globals (see namesOf), where it is on the stack. */
function globalsOf(stack: readonly Frame[]): Frame | undefined {
  const [top] = stack;
  const module = stack.at(-1);
  return top && module && module !== top && module.func === "<module>" && module.file === undefined && top.file === undefined ? module : undefined;
}

/**
 * An object, or an object's child, that the run recorded in the top frame of `stack` (for a name
 * that frame does not hold, in its globals' frame), named exactly as the Variables view names it:
 * its repr, and what opens of it. CPython has no value for an object known by its repr; the run had one.
 */
export function recordedValue(stack: readonly Frame[], expression: string): Evaluated | undefined {
  const [top] = stack;
  const root = rootName(expression);
  const frame = root !== undefined && !Object.hasOwn(top.locals, root) ? (globalsOf(stack) ?? top) : top;
  if (!frame.objects) return undefined;
  const node = valueAtPath(frame.locals, frame.objects, expression);
  return node && { value: node.display, path: expression, objects: frame.objects };
}

/**
 * A local of `frame` (or a local object's child, as the Variables view names it) as the state
 * records it: the value the frame holds at this state. Not a global read from another frame's
 * state, which a callee may have changed since.
 */
export function ownValue(frame: Frame | undefined, expression: string): Evaluated | undefined {
  const root = rootName(expression);
  if (!frame || root === undefined || !Object.hasOwn(frame.locals, root)) return undefined;
  if (root === expression) return { value: frame.locals[root], path: root, ...(frame.objects ? { objects: frame.objects } : {}) };
  return recordedValue([frame], expression);
}

// Compare mode as the debugger shows it: the top frame's two scopes ("Predicted" with each value
// that differs from the real one marked, and "Real (debugpy)"), their variables, and the debug
// console's lines. Everything here is read from the state the engine stands at and the
// comparison's pairs; it returns DAP bodies and text, and the session sends them.
import type { DebugProtocol } from "@vscode/debugprotocol";
import type { ComparePredictor } from "../predictors/compare.js";
import { checkPair, describeAgreement, describeDifference, stateLabel, type Pair } from "../predictors/comparePairs.js";
import { REAL, scopeName, type Origin } from "../session/marks.js";
import type { Frame, Objects } from "../format/trajectory.js";
import { reprToNode, type ValueNode } from "../format/values.js";

/** The session's way of turning a value into a DAP variable (it owns the variable handles). */
export type MakeVariable = (name: string, node: ValueNode, path?: string, origin?: Origin, objects?: Objects) => DebugProtocol.Variable;

/** The top frame's two scopes, given the handles the session made for them. */
export function compareScopes(origin: Origin, refs: { predicted: number; real: number }): DebugProtocol.Scope[] {
  return [
    { name: scopeName(origin, "Predicted", "Predicted"), variablesReference: refs.predicted, expensive: false, presentationHint: "locals" },
    { name: "Real (debugpy)", variablesReference: refs.real, expensive: false },
  ];
}

/**
 * One side's variables at the current stop. `shown` is the state the engine stands at (after an
 * edit or a resync): the predicted side is that state with each value that differs from the
 * real one marked ("3  ≠ real 4"); the real side is the real state as debugpy shows it, in the
 * predicted state's order.
 */
export function compareVariables(pair: Pair | undefined, shown: Frame | undefined, side: "predicted" | "real", origin: Origin, variable: MakeVariable): DebugProtocol.Variable[] {
  if (!pair || !shown) throw new Error("there is no state to compare at this stop");
  const real = pair.real;
  const rf = real.step.frame;
  const check = checkPair({ frame: shown }, real);
  const fixed = (v: DebugProtocol.Variable): DebugProtocol.Variable => ({ ...v, presentationHint: { kind: "virtual", attributes: ["readOnly"] } });
  const info = (name: string, value: string): DebugProtocol.Variable => fixed({ name, value, variablesReference: 0 });
  const vars: DebugProtocol.Variable[] = [];
  if (side === "predicted") {
    const placeDiffers = check && (!check.event || !check.place || check.line === false);
    vars.push(info("(state)", stateLabel({ frame: shown }) + (placeDiffers ? `  ≠ real ${stateLabel(real.step, real.unobserved)}` : "")));
    if (shown.event === "return" || shown.event === "exception") {
      const v = fixed(variable(shown.event === "return" ? "(return)" : "(exception)", reprToNode(shown.value ?? "(none)"), undefined, origin));
      if (check?.value === false) v.value = `${v.value}  ≠ real ${rf?.value ?? "(none)"}`;
      vars.push(v);
    }
    for (const [name, repr] of Object.entries(shown.locals)) {
      const v = variable(name, reprToNode(repr), name, origin, shown.objects);
      if (check?.differing.includes(name)) v.value = `${v.value}  ≠ real ${rf?.locals[name] ?? "(none)"}`;
      vars.push(v);
    }
    for (const name of check?.differing ?? []) if (!(name in shown.locals) && rf) vars.push(info(name, `(none)  ≠ real ${rf.locals[name]}`));
    return vars;
  }
  const notes: string[] = [];
  if (real.origin === "rebuilt") notes.push("rebuilt: debugpy does not stop here");
  if (real.unobserved.length && real.origin !== "cut") notes.push(`not observed: ${real.unobserved.join(", ")}`);
  vars.push(info("(state)", real.origin === "cut" ? `no real state: ${real.note ?? "its side has ended"}` : stateLabel(real.step, real.unobserved) + (notes.length ? ` (${notes.join("; ")})` : "")));
  if (!rf) return vars;
  if (rf.event === "return" || rf.event === "exception") {
    const name = rf.event === "return" ? "(return)" : "(exception)";
    vars.push(real.unobserved.includes("value") ? info(name, "(not observed)") : fixed(variable(name, reprToNode(rf.value ?? "(none)"), undefined, REAL)));
  }
  if (real.unobserved.includes("locals")) vars.push(info("(locals)", "not observed by debugpy here"));
  else {
    // In the predicted state's order, side by side; names only the real state has last.
    const order = Object.keys(shown.locals);
    const rank = (k: string): number => (order.includes(k) ? order.indexOf(k) : order.length);
    const names = Object.keys(rf.locals).sort((a, b) => rank(a) - rank(b));
    // An object opens into what debugpy showed of it at that stop (Frame.objects).
    for (const name of names) vars.push({ ...variable(name, reprToNode(rf.locals[name]), name, REAL, rf.objects), presentationHint: { attributes: ["readOnly"] } });
  }
  return vars;
}

/** Compare mode's debug console: the comparison's notes, one line per new pair, a summary at the end. */
export class CompareConsole {
  private shown = 0;
  private summarized = false;

  constructor(readonly of: ComparePredictor) {}

  /** The lines since the last call; `ended`: the session is at the program's exit. */
  lines(ended: boolean): string[] {
    const cmp = this.of;
    const out = cmp.takeNotes();
    const a = cmp.agreement();
    for (; this.shown < cmp.pairs.length; this.shown++) {
      const p = cmp.pairs[this.shown];
      const what = p.index === 0 ? "first state" : `step ${p.index} (${p.action})`;
      const figures = a.steps ? ` · ${describeAgreement(a)}` : "";
      out.push(`compare · ${what}: ${describeDifference(p)}${p.resynced ? " (resynced: the next step starts from the real state)" : ""}${figures}`);
    }
    if (ended && !this.summarized) {
      this.summarized = true;
      out.push(`Compare summary over ${a.steps} steps: ${describeAgreement(a)}; per step: debugpy ${a.realMs} ms, prediction ${a.predictedMs} ms.`);
    }
    return out;
  }
}

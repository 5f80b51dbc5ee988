// What the client is shown at the current stop: the stack (frame ids are the stack's indices + 1;
// at a return debugpy shows in the caller, the stack starts at the caller: `top`), each frame's
// scopes and variables, an expression's value, and a value set there. The session sets the stack
// at each stop; this answers the requests that read it.
import { InvalidatedEvent, OutputEvent, Scope } from "@vscode/debugadapter";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { RETURN_VALUE, type Evaluated } from "../engine/predictor.js";
import type { Frame } from "../format/trajectory.js";
import { cutText, reprToNode } from "../format/values.js";
import { Origins, scopeName, type Origin } from "../session/marks.js";
import type { Session } from "../session/session.js";
import { isAbort } from "../system/abort.js";
import { compareScopes, compareVariables, type MakeVariable } from "./compare.js";
import { markEvaluation } from "./marks.js";
import { returnName } from "./stops.js";
import { VariableStore, page } from "./variables.js";

/** What the view asks of its session. */
export interface StopHost {
  core(): Session | undefined;
  /** The launch's lowConfidence: below it a predicted value is marked. */
  threshold(): number;
  send(event: DebugProtocol.Event): void;
  /** Compare mode: the comparison said again after an edit. */
  compared(): void;
}

/** The fields of a variable a setVariable or evaluate reply carries. */
const reply = (v: DebugProtocol.Variable) => ({ value: v.value, type: v.type, variablesReference: v.variablesReference, namedVariables: v.namedVariables, indexedVariables: v.indexedVariables });

export class StopView {
  /** The stack at the current stop, innermost first (frame ids are index + 1). */
  frames: Frame[] = [];
  /**
   * The first frame of the stack the client is shown: at a return that debugpy shows in the
   * caller (shownInCaller), the caller's (1), "(return) f" in its Locals; else the state's own (0).
   */
  top = 0;
  readonly variables = new VariableStore();

  constructor(private readonly host: StopHost) {}

  /** Where each value of the current stop comes from (adapter/session/marks.ts). */
  get origins(): Origins {
    const core = this.host.core();
    return new Origins({ engine: core?.engine, predictor: core?.predictor, predicts: core?.predicts ?? false, threshold: this.host.threshold(), frames: this.frames });
  }

  /** A new stop: its stack, and where the client's stack starts. */
  show(frames: Frame[], top: number): void {
    this.frames = frames;
    this.top = top;
  }

  /** The stack's frame of a client's frame id (none: the top frame shown). */
  frameAt(frameId: number | undefined): { frame: Frame; index: number } | undefined {
    const index = (frameId ?? this.top + 1) - 1;
    const frame = index >= this.top ? this.frames[index] : undefined;
    return frame ? { frame, index } : undefined;
  }

  /** The frames shown from `startFrame`, at most `levels` of them, each with its id; and how many are shown in all. */
  stack(startFrame = 0, levels?: number): { frames: { id: number; frame: Frame }[]; total: number } {
    const start = this.top + startFrame;
    const count = levels ? levels : this.frames.length;
    return { frames: this.frames.slice(start, start + count).map((frame, i) => ({ id: start + i + 1, frame })), total: this.frames.length - this.top };
  }

  scopes(frameId: number | undefined): DebugProtocol.Scope[] | string {
    const at = this.frameAt(frameId);
    if (!at) return `no frame ${frameId} at this stop`;
    const origins = this.origins;
    if (this.host.core()?.comparison && at.index === 0) {
      const refs = { predicted: this.variables.ref({ kind: "compare", side: "predicted" }), real: this.variables.ref({ kind: "compare", side: "real" }) };
      return compareScopes(origins.frame(0), refs);
    }
    const scope = new Scope(scopeName(origins.frame(at.index)), this.variables.ref({ kind: "scope", frame: at.index }), false) as DebugProtocol.Scope;
    scope.presentationHint = "locals";
    const scopes: DebugProtocol.Scope[] = [scope];
    // The module's names, as its frame stands on the stack (the program's outermost frame, when it runs from its top).
    const module = this.frames.length - 1;
    if (this.frames[module].func === "<module>" && this.frames[module].file === undefined) scopes.push(new Scope(scopeName(origins.frame(module), "Globals", "Predicted globals"), this.variables.ref({ kind: "scope", frame: module, globals: true }), false));
    return scopes;
  }

  /** A variables request's answer, or why there is none. */
  variablesOf(args: DebugProtocol.VariablesArguments): DebugProtocol.Variable[] | string {
    const c = this.variables.get(args.variablesReference);
    if (!c) return "these variables belong to an earlier stop";
    const origins = this.origins;
    if (c.kind === "compare") {
      const variable: MakeVariable = (...a) => this.variables.variable(...a);
      try {
        return compareVariables(this.host.core()?.comparison?.pairs.at(-1), this.frames[0], c.side, origins.frame(0), variable);
      } catch (e) {
        return e instanceof Error ? e.message : String(e);
      }
    }
    let vars: DebugProtocol.Variable[] = [];
    if (c.kind === "scope") {
      const frame = this.frames[c.frame];
      if (!frame) return "this frame is gone";
      const origin = origins.frame(c.frame);
      const returned = c.frame === this.top && !c.globals ? this.returnShown(origins) : undefined;
      if (returned) {
        // As debugpy shows it: the value the callee returned, in the caller's Locals (a hole's value in hybrid mode is the model's),
        // settable at the return itself where its value may be edited (a predicted one, a hole's).
        const rv = this.variables.variable(returned.name, reprToNode(returned.value), undefined, returned.origin);
        rv.presentationHint = returned.settable ? { kind: "virtual" } : { kind: "virtual", attributes: ["readOnly"] };
        vars.push(rv);
      }
      if (c.frame === 0 && !c.globals && frame.event === "return" && frame.value !== undefined) {
        // Settable where the state may be edited: a predicted return, or a hole's value in hybrid mode.
        const rv = this.variables.variable(RETURN_VALUE, reprToNode(frame.value), undefined, origins.value(0, RETURN_VALUE));
        rv.presentationHint = this.editRefusal(RETURN_VALUE) ? { kind: "virtual", attributes: ["readOnly"] } : { kind: "virtual" };
        vars.push(rv);
      }
      if (c.frame === 0 && !c.globals && frame.event === "exception" && frame.value !== undefined) {
        const ev = this.variables.variable("(exception)", reprToNode(frame.value), undefined, origin);
        ev.presentationHint = { kind: "virtual", attributes: ["readOnly"] };
        vars.push(ev);
      }
      for (const [name, repr] of Object.entries(frame.locals)) vars.push(this.variables.variable(name, reprToNode(repr), name, origins.value(c.frame, name), frame.objects, c.frame));
      vars = this.variables.grouped(vars);
    } else if (c.kind === "group") vars = c.variables;
    else vars = this.variables.children(c);
    return page(vars, c, args);
  }

  /**
   * The return value shown in the top frame, as debugpy shows it, "(return) f": at a return shown
   * in the caller, the state's own (settable where its value may be edited); else what a callee
   * returned just before this state (Engine.returnedBefore).
   */
  private returnShown(origins: Origins): { name: string; value: string; origin: Origin; settable: boolean } | undefined {
    const engine = this.host.core()?.engine;
    const here = engine?.current.step.frame;
    if (!engine || !here) return undefined;
    if (this.top === 1) return here.value === undefined ? undefined : { name: returnName(here.func), value: here.value, origin: origins.returned(engine.current), settable: !this.editRefusal(RETURN_VALUE) };
    const r = engine.returnedBefore();
    return r && { name: returnName(r.func), value: r.value, origin: origins.returned(r.at), settable: false };
  }

  /** Why `name` (a local of the current state, or RETURN_VALUE) cannot be set, when it cannot. */
  editRefusal(name: string): string | undefined {
    const core = this.host.core();
    return core ? core.editRefusal(name) : "the program has not been launched";
  }

  /**
   * An expression's value in the frame `frameId` (hover, watch, the Debug Console). A line of the
   * Debug Console keeps its effects where the run can take it as input (predict mode): `x = 5`,
   * `cart.add("pen", 1)`; hovers and watches only read.
   */
  async evaluate(args: DebugProtocol.EvaluateArguments, signal: AbortSignal): Promise<DebugProtocol.EvaluateResponse["body"]> {
    const core = this.host.core()!;
    const engine = core.engine;
    const expression = args.expression.trim();
    const at = this.frameAt(args.frameId)?.index ?? 0;
    let result: Evaluated;
    const runs = args.context === "repl" && engine.executes;
    try {
      result = (runs ? await this.executed(() => core.execute(expression, at, signal)) : undefined) ?? (await engine.evaluate(expression, signal, at));
    } catch (e) {
      if (isAbort(e)) throw new Error("cancelled");
      throw e;
    }
    // What the expression wrote (a method that prints) goes to the Debug Console first.
    if (result.stdout) this.host.send(new OutputEvent(result.stdout, "stdout"));
    const node = reprToNode(result.value);
    const origin = this.origins.value(at, expression);
    const v = this.variables.variable(expression, node, result.path ?? expression, origin, result.objects, at);
    return markEvaluation({ result: result.value, type: node.type || undefined, variablesReference: v.variablesReference, namedVariables: v.namedVariables, indexedVariables: v.indexedVariables }, origin, args.context);
  }

  /** Sets a local of the frame shown first (Session.setValue): at a return shown in the caller, its "(return) f" is the return's value. */
  async setVariable(args: DebugProtocol.SetVariableArguments): Promise<DebugProtocol.SetVariableResponse["body"]> {
    const core = this.host.core()!;
    const c = this.variables.get(args.variablesReference);
    if (c?.kind === "compare" && c.side === "real") throw new Error("the real program's variables are shown, not set: compare mode edits the predicted state");
    const top = this.top;
    if (!c || (c.kind === "scope" && c.frame !== top) || c.kind === "node" || c.kind === "group") throw new Error("only the locals of the current frame can be set");
    const name = top === 1 && args.name === returnName(this.frames[0].func) ? RETURN_VALUE : args.name;
    // Predict mode: `name = value` runs in the program's frame, as debugpy sets a value; elsewhere the state is edited.
    const set = await this.executed(() => core.setValue(name, args.value, top, undefined, args.name), (s) => "assigned" in s);
    if ("assigned" in set) {
      const shown = this.frames[top];
      const now = shown?.locals[name];
      if (now === undefined) throw new Error(`${cutText(args.name)} is no longer a local here`);
      return reply(this.variables.variable(name, reprToNode(now), name, this.origins.value(top, name), shown.objects, top));
    }
    this.frames = core.engine.stack();
    this.host.compared();
    return reply(this.variables.variable(args.name, reprToNode(set.repr), name === RETURN_VALUE ? undefined : name));
  }

  /**
   * A line run with its effects kept (Session.execute, setValue): the session stands at the state
   * it left, so the views read that state (the client asked to read the variables again); what it
   * wrote goes to the Debug Console, the error it raised too.
   */
  private async executed<T>(run: () => Promise<T>, ran: (result: T) => boolean = () => true): Promise<T> {
    const engine = this.host.core()!.engine;
    const before = engine.current;
    const changed = (): void => {
      if (engine.current === before) return;
      this.frames = engine.stack();
      this.host.send(new InvalidatedEvent(["variables"]));
    };
    try {
      const result = await run();
      // (a value set by editing the state, not by running a line, is shown by the caller)
      if (ran(result)) changed();
      return result;
    } catch (e) {
      changed();
      const stdout = (e as { stdout?: unknown }).stdout;
      if (typeof stdout === "string" && stdout) this.host.send(new OutputEvent(stdout, "stdout"));
      throw e;
    }
  }
}

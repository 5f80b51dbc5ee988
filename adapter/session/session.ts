// One debugging session, whatever protocol speaks for it (DAP in adapter/dap/, MCP in adapter/mcp/):
// the launch made into a predictor and an engine, the first stop, why the session stands where it
// stands after a move, the output each state wrote (told once), and the edits a user makes at a stop.
// Each protocol maps this to its own messages; neither redoes it.
import { isScriptEntry, shownInCaller } from "../engine/stepping.js";
import type { Engine, Granularity } from "../engine/engine.js";
import type { Evaluated, Hole, Predicted, Predictor } from "../engine/predictor.js";
import type { DataHit, Watch } from "../engine/watches.js";
import type { ComparePredictor } from "../predictors/compare.js";
import { initPython } from "../pyread/parser.js";
import { cutText } from "../format/values.js";
import { serialize, serializeMany } from "../format/trajectory.js";
import { basename } from "node:path";
import { isAbort } from "../system/abort.js";
import type { LaunchConfig } from "./launch.js";
import { unmarked } from "./marks.js";
import { comparisonOf, createEngine, createPredictor, modelPredicts, type PredictorHooks } from "./modes.js";

/** How the session came to its current state. */
export type Moved = "entry" | "step" | "continue" | "back" | "edited" | "pause";

/**
 * Why the session stands where it stands after a move, from the engine alone (a protocol adds what
 * only it knows: its breakpoints' ids, its own words): the program's end, a hole that stops it, an
 * exception, a watched value that changed; else the move's own end.
 */
export type Cause =
  | { kind: "exit" }
  | { kind: "hole"; hole: Hole }
  | { kind: "exception"; value: string | undefined }
  | { kind: "data"; hit: DataHit }
  | { kind: "moved" };

/**
 * A move the user asks for. A step stops as debugpy does (Engine.stepAsDebugger) unless `exact`
 * asks for the paper's one action as it is (a client's "instruction" granularity, MCP's
 * step_return); compare mode always takes the actions as they are, so that the call and return
 * events it predicts are compared with the real run's too. "origin": back to where a watched
 * value was last set.
 */
export type Move =
  | { kind: "step_into" | "step_over" | "step_out"; exact?: boolean }
  | { kind: "continue" }
  | { kind: "back"; granularity?: Granularity }
  | { kind: "reverse" }
  | { kind: "origin"; watch: Watch };

/** A value set at a stop: run in the program's frame (predict mode), or the state edited (the value's repr). */
export type SetValue = { assigned: Evaluated } | { edited: Predicted; repr: string };

export class Session {
  /** States whose output has been told (by frame or exit object: history copies share them). */
  private printed = new WeakSet<object>();

  private constructor(
    readonly config: LaunchConfig,
    readonly predictor: Predictor,
    readonly engine: Engine,
  ) {}

  /** The launch's predictor (the program recorded, run sealed, the model loaded: see modes.ts) and its engine. */
  static async open(config: LaunchConfig, hooks: PredictorHooks): Promise<Session> {
    await initPython();
    const predictor = await createPredictor(config, hooks);
    return new Session(config, predictor, createEngine(predictor, config));
  }

  /**
   * Stop on entry: a script starts with its module's call event, on its first statement's line;
   * stopping on entry stops, as debugpy does, on that line's own event, so the first Step Over moves on.
   */
  async toFirstLine(signal: AbortSignal): Promise<void> {
    if (isScriptEntry(this.engine.current)) await this.engine.step("step_into", signal);
  }

  /**
   * Makes a move; true where a Step Over ended deeper than it started: a breakpoint inside the
   * call it stepped over stopped it (told as a breakpoint's stop).
   */
  async move(m: Move, signal: AbortSignal): Promise<boolean> {
    const e = this.engine;
    switch (m.kind) {
      case "continue":
        await e.continue(signal);
        return false;
      case "back":
        await e.stepBack(signal, m.granularity);
        return false;
      case "reverse":
        await e.reverseContinue(signal);
        return false;
      case "origin":
        await e.valueOrigin(m.watch, signal);
        return false;
    }
    const f = e.current.step.frame;
    // (a return shown in its caller stands at the caller's depth)
    const depth = f ? (shownInCaller(f) ? f.depth - 1 : f.depth) : 0;
    const kind = m.kind === "step_out" ? "step_return" : m.kind;
    if (m.exact || this.comparison) await e.step(kind, signal);
    else await e.stepAsDebugger(kind, signal);
    return m.kind === "step_over" && (e.current.step.frame?.depth ?? -1) > depth;
  }

  /** Whether the states are the model's (predict mode's model alone, compare mode); a sealed run's are real but for its holes. */
  get predicts(): boolean {
    return modelPredicts(this.config, this.predictor);
  }

  /** Compare mode's predictor (its pairs, sides and resync), where the session has one. */
  get comparison(): ComparePredictor | undefined {
    return comparisonOf(this.predictor);
  }

  /**
   * Why the session stands at its current state after a move (`moved`: "reverse" a Reverse
   * Continue, "origin" a jump back to where a value was set): a hole met going forwards, an
   * exception, a watched value's change. A data breakpoint's hit is taken here, once per move.
   */
  cause(moved: Moved | "reverse" | "origin"): Cause {
    const engine = this.engine;
    const hit = engine.takeDataHit();
    const cur = engine.current;
    const frame = cur.step.frame;
    if (!frame) return { kind: "exit" };
    const hole = moved !== "back" && moved !== "reverse" && moved !== "edited" ? engine.holeAt(cur) : undefined;
    if (hole) return { kind: "hole", hole };
    if (frame.event === "exception" && moved !== "edited") return { kind: "exception", value: frame.value };
    if (hit) return { kind: "data", hit };
    return { kind: "moved" };
  }

  /** The states reached since output was last told, oldest first, each now told: what they wrote is for the caller to tell. */
  unseen(): Predicted[] {
    const engine = this.engine;
    const hist = engine.history;
    let k = engine.cursor;
    while (k >= 0 && !this.printed.has(key(hist[k]))) k--;
    const out = hist.slice(k + 1, engine.cursor + 1);
    for (const p of out) this.printed.add(key(p));
    return out;
  }

  /** A state whose output must not be told again (an edited one, one a statement left: its output was told on the way). */
  told(p: Predicted): void {
    this.printed.add(key(p));
  }

  /** Why `name` (a local of the current state, or RETURN_VALUE) cannot be set, when it cannot. */
  editRefusal(name: string): string | undefined {
    const p = this.predictor;
    return p.refuseEdit ? p.refuseEdit(this.engine.current, name) : p.editRefusal;
  }

  /**
   * Sets `name` at the stop, in the stack's frame `frame`: in predict mode `name = value` runs in
   * the program's frame and the run goes on from it (engine.assign); elsewhere the value, a Python
   * expression over the frame's values evaluated by CPython, replaces the state's (engine.setVariable).
   * The state the edit leaves is told (its output was, on the way). Errors say what could not be set.
   */
  async setValue(name: string, value: string, frame: number, signal?: AbortSignal, shown = name): Promise<SetValue> {
    const refusal = this.editRefusal(name);
    if (refusal) throw new Error(refusal);
    const engine = this.engine;
    // (what the line wrote before it failed stays with the error, for the console)
    const cannot = (e: unknown): never => {
      if (isAbort(e)) throw e;
      const stdout = (e as { stdout?: unknown }).stdout;
      throw Object.assign(new Error(`cannot set ${cutText(shown)} to ${cutText(value)}: ${e instanceof Error ? e.message : String(e)}`), typeof stdout === "string" ? { stdout } : {});
    };
    const assigned = await this.keeping(() => engine.assign(name, unmarked(value), signal, frame)).catch(cannot);
    if (assigned) return { assigned };
    const repr = await engine.valueFor(unmarked(value), signal).catch(cannot);
    const edited = engine.setVariable(name, repr, frame);
    this.comparison?.edited(edited, engine.cursor);
    this.told(edited);
    return { edited, repr };
  }

  /**
   * A line of the Debug Console with its effects kept, where the run takes it as input (predict
   * mode: `x = 5`, `cart.add("pen", 1)`); undefined where lines are only evaluated.
   */
  execute(expression: string, frame: number, signal?: AbortSignal): Promise<Evaluated | undefined> {
    return this.keeping(() => this.engine.execute(expression, signal, frame));
  }

  /** Runs an edit that may leave the session at another state: that state's output is not told again. */
  private async keeping<T>(run: () => Promise<T>): Promise<T> {
    const before = this.engine.current;
    try {
      return await run();
    } finally {
      if (this.engine.current !== before) this.told(this.engine.current);
    }
  }

  /**
   * Compare mode: the predicted state replaced by the real one (the engine stands there; its
   * output was told already). Throws where there is nothing to resync.
   */
  resync(): ReturnType<ComparePredictor["resync"]> {
    const cmp = this.comparison;
    if (!cmp) throw new Error(`this session is not in compare mode (mode "${this.config.mode}")`);
    const r = cmp.resync();
    this.engine.edit(r.state);
    this.told(r.state);
    return r;
  }

  /** The session so far in the trajectory format (`program`: the name its meta gives the program); in compare mode both sides, predicted first. */
  traceText(program: string): string {
    const { config, engine } = this;
    const meta: Record<string, unknown> = { program: basename(program), ...(config.call ? { call: config.call } : {}), mode: config.mode };
    const cmp = this.comparison;
    return cmp ? serializeMany(cmp.sides((m) => engine.trajectory(m), meta)) : serialize(engine.trajectory(meta));
  }

  async dispose(): Promise<void> {
    await this.predictor.dispose();
  }
}

const key = (p: Predicted): object => p.step.frame ?? p.step.exit ?? p.step;

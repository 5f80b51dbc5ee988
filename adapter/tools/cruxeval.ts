// `eval cruxeval`: output prediction by running the neural debugger from the call of `f` to its
// return; input prediction by the inverse call. A prediction passes only when its assert,
// executed in a separate Python process with a timeout, holds.
import type { Predicted } from "../engine/predictor.js";
import { ModelPredictor } from "../predictors/model.js";
import type { ModelDescription } from "../protocol.js";
import { findFunction, PySourceError, type PyFunction, type PySource } from "../pyread/source.js";
import { parsePython } from "../pyread/parse.js";
import { type TraceResult } from "../real/run.js";
import { TraceBatch } from "../real/hostRun.js";
import type { Frame, Step } from "../format/trajectory.js";
import { callOf, DataError, entryOf, traceOf, type Program } from "./programs.js";
import { predictOne, predictorFor, rate, TRACE_LIMITS, type ModelOptions } from "./predicting.js";
import { checkAsserts, type AssertCase } from "./asserts.js";

// ---- cruxeval ----

/**
 * The argument text of a call from a call frame's locals, in parameter order: positional
 * parameters by position (by name once one is missing), *args spread, keyword-only by name,
 * **kwargs spread. A missing parameter is left out (its default applies, or the call fails).
 */
export function argumentText(func: PyFunction, locals: Record<string, string>): string {
  const parts: string[] = [];
  let byName = false;
  const positional = func.params.filter((p) => p.kind === "positional_only" || p.kind === "positional");
  for (const p of positional) {
    if (!Object.hasOwn(locals, p.name)) {
      byName = true;
      continue;
    }
    parts.push(byName && p.kind === "positional" ? `${p.name}=${locals[p.name]}` : locals[p.name]);
  }
  for (const p of func.params) {
    if (!Object.hasOwn(locals, p.name)) continue;
    if (p.kind === "var_positional") parts.push(`*${locals[p.name]}`);
    else if (p.kind === "keyword_only") parts.push(`${p.name}=${locals[p.name]}`);
    else if (p.kind === "var_keyword") parts.push(`**${locals[p.name]}`);
  }
  // *args must come before keyword arguments given by name.
  const kw = (s: string): boolean => /^[\p{ID_Start}_][\p{ID_Continue}]*=/u.test(s) || s.startsWith("**");
  return [...parts.filter((s) => !kw(s)), ...parts.filter(kw)].join(", ");
}

/**
 * The line of the return state the inverse call starts from, read from the code alone: the last
 * `return` statement of the function's own body (nested functions left out), else its last
 * statement (an implicit `return None`). The real run may have returned elsewhere; that line
 * would tell which branch ran, which output prediction's task does not give away.
 */
export function returnLineFromCode(src: PySource, func: PyFunction): number {
  const lines = src.source.split("\n");
  const nested = [...src.functions, ...src.classes].filter((s) => s.qualname.startsWith(func.qualname + ".") && s !== func);
  const own = src.statementLines.filter((l) => l >= func.bodyLine && l <= func.endLine && !nested.some((s) => l >= s.callLine && l <= s.endLine));
  const returns = own.filter((l) => /^\s*return\b/.test(lines[l - 1] ?? "") || /:\s*return\b/.test(lines[l - 1] ?? ""));
  return returns.at(-1) ?? own.at(-1) ?? func.bodyLine;
}

export type CruxTask = "output" | "input";

/** The methods each task is scored by, the one jump first: output from the call (step_return, or step_over
 * to the return), input back from f's return (inv_step_return). */
export const CRUX_METHODS: Record<CruxTask, readonly string[]> = { output: ["step_return", "step_over"], input: ["inv_step_return"] };

/** The assert a prediction must pass: `f(<input>) == <prediction>` (output) or `f(<prediction>) == <output>` (input); `f` is the program's entry. */
export function assertFor(task: CruxTask, prog: Program, prediction: string): AssertCase {
  const func = entryOf(prog);
  if (task === "output") return { code: prog.code, call: callOf(prog), expected: prediction, func };
  if (prog.output === undefined) throw new DataError(`program ${prog.id} has no output`);
  return { code: prog.code, call: callOf(prog, prediction), expected: prog.output, func };
}

/** One way of predicting, for one item. */
export interface CruxAttempt {
  /** The predicted text (a repr for output, an argument list for input); absent when none came. */
  prediction?: string;
  pass: boolean;
  /** Why nothing was predicted, or why the assert failed. */
  error?: string;
  ms: number;
  tokens: number;
  /** Model calls made (step_over runs). */
  steps?: number;
}

export interface CruxItem {
  id: string;
  /** The right answer: the output (output task) or the input (input task). */
  expected: string;
  /** Output task: step_return from the call (jump) and repeated step_over (steps). Input task: inv_step_return (inverse). */
  attempts: Record<string, CruxAttempt>;
}

export interface CruxMethodFigures {
  count: number;
  passed: number;
  passAt1: number | null;
  /** Predictions that came (the others failed before any assert). */
  predicted: number;
  msPerItem: number | null;
  tokens: number;
}

export interface CruxReport {
  task: CruxTask;
  model: ModelDescription | null;
  count: number;
  /** By method: output task "step_return" and "step_over", input task "inv_step_return". */
  methods: Record<string, CruxMethodFigures>;
  time: { totalMs: number; traceMs: number; predictMs: number; checkMs: number; loadMs: number };
  items: CruxItem[];
}

export interface CruxOptions extends ModelOptions {
  task: CruxTask;
  /** Most step_over predictions of one run to the return (default 200). */
  maxSteps?: number;
  /** Seconds each assert may run (default 3). */
  checkTimeout?: number;
  /** Input task: where the return state stands, "code" (default; see returnLineFromCode) or "trace" (the line the real run returned from). */
  returnLine?: "code" | "trace";
}

/** The return value a predicted state gives f's caller; undefined (with why) when it gives none. */
function returnValue(step: Step | undefined): { value?: string; why?: string } {
  if (!step) return { why: "no prediction" };
  if (step.exit) return { why: `the prediction is the program's exit (${step.exit.status})` };
  const f = step.frame!;
  if (f.event !== "return") return { why: `the prediction is a ${f.event} event, not the return` };
  if (f.value === undefined) return { why: "the predicted return carries no value (an exception unwound it)" };
  return { value: f.value };
}

/**
 * Output: from the call frame of the real run, the return value predicted two ways: one
 * step_return (the jump) and step_over repeated, each from the model's own previous answer,
 * until a return at depth 0 (at most maxSteps). A string: why there is nothing to predict from.
 */
async function outputAttempts(predictor: ModelPredictor, prog: Program, run: TraceResult, maxSteps: number): Promise<Record<string, CruxAttempt> | string> {
  const call = run.frames[0];
  if (!call || call.event !== "call" || call.depth !== 0)
    return `the real run has no call of ${entryOf(prog)} (${run.exit.status}${run.exit.value ? ": " + run.exit.value : ""})`;
  const start: Predicted = { step: { frame: structuredClone(call) } };
  const jump = await predictOne(predictor, [start], { kind: "step_return" });
  const jv = returnValue(jump.step);
  const step_return: CruxAttempt = { pass: false, ms: jump.ms, tokens: jump.tokens, steps: 1, ...(jump.error ? { error: jump.error } : jv.why ? { error: jv.why } : { prediction: jv.value }) };
  const history: Predicted[] = [start];
  let ms = 0;
  let tokens = 0;
  let steps = 0;
  let outcome: { value?: string; why?: string } = { why: `no return within ${maxSteps} step_over` };
  while (steps < maxSteps) {
    const r = await predictOne(predictor, history, { kind: "step_over" });
    steps++;
    ms += r.ms;
    tokens += r.tokens;
    if (r.error !== undefined || !r.step) {
      outcome = { why: r.error ?? "no prediction" };
      break;
    }
    history.push({ step: r.step });
    const f = r.step.frame;
    if (r.step.exit || (f && f.event === "return" && f.depth === 0)) {
      outcome = returnValue(r.step);
      break;
    }
  }
  const step_over: CruxAttempt = { pass: false, ms, tokens, steps, ...(outcome.why ? { error: outcome.why } : { prediction: outcome.value }) };
  return { step_return, step_over };
}

/**
 * Input: from the return state of f (depth 0, no locals, value = the expected output), one
 * inv_step_return, whose target is the call with its arguments, written as an argument list in
 * parameter order. A string: why there is nothing to predict from.
 */
async function inputAttempt(predictor: ModelPredictor, prog: Program, src: PySource, run: TraceResult | undefined, returnLine: "code" | "trace"): Promise<Record<string, CruxAttempt> | string> {
  const func = findFunction(src, entryOf(prog));
  if (!func) return `the program defines no ${entryOf(prog)}`;
  let line: number | undefined;
  if (returnLine === "trace") {
    for (const f of run!.frames) if (f.depth === 0 && f.event === "return") line = f.line;
  } else line = returnLineFromCode(src, func);
  if (line === undefined) return `the real run has no return of ${entryOf(prog)}`;
  const ret: Frame = { event: "return", line, depth: 0, func: func.qualname, locals: {}, value: prog.output };
  const r = await predictOne(predictor, [{ step: { frame: ret } }], { kind: "inv_step_return" });
  const attempt: CruxAttempt = { pass: false, ms: r.ms, tokens: r.tokens, steps: 1 };
  if (r.error !== undefined) attempt.error = r.error;
  else if (!r.step?.frame) attempt.error = "the prediction is the program's exit";
  else attempt.prediction = argumentText(func, r.step.frame.locals);
  return { inv_step_return: attempt };
}

/**
 * `eval cruxeval`: for each program, the output task's two attempts (outputAttempts) or the input
 * task's one (inputAttempt), each with a fresh predictor; then every prediction is executed in one
 * batch (checkAsserts) and the figures are made per method.
 */
export async function evalCruxeval(programs: readonly Program[], opts: CruxOptions): Promise<CruxReport> {
  const t0 = performance.now();
  const maxSteps = opts.maxSteps ?? 200;
  const batch = new TraceBatch({ ...TRACE_LIMITS, ...(opts.python ? { python: opts.python } : {}) });
  const items: CruxItem[] = [];
  const pending: { item: CruxItem; method: string; check: AssertCase }[] = [];
  let model: ModelDescription | null = null;
  let traceMs = 0;
  let predictMs = 0;
  try {
    for (const [done, prog] of programs.entries()) {
      if (prog.output === undefined) throw new DataError(`program ${prog.id} has no output`);
      const item: CruxItem = { id: prog.id, expected: opts.task === "output" ? prog.output : prog.input, attempts: {} };
      items.push(item);
      const methods = CRUX_METHODS[opts.task];
      const fail = (why: string): void => {
        for (const m of methods) item.attempts[m] = { pass: false, error: why, ms: 0, tokens: 0 };
      };
      const t1 = performance.now();
      const needTrace = opts.task === "output" || opts.returnLine === "trace";
      const run = needTrace ? await batch.trace(traceOf(prog)) : undefined;
      traceMs += performance.now() - t1;
      let src: PySource;
      let predictor: ModelPredictor;
      try {
        src = await parsePython(prog.code);
        predictor = await predictorFor(prog, opts);
      } catch (e) {
        if (!(e instanceof PySourceError)) throw e;
        fail(`the program does not parse: ${e.message}`);
        opts.onProgress?.(done + 1, programs.length, prog.id);
        continue;
      }
      model ??= predictor.describe();
      try {
        const attempts = opts.task === "output" ? await outputAttempts(predictor, prog, run!, maxSteps) : await inputAttempt(predictor, prog, src, run, opts.returnLine ?? "code");
        if (typeof attempts === "string") fail(attempts);
        else {
          item.attempts = attempts;
          for (const [m, a] of Object.entries(attempts)) {
            predictMs += a.ms;
            if (a.prediction !== undefined) pending.push({ item, method: m, check: assertFor(opts.task, prog, a.prediction) });
          }
        }
      } finally {
        await predictor.dispose();
      }
      opts.onProgress?.(done + 1, programs.length, prog.id);
    }
  } finally {
    await batch.close();
  }
  const t2 = performance.now();
  const verdicts = await checkAsserts(
    pending.map((p) => p.check),
    { ...(opts.python ? { python: opts.python } : {}), ...(opts.checkTimeout ? { timeout: opts.checkTimeout } : {}) },
  );
  const checkMs = performance.now() - t2;
  pending.forEach((p, i) => {
    const a = p.item.attempts[p.method];
    a.pass = verdicts[i].pass;
    if (verdicts[i].error !== undefined) a.error = verdicts[i].error;
  });
  const methods: Record<string, CruxMethodFigures> = {};
  for (const m of CRUX_METHODS[opts.task]) {
    const as = items.map((it) => it.attempts[m]).filter((a): a is CruxAttempt => a !== undefined);
    const passed = as.filter((a) => a.pass).length;
    methods[m] = {
      count: items.length,
      passed,
      passAt1: rate(passed, items.length),
      predicted: as.filter((a) => a.prediction !== undefined).length,
      msPerItem: items.length ? as.reduce((s, a) => s + a.ms, 0) / items.length : null,
      tokens: as.reduce((s, a) => s + a.tokens, 0),
    };
  }
  return {
    task: opts.task,
    model,
    count: items.length,
    methods,
    time: { totalMs: performance.now() - t0, traceMs, predictMs, checkMs, loadMs: model?.loadMs ?? 0 },
    items,
  };
}

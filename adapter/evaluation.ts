// Evaluation of a model predictor against real runs. Two measures, as in the paper:
//
// - steps: debugger actions sampled on each program's real trace; each next state is predicted
//   from the TRUE current state (the model never builds on its own earlier answers) and scored
//   against the state the debugger semantics give, beside two trivial baselines.
// - cruxeval: output prediction by running the neural debugger from the call of `f` to its
//   return; input prediction by the inverse call. A prediction passes only when its assert,
//   executed in a separate Python process with a timeout, holds.
//
// Nothing here knows DAP; the CLI (adapter/commands/eval.ts) prints what these functions return.
import { spawn } from "node:child_process";
import { mkdtemp, open, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Predicted } from "./predictor.js";
import { ModelPredictor } from "./predictors/model.js";
import type { ModelDescription } from "./protocol.js";
import type { GpuSetting } from "./model/backend.js";
import type { LayoutName } from "./layout.js";
import { PredictionError } from "./model/dialect.js";
import { findFunction, parsePython, PySourceError, type PyFunction, type PySource } from "./pysource.js";
import { transition } from "./semantics.js";
import { hash32, Rng, stateAt } from "./sampling.js";
import { findPython, TraceBatch, whichPython } from "./tracer.js";
import { ACTION_KINDS, sameExit, sameFrame, sameLocals, type Action, type ActionKind, type Frame, type Step } from "./trajectory.js";

/**
 * One program of a CRUXEval-shaped file: the call is `f(<input>)`, or `<entry>(<input>)` when the
 * line names its function. A script (a file of a folder of scripts) runs whole, its module level traced.
 */
export interface Program {
  id: string;
  code: string;
  input: string;
  output?: string;
  /** The function the input is for, when it is not `f`. */
  entry?: string;
  script?: boolean;
}

/** The function a program's input is for. */
export function entryOf(prog: Program): string {
  return prog.entry ?? "f";
}

/** The call of a program's function with `args` (default: its input). */
export function callOf(prog: Program, args = prog.input): string {
  return `${entryOf(prog)}(${args})`;
}

/** How the tracer runs a program: its entry call, or the whole script. */
export function traceOf(prog: Program): { source: string; call?: string } {
  return prog.script ? { source: prog.code } : { source: prog.code, call: callOf(prog) };
}

/** A data file that cannot be used (the message says where and why). */
export class DataError extends Error {}

/**
 * Reads a JSONL file of programs (code, input, output, id); every line is checked before anything
 * runs. A folder instead is read as scripts: each `NAME.py` in it, by name.
 */
export async function readPrograms(file: string, opts: { limit?: number; needOutput?: boolean } = {}): Promise<Program[]> {
  const limit = opts.limit ?? Number.MAX_SAFE_INTEGER;
  if ((await stat(file).catch(() => undefined))?.isDirectory()) {
    if (opts.needOutput) throw new DataError(`${file} is a folder of scripts: a script has no call whose output or input could be predicted`);
    const names = (await readdir(file)).filter((f) => f.endsWith(".py")).sort().slice(0, limit);
    return Promise.all(names.map(async (f) => ({ id: f.slice(0, -3), code: await readFile(join(file, f), "utf8"), input: "", script: true })));
  }
  let fh;
  try {
    fh = await open(file, "r");
  } catch (e) {
    throw new DataError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  const out: Program[] = [];
  const ids = new Set<string>();
  let n = 0;
  try {
    for await (const line of createInterface({ input: fh.createReadStream({ encoding: "utf8" }), crlfDelay: Infinity })) {
      n++;
      if (!line.trim()) continue;
      let r: Record<string, unknown>;
      try {
        r = JSON.parse(line);
      } catch {
        throw new DataError(`${file}:${n}: not a JSON object`);
      }
      if (typeof r !== "object" || r === null || typeof r.code !== "string" || typeof r.input !== "string")
        throw new DataError(`${file}:${n}: a program needs "code" and "input" strings (CRUXEval-shaped: code, input, output, id)`);
      if (opts.needOutput && typeof r.output !== "string") throw new DataError(`${file}:${n}: an "output" string is needed for this evaluation`);
      if (r.entry !== undefined && (typeof r.entry !== "string" || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(r.entry)))
        throw new DataError(`${file}:${n}: "entry" must be the name of the program's function`);
      const id = typeof r.id === "string" && r.id ? r.id : `line${n}`;
      if (ids.has(id)) throw new DataError(`${file}:${n}: id "${id}" appears twice`);
      ids.add(id);
      if (out.length < limit)
        out.push({ id, code: r.code, input: r.input, ...(typeof r.output === "string" ? { output: r.output } : {}), ...(typeof r.entry === "string" ? { entry: r.entry } : {}) });
    }
  } finally {
    await fh.close();
  }
  if (!out.length) throw new DataError(`${file} holds no program`);
  return out;
}

/** The model and how it runs; shared by both evaluations. */
export interface ModelOptions {
  /** GGUF path or URI; empty: the bundled model. */
  model?: string;
  gpu?: GpuSetting;
  /** CPU threads (0: from the machine). */
  threads?: number;
  contextSize?: number;
  /** Most tokens one predicted state may take. */
  maxTokens?: number;
  /** Python for tracing, checking and reading the canonical layout (default: see findPython). */
  python?: string;
  /** The layout the model reads programs in (default canonical; see ModelPredictorOptions.layout). */
  layout?: LayoutName;
  /** llama.cpp's messages. */
  log?: (message: string) => void;
  /** Progress: programs done of all. */
  onProgress?: (done: number, total: number, id: string) => void;
}

const TRACE_LIMITS = { maxEvents: 2000, timeout: 5 };

function predictorFor(p: Program, o: ModelOptions): Promise<ModelPredictor> {
  return modelPredictor(o, `${p.id}.py`, p.code);
}

/**
 * A model predictor for one program (`source`, shown as `program`) with the evaluation's model
 * options. Its states are those of the Python the cases are traced with (its version, asked).
 */
export async function modelPredictor(o: ModelOptions, program: string, source: string, call?: string): Promise<ModelPredictor> {
  return ModelPredictor.create({
    pythonVersion: (await whichPython(o.python)).version,
    program,
    source,
    ...(call ? { call } : {}),
    ...(o.model ? { model: o.model } : {}),
    gpu: o.gpu ?? "auto",
    threads: o.threads ?? 0,
    ...(o.contextSize ? { contextSize: o.contextSize } : {}),
    ...(o.maxTokens ? { maxTokens: o.maxTokens } : {}),
    ...(o.layout ? { layout: o.layout } : {}),
    ...(o.python ? { python: o.python } : {}),
    ...(o.log ? { log: o.log } : {}),
  });
}

/** Model calls made by `p` since its stats had `from` entries: generated and evaluated tokens. */
function costSince(p: ModelPredictor, from: number): { tokens: number; evaluated: number } {
  let tokens = 0;
  let evaluated = 0;
  for (const s of p.stats.slice(from)) {
    tokens += s.generatedTokens;
    evaluated += s.evaluatedTokens;
  }
  return { tokens, evaluated };
}

/** One prediction from a given history, timed; a PredictionError (an answer that is no state) is a result, not a crash. */
async function predictOne(p: ModelPredictor, history: Predicted[], action: Action): Promise<{ step?: Step; error?: string; ms: number; tokens: number; evaluated: number }> {
  const before = p.stats.length;
  const t0 = performance.now();
  try {
    const r = await p.predict(history, action);
    return { step: r.step, ms: performance.now() - t0, ...costSince(p, before) };
  } catch (e) {
    if (!(e instanceof PredictionError)) throw e;
    return { error: e.message, ms: performance.now() - t0, ...costSince(p, before) };
  }
}

const rate = (k: number, n: number): number | null => (n ? k / n : null);

// ---- steps: sampling actions on a real trace ----

/** One sampled action: from trace state `from` (a frame) to `to` (frames.length: the exit). */
export interface EvalCase {
  action: Action;
  from: number;
  to: number;
}

const isMainLine = (f: Frame): boolean => f.event === "line" && f.file === undefined;

/** The first k of xs in a seeded random order (all of them when there are fewer). */
function choose<T>(rng: Rng, xs: T[], k: number): T[] {
  const a = xs.slice();
  const m = Math.min(k, a.length);
  for (let i = 0; i < m; i++) {
    const j = i + rng.int(a.length - i);
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a.slice(0, m);
}

/**
 * Up to k cases of every action kind from one trace, each from a state where the action moves
 * (an action that stays put, e.g. any inverse action at the first state, says nothing). States
 * are frames, never the exit: a predictor answers the exit with itself. A breakpoint's line is one
 * the run reaches later (inv_breakpoint: one it reached earlier), so the jump lands on a line;
 * `continue` runs without breakpoints, to the exit, as in training. Seeded by (seed, id, kind):
 * the same cases whatever else is evaluated.
 */
export function sampleCases(frames: readonly Frame[], k: number, seed: number, id: string): EvalCase[] {
  const n = frames.length;
  const out: EvalCase[] = [];
  for (const kind of ACTION_KINDS) {
    const rng = new Rng(hash32(`${seed}:${id}:${kind}`));
    if (kind === "breakpoint" || kind === "inv_breakpoint") {
      const forward = kind === "breakpoint";
      const mains = frames.map((f, i) => (isMainLine(f) ? i : -1)).filter((i) => i >= 0);
      if (!mains.length) continue;
      const states: number[] = [];
      for (let i = 0; i < n; i++) if (forward ? i < mains[mains.length - 1] : i > mains[0]) states.push(i);
      for (const i of choose(rng, states, k)) {
        const lines = [...new Set(mains.filter((j) => (forward ? j > i : j < i)).map((j) => frames[j].line))].sort((a, b) => a - b);
        const action: Action = { kind, line: rng.pick(lines) };
        out.push({ action, from: i, to: transition(frames, i, action, []) });
      }
      continue;
    }
    const action: Action = { kind };
    const states: number[] = [];
    for (let i = 0; i < n; i++) if (transition(frames, i, action, []) !== i) states.push(i);
    for (const i of choose(rng, states, k)) out.push({ action, from: i, to: transition(frames, i, action, []) });
  }
  return out;
}

// ---- steps: scoring ----

export interface Score {
  /** The whole state: position, locals, value, output (sameFrame / sameExit). */
  exact: boolean;
  /** The line (both exits count as the same place). */
  line: boolean;
  /** All locals equal (both exits: nothing to get wrong). */
  locals: boolean;
}

/** A predicted state against the true one; no prediction (an error) scores nothing. */
export function score(pred: Step | undefined, truth: Step): Score {
  if (pred?.exit && truth.exit) return { exact: sameExit(pred.exit, truth.exit), line: true, locals: true };
  if (pred?.frame && truth.frame) {
    const a = pred.frame;
    const b = truth.frame;
    return { exact: sameFrame(a, b), line: a.line === b.line && a.file === b.file, locals: sameLocals(a.locals, b.locals) };
  }
  return { exact: false, line: false, locals: false };
}

/**
 * The trivial prediction: the next line of the same function call, locals unchanged. Scored
 * like a model's answer, its `line` is the "line + 1" baseline, its `locals` the "locals
 * unchanged" baseline, and its `exact` both at once.
 */
export function baselineStep(current: Frame): Step {
  const f: Frame = { event: "line", line: current.line + 1, depth: current.depth, func: current.func, locals: { ...current.locals } };
  if (current.file !== undefined) f.file = current.file;
  return { frame: f };
}

export interface StepsItem {
  id: string;
  action: ActionKind;
  /** The breakpoint line. */
  line?: number;
  from: number;
  to: number;
  exact: boolean;
  lineOk: boolean;
  localsOk: boolean;
  baseline: Score;
  ms: number;
  tokens: number;
  /** What the model answered (absent on error) and the true state. */
  predicted?: Step;
  truth: Step;
  error?: string;
}

export interface ActionFigures {
  count: number;
  exact: number | null;
  line: number | null;
  locals: number | null;
  /** "line + 1" (line), "locals unchanged" (locals), both together (exact). */
  baseline: { exact: number | null; line: number | null; locals: number | null };
  /** Answers that were no state of the program (counted as wrong). */
  errors: number;
  msPerPrediction: number | null;
  tokens: number;
  tokensPerPrediction: number | null;
}

export interface StepsReport {
  model: ModelDescription | null;
  seed: number;
  actionsPerProgram: number;
  programs: { total: number; evaluated: number; skipped: Record<string, number> };
  actions: Record<ActionKind, ActionFigures>;
  overall: ActionFigures;
  time: { totalMs: number; traceMs: number; predictMs: number; loadMs: number };
  /** Prompt tokens evaluated (not found in the context cache), over all predictions. */
  evaluatedTokens: number;
  items: StepsItem[];
}

/** The figures of a set of scored items. */
export function figures(items: readonly StepsItem[]): ActionFigures {
  const n = items.length;
  const count = (f: (x: StepsItem) => boolean): number => items.filter(f).length;
  const ms = items.reduce((s, x) => s + x.ms, 0);
  const tokens = items.reduce((s, x) => s + x.tokens, 0);
  return {
    count: n,
    exact: rate(count((x) => x.exact), n),
    line: rate(count((x) => x.lineOk), n),
    locals: rate(count((x) => x.localsOk), n),
    baseline: { exact: rate(count((x) => x.baseline.exact), n), line: rate(count((x) => x.baseline.line), n), locals: rate(count((x) => x.baseline.locals), n) },
    errors: count((x) => x.error !== undefined),
    msPerPrediction: n ? ms / n : null,
    tokens,
    tokensPerPrediction: n ? tokens / n : null,
  };
}

export interface StepsOptions extends ModelOptions {
  /** Cases per action kind per program (default 1). */
  actionsPerProgram?: number;
  seed?: number;
}

/**
 * `eval steps`: every program traced for real, actions sampled on its trace (sampleCases), each
 * predicted from the true current state alone (the history is that one state, written in full,
 * as a training window may open) and scored against the true next state.
 */
export async function evalSteps(programs: readonly Program[], opts: StepsOptions = {}): Promise<StepsReport> {
  const k = opts.actionsPerProgram ?? 1;
  const seed = opts.seed ?? 0;
  const t0 = performance.now();
  const batch = new TraceBatch({ ...TRACE_LIMITS, ...(opts.python ? { python: opts.python } : {}) });
  const skipped: Record<string, number> = {};
  const skip = (why: string): void => void (skipped[why] = (skipped[why] ?? 0) + 1);
  const items: StepsItem[] = [];
  let model: ModelDescription | null = null;
  let traceMs = 0;
  let predictMs = 0;
  let evaluatedTokens = 0;
  let evaluated = 0;
  try {
    for (const [done, prog] of programs.entries()) {
      const t1 = performance.now();
      const run = await batch.trace(traceOf(prog));
      traceMs += performance.now() - t1;
      if (run.exit.status === "limit") skip(`limit:${run.limit ?? "?"}`);
      else if (!run.frames.length) skip("no-frames");
      else {
        const cases = sampleCases(run.frames, k, seed, prog.id);
        let predictor: ModelPredictor | undefined;
        try {
          predictor = await predictorFor(prog, opts);
        } catch (e) {
          if (!(e instanceof PySourceError)) throw e;
          skip("unparsed");
        }
        if (predictor) {
          model ??= predictor.describe();
          evaluated++;
          try {
            for (const c of cases) {
              const current = stateAt(run, c.from, c.from);
              const truth = stateAt(run, c.to, c.from, c.action);
              const r = await predictOne(predictor, [{ step: current }], c.action);
              predictMs += r.ms;
              evaluatedTokens += r.evaluated;
              const s = score(r.step, truth);
              const item: StepsItem = {
                id: prog.id,
                action: c.action.kind,
                from: c.from,
                to: c.to,
                exact: s.exact,
                lineOk: s.line,
                localsOk: s.locals,
                baseline: score(baselineStep(current.frame!), truth),
                ms: r.ms,
                tokens: r.tokens,
                truth,
              };
              if (c.action.line !== undefined) item.line = c.action.line;
              if (r.step) item.predicted = r.step;
              if (r.error !== undefined) item.error = r.error;
              items.push(item);
            }
          } finally {
            await predictor.dispose();
          }
        }
      }
      opts.onProgress?.(done + 1, programs.length, prog.id);
    }
  } finally {
    await batch.close();
  }
  const actions = Object.fromEntries(ACTION_KINDS.map((a) => [a, figures(items.filter((x) => x.action === a))])) as Record<ActionKind, ActionFigures>;
  return {
    model,
    seed,
    actionsPerProgram: k,
    programs: { total: programs.length, evaluated, skipped },
    actions,
    overall: figures(items),
    time: { totalMs: performance.now() - t0, traceMs, predictMs, loadMs: model?.loadMs ?? 0 },
    evaluatedTokens,
    items,
  };
}

// ---- executing asserts ----

/** `assert (<call>) == (<expected>)`, run after the program's code. */
export interface AssertCase {
  code: string;
  /** A call of the function, e.g. `f([1, 2])`: one expression that calls `func`. */
  call: string;
  /** One expression, e.g. a repr. */
  expected: string;
  /** The function the call must call (default "f"). */
  func?: string;
}

export interface AssertResult {
  pass: boolean;
  /** Why it did not pass: "AssertionError", "timeout", an exception, a rejected text. */
  error?: string;
}

// The checker. Each assert is built as a syntax tree from the two texts, each of which must be
// ONE expression (the call must call f): a prediction cannot smuggle in statements. Each runs in a
// forked child of its own (own process group, limits on memory and CPU, no stdin/stdout), killed
// at its deadline: a hanging, crashing or exiting item fails only itself. One JSON line per item.
const CHECKER = String.raw`
import ast, json, os, select, signal, subprocess, sys, time

TIMEOUT = float(sys.argv[1])

def build(item):
    try:
        call = ast.parse(item["call"].strip(), mode="eval").body
    except SyntaxError as e:
        return None, "the call does not parse: %s" % e.msg
    func = item.get("func") or "f"
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == func):
        return None, "the call is not one call of %s" % func
    try:
        expected = ast.parse(item["expected"].strip(), mode="eval").body
    except SyntaxError as e:
        return None, "the expected value does not parse: %s" % e.msg
    test = ast.Compare(left=call, ops=[ast.Eq()], comparators=[expected])
    mod = ast.Module(body=[ast.Assert(test=test, msg=None)], type_ignores=[])
    ast.fix_missing_locations(mod)
    try:
        compile(mod, "<assert>", "exec")
    except Exception as e:
        return None, "the assert does not compile: %s" % e
    return mod, None

def verdict(code, mod):
    try:
        g = {"__name__": "__main__", "__builtins__": __builtins__}
        exec(compile(code, "<program>", "exec"), g)
        exec(compile(mod, "<assert>", "exec"), g)
        return {"pass": True}
    except AssertionError:
        return {"pass": False, "error": "AssertionError"}
    except BaseException as e:
        return {"pass": False, "error": ("%s: %s" % (type(e).__name__, e))[:300]}

def limit_child():
    try:
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
        cpu = int(TIMEOUT) + 2
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    except Exception:
        pass

def run_forked(code, mod):
    r, w = os.pipe()
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            os.setsid()
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            limit_child()
            res = verdict(code, mod)
            os.write(w, json.dumps(res).encode())
        finally:
            os._exit(0)
    os.close(w)
    data = b""
    deadline = time.monotonic() + TIMEOUT
    timed_out = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        ready, _, _ = select.select([r], [], [], left)
        if ready:
            chunk = os.read(r, 65536)
            if not chunk:
                break
            data += chunk
    os.close(r)
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    _, status = os.waitpid(pid, 0)
    if timed_out:
        return {"pass": False, "error": "timeout"}
    try:
        return json.loads(data.decode())
    except Exception:
        how = ("signal %d" % os.WTERMSIG(status)) if os.WIFSIGNALED(status) else ("exit code %d" % os.WEXITSTATUS(status))
        return {"pass": False, "error": "the check ended without a verdict (%s)" % how}

CHILD = "import json, sys\nitem = json.load(sys.stdin)\ng = {'__name__': '__main__'}\nexec(compile(item['code'], '<program>', 'exec'), g)\n" \
        "try:\n    exec(item['assert'], g)\nexcept AssertionError:\n    sys.exit(3)\n"

def run_subprocess(item, mod):
    # No fork (Windows): one interpreter per item, given the assert as the checked tree writes it.
    text = ast.unparse(mod) if hasattr(ast, "unparse") else "assert (%s) == (%s)" % (item["call"], item["expected"])
    try:
        p = subprocess.run([sys.executable, "-c", CHILD], input=json.dumps({"code": item["code"], "assert": text}),
                           capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return {"pass": False, "error": "timeout"}
    if p.returncode == 0:
        return {"pass": True}
    if p.returncode == 3:
        return {"pass": False, "error": "AssertionError"}
    return {"pass": False, "error": (p.stderr.strip().splitlines() or ["exit code %d" % p.returncode])[-1][:300]}

for line in sys.stdin:
    if not line.strip():
        continue
    item = json.loads(line)
    mod, why = build(item)
    if mod is None:
        res = {"pass": False, "error": why}
    elif hasattr(os, "fork"):
        res = run_forked(item["code"], mod)
    else:
        res = run_subprocess(item, mod)
    sys.stdout.write(json.dumps(res) + "\n")
    sys.stdout.flush()
`;

/**
 * Executes each case's assert in a separate Python process, `timeout` seconds each (default 3):
 * one checker process for the batch, one forked child per assert, in a temporary directory.
 * Results are in the order of the cases; a checker that dies fails the items it had not answered.
 */
export async function checkAsserts(cases: readonly AssertCase[], opts: { python?: string; timeout?: number } = {}): Promise<AssertResult[]> {
  if (!cases.length) return [];
  const timeout = opts.timeout ?? 3;
  if (!(timeout > 0)) throw new RangeError(`the assert timeout must be positive, got ${timeout}`);
  const python = await findPython(opts.python);
  const cwd = await mkdtemp(join(tmpdir(), "ndbg-check-"));
  const results: AssertResult[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(python, ["-B", "-s", "-c", CHECKER, String(timeout)], {
        cwd,
        stdio: ["pipe", "pipe", "pipe"],
        detached: process.platform !== "win32",
        env: { ...process.env, PYTHONHASHSEED: "0", PYTHONIOENCODING: "utf-8" },
      });
      let stderr = "";
      let partial = "";
      // Every item has its own deadline; the whole batch gets their sum and a margin.
      const timer = setTimeout(() => {
        try {
          if (child.pid && process.platform !== "win32") process.kill(-child.pid, "SIGKILL");
          else child.kill("SIGKILL");
        } catch {
          child.kill("SIGKILL");
        }
      }, (cases.length * (timeout + 1) + 10) * 1000);
      child.stdout.setEncoding("utf8").on("data", (d: string) => {
        const lines = (partial + d).split("\n");
        partial = lines.pop() ?? "";
        for (const l of lines) {
          if (!l.trim()) continue;
          try {
            const r = JSON.parse(l) as AssertResult;
            results.push(r.error !== undefined ? { pass: r.pass === true, error: String(r.error) } : { pass: r.pass === true });
          } catch {
            stderr += l + "\n";
          }
        }
      });
      child.stderr.setEncoding("utf8").on("data", (d: string) => {
        if (stderr.length < 8192) stderr += d;
      });
      child.stdin.on("error", () => undefined); // a checker that died: reported at close
      child.on("error", (e) => {
        clearTimeout(timer);
        reject(new Error(`cannot start Python "${python}": ${e.message}`));
      });
      child.on("close", () => {
        clearTimeout(timer);
        const why = stderr.trim().split("\n").slice(-1)[0] || "the checker ended early";
        while (results.length < cases.length) results.push({ pass: false, error: `not checked: ${why}` });
        resolve();
      });
      for (const c of cases) child.stdin.write(JSON.stringify({ code: c.code, call: c.call, expected: c.expected, func: c.func ?? "f" }) + "\n");
      child.stdin.end();
    });
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
  return results.slice(0, cases.length);
}

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
 * `eval cruxeval`. Output: the call frame (the tracer's call event of f: the arguments bound by
 * Python from the input) is the first state, and the return value is predicted two ways:
 * step_return, whose target is f's return event with its value (a breakpoint stops at a line
 * before it runs, so the jump to the return is step_return), and step_over repeated from the
 * call, each from the model's own previous answer, until a return at depth 0 (at most maxSteps).
 * Input: the return state of f (depth 0, no locals, value = the expected output) and
 * inv_step_return, whose target is the call with its arguments; they are written as an
 * argument list in parameter order. Every prediction is executed (checkAsserts).
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
      const methods = opts.task === "output" ? ["step_return", "step_over"] : ["inv_step_return"];
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
        if (opts.task === "output") {
          const call = run!.frames[0];
          if (!call || call.event !== "call" || call.depth !== 0) {
            fail(`the real run has no call of ${entryOf(prog)} (${run!.exit.status}${run!.exit.value ? ": " + run!.exit.value : ""})`);
          } else {
            const start: Predicted = { step: { frame: structuredClone(call) } };
            // The jump: one step_return from the call.
            const jump = await predictOne(predictor, [start], { kind: "step_return" });
            predictMs += jump.ms;
            const jv = returnValue(jump.step);
            item.attempts.step_return = { pass: false, ms: jump.ms, tokens: jump.tokens, steps: 1, ...(jump.error ? { error: jump.error } : jv.why ? { error: jv.why } : { prediction: jv.value }) };
            // Single steps, each from the model's own previous state.
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
            predictMs += ms;
            item.attempts.step_over = { pass: false, ms, tokens, steps, ...(outcome.why ? { error: outcome.why } : { prediction: outcome.value }) };
            for (const m of methods) {
              const a = item.attempts[m];
              if (a.prediction !== undefined) pending.push({ item, method: m, check: assertFor("output", prog, a.prediction) });
            }
          }
        } else {
          const func = findFunction(src, entryOf(prog));
          let line: number | undefined;
          if (opts.returnLine === "trace") {
            for (const f of run!.frames) if (f.depth === 0 && f.event === "return") line = f.line;
          } else if (func) line = returnLineFromCode(src, func);
          if (!func || line === undefined) {
            fail(!func ? `the program defines no ${entryOf(prog)}` : `the real run has no return of ${entryOf(prog)}`);
          } else {
            const ret: Frame = { event: "return", line, depth: 0, func: func.qualname, locals: {}, value: prog.output };
            const r = await predictOne(predictor, [{ step: { frame: ret } }], { kind: "inv_step_return" });
            predictMs += r.ms;
            const attempt: CruxAttempt = { pass: false, ms: r.ms, tokens: r.tokens, steps: 1 };
            if (r.error !== undefined) attempt.error = r.error;
            else if (!r.step?.frame) attempt.error = "the prediction is the program's exit";
            else {
              attempt.prediction = argumentText(func, r.step.frame.locals);
              pending.push({ item, method: "inv_step_return", check: assertFor("input", prog, attempt.prediction) });
            }
            item.attempts.inv_step_return = attempt;
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
  const names = opts.task === "output" ? ["step_return", "step_over"] : ["inv_step_return"];
  const methods: Record<string, CruxMethodFigures> = {};
  for (const m of names) {
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

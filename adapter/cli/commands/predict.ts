// ndbg predict: debugs a program without running it on this machine, as the debug adapter's predict
// mode does: the program runs sealed (adapter/predictors/sealed.ts) and a local model predicts only
// its holes, marked; with --no-compute the model predicts the state after every action (the model
// alone). Prints each state as
// `ndbg steps` does (one JSON object a line with --json). With --compare the program also runs
// for real under the tracer and the same actions are applied to that run (as `ndbg steps` does):
// each predicted state is printed above the real one, ✓ where they are the same, with the count
// at the end: how good the model is, at a glance.
import { Engine } from "../../engine/engine.js";
import { ModelPredictor, type ModelPredictorOptions } from "../../predictors/model.js";
import { createSealedPredictor } from "../../predictors/sealed.js";
import { closeSealedChildren, sealedPythonFor } from "../../real/sealed.js";
import { checkPythonVersion } from "../../model/pyversion.js";
import { whichPython } from "../../real/hostRun.js";
import { disposeAll } from "../../model/backend.js";
import { ModelFileError } from "../../model/gguf.js";
import { PredictionError } from "../../model/dialect.js";
import { PySourceError } from "../../pyread/source.js";
import { LAYOUTS, type LayoutName } from "../../pyread/layout.js";
import { checkSingleExpression } from "../../pyread/expressions.js";
import type { Predicted, Predictor } from "../../engine/predictor.js";
import { InputError, flags, gpuFlag, guarded, integer } from "../args.js";
import { command } from "../flags.js";
import { describe, movesAndLines, recording } from "../actions.js";
import { SideBySide } from "./sideBySide.js";

const SPEC = command("predict", "FILE", [
  "call", ["actions", { required: true }], "breakpoints", "model", "dialect", "layout", "no-compute", "context",
  "gpu", "threads", "python-version", "json", "compare",
  ["python", { help: "with --compare: the Python that runs the program for real (default: python3 on PATH)" }],
  "stats", "verbose",
]);
export const { usage, help } = SPEC;
/** Its flags (flags.ts), for the check that its help lists each one it parses. */
export const specs = [SPEC];


/**
 * `ndbg steps`' JSON shape, plus the model's confidence and tokens, whether the program decided the
 * state (`computed`), and in a sealed run the values the model filled in (`predicted`: name -> confidence).
 */
function json(name: string, p: Predicted, predictor: Predictor): string {
  const step = p.step;
  const o: Record<string, unknown> = step.exit ? { action: name, event: "exit", ...step.exit } : { action: name, ...step.frame };
  if (p.confidence !== undefined) o.confidence = Number(p.confidence.toFixed(4));
  if (p.tokens !== undefined) o.tokens = p.tokens;
  if (p.computed) o.computed = true;
  const guesses = step.frame && predictor.guessed?.(step.frame);
  if (guesses?.size) o.predicted = Object.fromEntries([...guesses].map(([k, g]) => [k, g.set ? "set" : g.confidence !== undefined ? Number(g.confidence.toFixed(4)) : null]));
  return JSON.stringify(o);
}

export function run(argv: string[]): Promise<number> {
  return guarded("predict", usage, async () => {
    const { values, positionals } = flags(argv, SPEC);
    const { moves, lines } = movesAndLines(values);
    if (values.call !== undefined) {
      const bad = checkSingleExpression(values.call);
      if (bad) throw new InputError(`bad --call "${values.call}": ${bad}`, 2);
    }
    const dialect = values.dialect ?? "auto";
    if (!["auto", "native", "instruct"].includes(dialect)) throw new InputError(`--dialect must be auto, native or instruct, not "${dialect}"`, 2);
    const layout = values.layout ?? "canonical";
    if (!(LAYOUTS as readonly string[]).includes(layout)) throw new InputError(`--layout must be one of ${LAYOUTS.join(", ")}, not "${layout}"`, 2);
    const gpu = gpuFlag(values.gpu);
    if (values.compare && values.json) throw new InputError("--compare prints the two sides as text; --json is for the predicted states alone", 2);
    if (values.python !== undefined && !values.compare) throw new InputError("--python runs the real program, for --compare", 2);
    let pythonVersion: string | undefined;
    try {
      if (values["python-version"] !== undefined) pythonVersion = checkPythonVersion(values["python-version"], "--python-version");
    } catch (e) {
      throw new InputError((e as Error).message, 2);
    }
    // Compared with a real run, the predicted states are those of the Python that runs it.
    if (pythonVersion === undefined && values.compare) pythonVersion = (await whichPython(values.python)).version;
    const threads = integer("--threads", values.threads, 0) ?? 0;
    const contextSize = integer("--context", values.context, 256);

    const model = (o: Partial<ModelPredictorOptions> = {}): Promise<ModelPredictor> =>
      ModelPredictor.create({
        program: positionals[0],
        ...(values.call !== undefined ? { call: values.call } : {}),
        ...(values.model !== undefined ? { model: values.model } : {}),
        dialect: dialect as "auto" | "native" | "instruct",
        layout: layout as LayoutName,
        ...(values["no-compute"] ? { compute: false } : {}),
        ...(pythonVersion ? { pythonVersion } : {}),
        gpu,
        threads,
        ...(contextSize ? { contextSize } : {}),
        log: (m) => {
          if (values.verbose) process.stderr.write(m + "\n");
        },
        onStatus: (s) => {
          if (s.stage === "downloading" && s.totalBytes) process.stderr.write(`ndbg predict: downloading ${s.model}: ${Math.floor((100 * s.downloadedBytes) / s.totalBytes)}%\r`);
          if (s.stage === "ready") process.stderr.write(`ndbg predict: model ${s.name} (${s.dialect}) on ${s.device}, ${s.threads} thread${s.threads === 1 ? "" : "s"}\n`);
          if (s.stage === "moved") process.stderr.write(`ndbg predict: the model now runs on ${s.device}, not on ${s.from}: ${s.why}\n`);
        },
        ...o,
      });
    let predictor: Predictor;
    try {
      predictor = values["no-compute"]
        ? await model()
        : await createSealedPredictor(positionals[0], {
            ...(values.call !== undefined ? { call: values.call } : {}),
            sealedPython: await sealedPythonFor(pythonVersion),
            model: (source) => model({ source, call: undefined }),
            everyState: () => model(),
            ...(values.model !== undefined ? { modelFile: values.model } : {}),
            console: (line) => process.stderr.write(`ndbg ${line}\n`),
          });
    } catch (e) {
      if (e instanceof ModelFileError || e instanceof PySourceError) throw new InputError(e.message);
      if (e instanceof Error && /cannot read the program|^Program (not found|is not a file)/.test(e.message)) throw new InputError(e.message);
      throw e;
    }
    let failed = 0;
    try {
      // The real run first: a call that fails before any traced code ran is bad input, said before any prediction.
      const truth = values.compare ? new SideBySide(new Engine(await recording(positionals[0], { call: values.call, python: values.python }))) : undefined;
      const engine = new Engine(predictor);
      engine.setBreakpoints(lines.map((line) => ({ line })));
      truth?.setBreakpoints(lines);
      const out = (s: string): void => void process.stdout.write(s + "\n");
      const start = await engine.start();
      if (truth) out(await truth.start(start));
      else if (!values.json) out(describe("start", start.step));
      for (const m of moves) {
        try {
          const p = await m.apply(engine);
          if (truth) out(await truth.step(m.name, m.apply, p));
          else out(values.json ? json(m.name, p, predictor) : describe(m.name, p.step, { ...p, guessed: p.step.frame && predictor.guessed?.(p.step.frame) }));
        } catch (e) {
          if (!(e instanceof PredictionError)) throw e;
          failed++;
          // The state stays where it was; later actions go on from it.
          if (truth) out(await truth.step(m.name, m.apply, undefined, e.message));
          else if (values.json) out(JSON.stringify({ action: m.name, error: e.message, raw: e.raw }));
          else out((m.name + " ").padEnd(18) + `error: ${e.message}: ${JSON.stringify(e.raw.slice(0, 200))}`);
        }
        for (const note of engine.takeNotes()) process.stderr.write(`ndbg predict: ${note}\n`);
      }
      if (truth) out("\n" + truth.summary());
      if (values.stats && predictor instanceof ModelPredictor) process.stderr.write(JSON.stringify({ model: predictor.describe(), steps: predictor.stats }) + "\n");
    } finally {
      await predictor.dispose?.();
      closeSealedChildren();
      await disposeAll();
    }
    return failed ? 1 : 0;
  });
}

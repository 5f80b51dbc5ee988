// ndbg hybrid: runs a program for real under the tracer, the model predicting only its holes
// (unwritten functions, names defined nowhere, modules not installed, the functions --predict
// lists), as the debug adapter's hybrid mode does; then applies debugger actions to that run and
// prints the state after each, every value that came from the model marked "predicted".
import { Engine } from "../../engine/engine.js";
import { HybridPredictor } from "../../predictors/hybrid.js";
import { ModelPredictor } from "../../predictors/model.js";
import { disposeAll } from "../../model/backend.js";
import type { Step } from "../../format/trajectory.js";
import { RETURN_VALUE, type Guess, type Predicted } from "../../engine/predictor.js";
import { InputError, flags, gpuFlag, guarded, integer, traceOptions } from "../args.js";
import { command } from "../flags.js";
import { describe, movesAndLines } from "../actions.js";

const SPEC = command("hybrid", "FILE", ["call", ["actions", { required: true }], "breakpoints", "predict", "model", "gpu", "threads", "json", "python", "max-events", "timeout"]);
export const { usage, help } = SPEC;
/** Its flags (flags.ts), for the check that its help lists each one it parses. */
export const specs = [SPEC];

/** `name=repr (predicted 84%)` for each marked value of a state. */
function marks(step: Step, guesses: ReadonlyMap<string, Guess> | undefined): string {
  if (!guesses?.size || !step.frame) return "";
  const f = step.frame;
  const parts = [...guesses].map(([name, g]) => {
    const value = name === RETURN_VALUE ? f.value : f.locals[name];
    const how = g.set ? (g.derived ? "from your value" : "set by you") : `${g.derived ? "from a predicted value" : "predicted"}${g.confidence !== undefined ? ` ${Math.round(g.confidence * 100)}%` : ""}`;
    return `${name}=${value} (${how})`;
  });
  return "   [" + parts.join(", ") + "]";
}

export function run(argv: string[]): Promise<number> {
  return guarded("hybrid", usage, async () => {
    const { values, positionals } = flags(argv, SPEC);
    const { moves, lines } = movesAndLines(values);
    const predict = values.predict === undefined ? [] : values.predict.split(",").map((s) => s.trim()).filter(Boolean);
    const gpu = gpuFlag(values.gpu);
    const threads = integer("--threads", values.threads, 0) ?? 0;
    const file = positionals[0];
    const say = (line: string): void => void process.stderr.write(line + "\n");

    let predictor: HybridPredictor;
    try {
      predictor = await HybridPredictor.create(file, {
        ...traceOptions(values),
        predict,
        model: (source) =>
          ModelPredictor.create({
            program: file,
            source,
            ...(values.model !== undefined ? { model: values.model } : {}),
            ...(values.python !== undefined ? { python: values.python } : {}),
            gpu,
            threads,
          }),
        console: say,
      });
    } catch (e) {
      throw new InputError(e instanceof Error ? e.message : String(e));
    }
    try {
      const engine = new Engine(predictor);
      engine.setBreakpoints(lines.map((line) => ({ line })));
      const show = (name: string, p: Predicted): string => {
        const g = p.step.frame ? predictor.guessed(p.step.frame) : undefined;
        if (!values.json) return describe(name, p.step) + marks(p.step, g);
        const o: Record<string, unknown> = p.step.exit ? { action: name, event: "exit", ...p.step.exit } : { action: name, ...p.step.frame };
        if (g?.size) o.predicted = Object.fromEntries([...g].map(([n, x]) => [n, x.set ? "set" : (x.confidence ?? null)]));
        return JSON.stringify(o);
      };
      const out: string[] = [];
      const start = await engine.start();
      if (!values.json) out.push(show("start", start));
      for (const m of moves) {
        out.push(show(m.name, await m.apply(engine)));
        for (const note of engine.takeNotes()) say(`ndbg hybrid: ${note}`);
      }
      process.stdout.write(out.join("\n") + "\n");
    } finally {
      await predictor.dispose();
      await disposeAll();
    }
    return 0;
  });
}

// Predict mode's source of states: the program runs sealed (adapter/real/sealed.ts) and the model
// fills only its holes (a HybridPredictor on the sealed executor). Where the sealed run cannot be
// had here (not installed, a Node without the permission model) or the file does not parse (code
// mid-edit), the model predicts every state, and the Debug Console says why. The DAP adapter, the
// command line and the MCP server all get predict mode from here.
import type { Predictor } from "../engine/predictor.js";
import { SealedUnavailableError } from "../real/sealed.js";
import { SEALED_EXECUTOR } from "../real/executor.js";
import { isUri, resolveModel } from "../model/resolve.js";
import { HybridPredictor, type HybridOptions } from "./hybrid.js";
import { LongRunPredictor } from "./longRun.js";

/** What the sealed run needs beside the program: the hybrid options less the executor, and the model for every state when it cannot run. */
export interface SealedOptions extends Omit<HybridOptions, "executor"> {
  /** The model alone, predicting every state (the fallback). */
  everyState: () => Promise<Predictor>;
  /** The model file the user named (relative to `cwd`): it must be there, hole or no hole, said at once rather than at the first hole. */
  modelFile?: string;
}

const PARSE_ERROR = /^(SyntaxError|IndentationError|TabError)\(/;

export async function createSealedPredictor(program: string, opts: SealedOptions): Promise<Predictor> {
  const { everyState, modelFile, ...holes } = opts;
  let sealed: HybridPredictor;
  try {
    sealed = await HybridPredictor.create(program, { ...holes, executor: SEALED_EXECUTOR });
  } catch (e) {
    if (!(e instanceof SealedUnavailableError)) throw e;
    opts.console?.(`predict · the program cannot run sealed here (${e.message}): the model predicts every state`);
    return everyState();
  }
  const exit = sealed.exit;
  if (sealed.frames.length === 0 && exit.status === "error" && PARSE_ERROR.test(exit.value ?? "")) {
    await sealed.dispose();
    opts.console?.(`predict · the file does not parse (${exit.value}): it cannot run, and the model predicts every state`);
    return everyState();
  }
  // Checked after the program is read, so that the program's own errors come first.
  if (modelFile?.trim() && !isUri(modelFile))
    await resolveModel(modelFile, opts.cwd ? { cwd: opts.cwd } : {}).catch(async (e: Error) => {
      await sealed.dispose();
      throw e;
    });
  // A run past maxEvents (the launch's maxSteps) that met no hole on the way: a long run, recorded a window at a time.
  if (sealed.limit === "events" && sealed.fills.length === 0) {
    const { console, predict, model: _m, answersFile: _a, valueModel: _v, ...trace } = holes;
    const first = { source: sealed.source, frames: [...sealed.frames], exit: sealed.exit, ...(sealed.python ? { python: sealed.python } : {}) };
    await sealed.dispose();
    const past = `a hole past the first ${first.frames.length} events is not filled in a long run: it raises here`;
    return LongRunPredictor.create(program, { ...trace, ...(console ? { console } : {}), hybrid: { ...(predict ? { predict } : {}), fill: async () => ({ error: past }) } }, first);
  }
  return sealed;
}

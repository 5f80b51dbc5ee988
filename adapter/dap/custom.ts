// This debugger's own requests (names and bodies: adapter/protocol.ts) but ndbg/valueOrigin, which
// is a move and so the session's: compare mode's comparison so far and its resync, the session as
// a trace, and the model's calls for `ndbg bench`.
import { InvalidatedEvent } from "@vscode/debugadapter";
import type { DebugProtocol } from "@vscode/debugprotocol";
import type { ComparePredictor } from "../predictors/compare.js";
import type { ModelPredictor } from "../predictors/model.js";
import { REQUESTS, type SaveTraceBody, type StatsBody } from "../protocol.js";
import type { Session } from "../session/session.js";
import type { StopView } from "./stopView.js";

/** What the requests ask of their session. */
export interface CustomHost {
  core(): Session | undefined;
  /** The session has ended (the program's exit told, or terminated). */
  ended(): boolean;
  view: StopView;
  console(line: string): void;
  send(event: DebugProtocol.Event): void;
  /** Compare mode's console lines since the last stop. */
  compared(): void;
  /** The Python file the states stand in, as the client names it (SessionFiles.program). */
  program(): string | undefined;
}

/** The answer's body to a custom request; undefined where `command` is none of these. Throws what the client is told. */
export function customBody(command: string, host: CustomHost): unknown {
  switch (command) {
    case REQUESTS.compare:
      return comparison(host).snapshot();
    case REQUESTS.resync: {
      const cmp = comparison(host);
      const core = host.core()!;
      if (host.ended() || core.engine.ended) throw new Error("the program has ended");
      // The engine stands at the real state: every view reads it from there.
      const { pair } = core.resync();
      host.view.frames = core.engine.stack();
      host.compared();
      host.console(`compare · step ${pair.index}: resynced, the predicted state is now the real one`);
      host.send(new InvalidatedEvent(["variables", "stacks"]));
      return cmp.snapshot();
    }
    case REQUESTS.saveTrace: {
      // The session in the trajectory format: in compare mode the predicted and the real one (meta "side").
      const core = launched(host);
      return { text: core.traceText(host.program() ?? core.predictor.programName ?? core.config.program) } satisfies SaveTraceBody;
    }
    case REQUESTS.stats: {
      // Every model call since launch, oldest first; empty for other predictors.
      const p = host.core()?.predictor as Partial<Pick<ModelPredictor, "stats" | "describe" | "sequence">> | undefined;
      return { pid: process.pid, model: typeof p?.describe === "function" ? p.describe() : undefined, steps: p?.stats ?? [], predictions: p?.sequence?.predictions } satisfies StatsBody;
    }
    default:
      return undefined;
  }
}

function launched(host: CustomHost): Session {
  const core = host.core();
  if (!core) throw new Error("the program has not been launched");
  return core;
}

function comparison(host: CustomHost): ComparePredictor {
  const core = launched(host);
  const cmp = core.comparison;
  if (!cmp) throw new Error(`this session is not in compare mode (mode "${core.config.mode}")`);
  return cmp;
}

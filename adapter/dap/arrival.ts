// What the client is told when a move ends: the notes and the output written on the way, the
// stack the view shows, and the stopped event for the session core's cause (stops.ts), or the
// program's exit and the end of the session; in compare mode the comparison's new lines.
import { ExitedEvent, OutputEvent } from "@vscode/debugadapter";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { shownInCaller } from "../engine/stepping.js";
import type { Predicted } from "../engine/predictor.js";
import type { Frame } from "../format/trajectory.js";
import type { Cause, Session } from "../session/session.js";
import { CompareConsole } from "./compare.js";
import { exitLine, outputBodies } from "./console.js";
import { stoppedEvent, type MoveKind } from "./stops.js";
import type { StopView } from "./stopView.js";

/** What the arrival asks of its session. */
export interface ArrivalHost {
  core(): Session | undefined;
  view: StopView;
  console(text: string, category?: "console" | "stdout" | "stderr"): void;
  send(event: DebugProtocol.Event): void;
  /** The line breakpoints at a frame's line, by their ids. */
  breakpointIds(frame: Frame): number[];
  /** The data breakpoint of a watch (its dataId). */
  dataId(watchKey: string): number | undefined;
  /** The state's model speed, for the status bar. */
  speed(p: Predicted): void;
  /** The session is over: told once. */
  end(): void;
}

export class Arrival {
  /** Compare mode's console lines (of which comparison). */
  private compareConsole?: CompareConsole;

  constructor(private readonly host: ArrivalHost) {}

  /**
   * Tells the stop the session core stands at after a move of `kind` (`override`: a pause, told
   * as such whatever else holds there; `overStopped`: a Step Over that a breakpoint inside its
   * call stopped).
   */
  tell(kind: MoveKind, opts: { override?: string; overStopped?: boolean } = {}): void {
    const { core: coreOf, view } = this.host;
    const core = coreOf()!;
    const engine = core.engine;
    const found = core.cause(kind);
    const cause: Cause = opts.override ? { kind: "moved" } : found;
    for (const note of engine.takeNotes()) this.host.console(note);
    this.output(core);
    view.variables.reset();
    const cur = engine.current;
    this.host.speed(cur);
    if (cur.step.exit) {
      view.show([], 0);
      this.compared();
      const { text, category } = exitLine(cur.step.exit, view.origins.of(cur));
      this.host.console(text, category);
      this.host.send(new ExitedEvent(cur.step.exit.status === "normal" ? 0 : 1));
      this.host.end();
      return;
    }
    const frame = cur.step.frame!;
    const stack = engine.stack();
    // A stop for the returning frame's own news (its hole's answer, a value its last statement
    // changed) stays in that frame; compare mode shows each predicted event as it is.
    view.show(stack, !core.comparison && cause.kind !== "hole" && cause.kind !== "data" && stack.length > 1 && shownInCaller(frame) ? 1 : 0);
    this.compared();
    this.host.send(
      stoppedEvent(kind, cause, {
        ...(opts.override ? { override: opts.override } : {}),
        predicted: () => view.origins.frame(0).predicted,
        dataId: (key) => this.host.dataId(key),
        breakpointIds: () => this.host.breakpointIds(frame),
        overStopped: opts.overStopped ?? false,
      }),
    );
  }

  /** Compare mode, at each stop: notes of the real side, one line per new pair, a summary at the end. */
  compared(): void {
    const core = this.host.core();
    const cmp = core?.comparison;
    if (!cmp) return;
    if (this.compareConsole?.of !== cmp) this.compareConsole = new CompareConsole(cmp);
    for (const line of this.compareConsole.lines(core.engine.ended)) this.host.console(line);
  }

  /** The output written on the way to the current state, each state's once, and the log points' messages. */
  private output(core: Session): void {
    const { predictor, engine } = core;
    for (const body of outputBodies(core.unseen(), engine.takeLogs(), this.host.view.origins, predictor.guessedOutput?.bind(predictor))) {
      const ev = new OutputEvent("") as DebugProtocol.OutputEvent;
      ev.body = body;
      this.host.send(ev);
    }
  }
}

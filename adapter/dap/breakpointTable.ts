// The breakpoints table: what the client set, by file, with the ids and verdicts it is answered
// with. Only the breakpoints of the program and of the other user files its run traces (the
// session says which: `Place`), on lines where a stop can happen, reach the engine. Lines here are
// the debugger's (1-based); the session converts the client's.
import { Breakpoint } from "@vscode/debugadapter";
import type { DebugProtocol } from "@vscode/debugprotocol";
import type { BreakpointSpec } from "../engine/breakpointStops.js";
import { checkBreakpoint, type ClientBreakpoint } from "../engine/breakpoints.js";
import { expressionProblem } from "../pyread/expressions.js";
import { breakpointHits, type Frame } from "../format/trajectory.js";
import { parsePythonSync } from "../pyread/parse.js";
import { SOURCE_LIMIT, readTextFile } from "../system/files.js";

const errorMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/**
 * Lines where a breakpoint can stop, from the tolerant parser (the program need not parse);
 * initPython() must have run.
 */
export function breakableLines(source: string): Set<number> {
  return new Set(parsePythonSync(source).lines);
}

/**
 * Where a file's breakpoints stand in the run's states: undefined for the debugged program, a
 * path as frames name other user files ("inventory/store.py"), null for a file whose breakpoints
 * cannot stop.
 */
export type Place = (path: string) => string | undefined | null;

export class BreakpointTable {
  /** By file path, as the client set them. */
  private byPath = new Map<string, ClientBreakpoint[]>();
  /** The lines where a stop can happen of each file, as read when its breakpoints were set. */
  private linesOf = new Map<string, Set<number>>();
  private nextId = 1;
  /** The latest source read: reads run one after another, so answers keep the requests' order. */
  private lastRead: Promise<unknown> = Promise.resolve();

  /**
   * Replaces a file's breakpoints; answers each with its id and whether it is verified, with the
   * reason when not. `refusal`: why none of this file's can stop; `known`: the file's text when the
   * session has it already (the debugged program), else the file is read.
   */
  async set(path: string, wanted: readonly DebugProtocol.SourceBreakpoint[], opts: { refusal?: string; known?: string }): Promise<DebugProtocol.Breakpoint[]> {
    let lines: Set<number> | undefined;
    let problem = opts.refusal;
    if (!problem) {
      try {
        const read = this.lastRead.then(() => opts.known ?? readTextFile(path, SOURCE_LIMIT));
        this.lastRead = read.catch(() => undefined);
        lines = breakableLines(await read);
      } catch (e) {
        problem = `cannot read ${path}: ${errorMessage(e)}`;
      }
    }
    const kept: ClientBreakpoint[] = [];
    const out: DebugProtocol.Breakpoint[] = [];
    for (const w of wanted) {
      const id = this.nextId++;
      const check = problem ? { refused: problem } : lines && !lines.has(w.line) ? { refused: "no code on this line" } : await checkBreakpoint(w, expressionProblem);
      const condition = w.condition?.trim() || undefined;
      if (!check.refused) kept.push({ id, line: w.line, ...(condition ? { condition } : {}), ...(w.hitCondition?.trim() ? { hitCondition: w.hitCondition.trim() } : {}), ...(w.logMessage ? { logMessage: w.logMessage } : {}) });
      const bp = new Breakpoint(!check.refused, w.line) as DebugProtocol.Breakpoint;
      bp.id = id;
      const message = check.refused ?? check.note;
      if (message) bp.message = message;
      out.push(bp);
    }
    this.byPath.set(path, kept);
    if (lines) this.linesOf.set(path, lines);
    return out;
  }

  /** What the engine gets: the breakpoints on lines where a stop can happen (the program's: of `source`, the text it runs). */
  specs(place: Place, source: string): BreakpointSpec[] {
    const specs: BreakpointSpec[] = [];
    let programLines: Set<number> | undefined; // read only when the program has breakpoints
    for (const [path, bps] of this.byPath) {
      const file = bps.length ? place(path) : null;
      if (file === null) continue;
      const lines = file === undefined ? (programLines ??= breakableLines(source)) : this.linesOf.get(path);
      for (const { id: _, ...spec } of bps) if (lines?.has(spec.line)) specs.push({ ...spec, ...(file !== undefined ? { file } : {}) });
    }
    return specs;
  }

  /** Ids of the breakpoints that a state stands on (log points never stop). */
  hitIds(frame: Frame, place: Place): number[] {
    const out: number[] = [];
    for (const [path, bps] of this.byPath) {
      const file = place(path);
      if (file !== null) for (const b of bps) if (b.logMessage === undefined && breakpointHits(frame, { line: b.line, ...(file !== undefined ? { file } : {}) })) out.push(b.id);
    }
    return out;
  }
}

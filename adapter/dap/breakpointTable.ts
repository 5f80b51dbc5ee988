// The breakpoints table: what the client set, by file, with the ids and verdicts it is answered
// with. Only the debugged program's breakpoints, on lines where a stop can happen, reach the
// engine. Lines here are the debugger's (1-based); the session converts the client's.
import { Breakpoint } from "@vscode/debugadapter";
import type { DebugProtocol } from "@vscode/debugprotocol";
import type { BreakpointSpec } from "../engine/engine.js";
import { checkBreakpoint, type ClientBreakpoint } from "../engine/breakpoints.js";
import { expressionProblem } from "../pyread/expressions.js";
import { breakpointCanHit, type Frame } from "../format/trajectory.js";
import { parsePythonSync } from "../pyread/pysource.js";
import { SOURCE_LIMIT, readTextFile } from "../system/files.js";

const errorMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/**
 * Lines where a breakpoint can stop, from the tolerant parser (the program need not parse);
 * initPython() must have run.
 */
export function breakableLines(source: string): Set<number> {
  return new Set(parsePythonSync(source).lines);
}

export class BreakpointTable {
  /** By file path, as the client set them. */
  private byPath = new Map<string, ClientBreakpoint[]>();
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
    return out;
  }

  /** What the engine gets: the program's breakpoints on lines of `source` where a stop can happen. */
  specs(isProgram: (path: string) => boolean, source: string): BreakpointSpec[] {
    const specs: BreakpointSpec[] = [];
    let lines: Set<number> | undefined; // read only when the program has breakpoints
    for (const [path, bps] of this.byPath) {
      if (!isProgram(path) || !bps.length) continue;
      lines ??= breakableLines(source);
      for (const { id: _, ...spec } of bps) if (lines.has(spec.line)) specs.push(spec);
    }
    return specs;
  }

  /** Ids of the program's breakpoints that a state stands on (log points never stop). */
  hitIds(frame: Frame, isProgram: (path: string) => boolean): number[] {
    if (!breakpointCanHit(frame)) return [];
    const out: number[] = [];
    for (const [path, bps] of this.byPath) if (isProgram(path)) for (const b of bps) if (b.line === frame.line && b.logMessage === undefined) out.push(b.id);
    return out;
  }
}

// Data breakpoints ("Break on Value Change"): which value of the Variables view a watch follows
// (engine/watches.ts), the ids the client knows them by, and the request's answers.
import type { DebugProtocol } from "@vscode/debugprotocol";
import { parseHitCondition } from "../engine/breakpoints.js";
import { readWatch, watchedValue, type DataBreakpoint, type Watch } from "../engine/watches.js";
import type { Frame } from "../format/trajectory.js";
import { cutText } from "../format/values.js";

export class DataBreakpoints {
  /** The data breakpoints' ids, by their dataId (a watch, as JSON): a stop at one names it. */
  private ids = new Map<string, number>();
  private next = 1;

  /** The id of a watch's breakpoint (by its dataId). */
  id(key: string): number | undefined {
    return this.ids.get(key);
  }

  /**
   * The watch `named` would be (a local of a stack frame, or a child of an object one holds:
   * variables.ts's namedIn), or why it cannot be one. `events`: the run has every event (the
   * model alone and compare mode do not).
   */
  static watchOf(named: { frame: number; path: string; parent?: string } | undefined, frames: readonly Frame[], asked: string, events: boolean): Watch | string {
    if (!events) return "data breakpoints need every event of the run: predict mode's sealed run, record, replay or hybrid mode (not the model alone, nor compare mode)";
    const frame = named && frames[named.frame];
    if (!named || !frame) return `${cutText(asked)} names no value of the program to watch`;
    // A child of an object the run identified: followed wherever that object is seen (a method's self).
    const id = named.parent !== undefined ? frame.ids?.[named.parent] : undefined;
    const child = id !== undefined ? frame.objects?.[named.parent!]?.find(([, , path]) => path === named.path)?.[0] : undefined;
    const watch: Watch = { func: frame.func, ...(frame.file !== undefined ? { file: frame.file } : {}), path: named.path, ...(id !== undefined && child !== undefined ? { object: { id, child } } : {}) };
    if (watchedValue(frame, watch)?.value === undefined) return `${cutText(named.path)} has no value here to watch`;
    return watch;
  }

  /** setDataBreakpoints: each answered (an id, or why not), and the set the engine follows (none where nothing is launched). */
  set(wanted: readonly DebugProtocol.DataBreakpoint[], launched: boolean): { answers: DebugProtocol.Breakpoint[]; set: DataBreakpoint[] } {
    const set: DataBreakpoint[] = [];
    const ids = new Map<string, number>();
    const answers = wanted.map((b): DebugProtocol.Breakpoint => {
      const watch = readWatch(b.dataId);
      if (!watch || !launched) return { verified: false, message: !launched ? "the program has not been launched" : "not a data breakpoint of this debugger" };
      try {
        if (b.hitCondition) parseHitCondition(b.hitCondition);
      } catch (e) {
        return { verified: false, message: e instanceof Error ? e.message : String(e) };
      }
      const key = JSON.stringify(watch);
      const id = this.ids.get(key) ?? this.next++;
      ids.set(key, id);
      set.push({ watch, ...(b.condition?.trim() ? { condition: b.condition.trim() } : {}), ...(b.hitCondition?.trim() ? { hitCondition: b.hitCondition.trim() } : {}) });
      return { id, verified: true };
    });
    this.ids = ids;
    return { answers, set };
  }
}

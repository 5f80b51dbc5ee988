// Real runs against the reachable-state rules (adapter/rules/reach.ts): every state a run goes to
// under every action must be one the rules allow, from the true state alone (as `eval steps` asks)
// and from the whole session before it (as a debugging session asks).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Reach } from "../../adapter/rules/reach.js";
import { refusal } from "../../adapter/rules/refusal.js";
import type { Next } from "../../adapter/rules/shapes.js";
import type { PySource } from "../../adapter/pyread/source.js";
import { askPython } from "../../adapter/real/sealed.js";
import { stateAt } from "../../adapter/tools/sampling.js";
import { transition } from "../../adapter/real/semantics.js";
import { sameFrame, type Action, type Recording, type Step } from "../../adapter/format/trajectory.js";

const FIXTURES = join(import.meta.dirname, "..", "fixtures");

/** The rules of `src`, computing with CPython, sealed, as a session's with the rules' help (`--no-sealed`) do. */
export const rules = (src: PySource, python?: string): Reach => new Reach(src, python, askPython);

/** The rules the model alone is held to (`compute: false`): no Python to ask, so no value computed. */
export const modelAloneRules = (src: PySource, python?: string): Reach => new Reach(src, python);

/** What `action` can lead to from the last state of `steps`, once CPython has been asked what its statement computes (as the dialects ask before `next`). */
export async function nextOf(reach: Reach, steps: readonly Step[], action: Action): Promise<Next | undefined> {
  await reach.know(steps);
  return reach.next(steps, action);
}

/**
 * The fixture scripts: programs/ (the tracer's), userstyle/ (written the way users write them:
 * classes, several functions, module code, exceptions, generators, closures) and comprehensions/
 * (nested, in class bodies and at module level, raising, with walrus, lambdas and closures).
 */
export function fixturePrograms(dirs = ["programs", "userstyle", "comprehensions"]): { name: string; code: string }[] {
  const out: { name: string; code: string }[] = [];
  for (const dir of dirs)
    for (const f of readdirSync(join(FIXTURES, dir)).filter((x) => x.endsWith(".py")).sort()) out.push({ name: `${dir}/${f}`, code: readFileSync(join(FIXTURES, dir, f), "utf8") });
  return out;
}

/** Every action from a state of a run: the steps, continue, and breakpoints on lines it runs. */
export function actions(run: Recording): Action[] {
  const lines = [...new Set(run.frames.filter((f) => f.event === "line" && f.file === undefined).map((f) => f.line))];
  const out: Action[] = (["step_into", "step_over", "step_return", "continue", "inv_step_into", "inv_step_over", "inv_step_return"] as const).map((kind) => ({ kind }));
  for (const line of lines.slice(0, 4)) out.push({ kind: "breakpoint", line }, { kind: "inv_breakpoint", line });
  return out;
}

/**
 * The true states of `run` that `reach` refuses, by every action from every state, each with its
 * reason; and how many cases were checked. Where the rules decide a state outright (`ahead`), it
 * must be the true one, and so must every state passed on the way there (`decided`: how many
 * states were decided or passed).
 */
export async function refusedStates(reach: Reach, run: Recording, name: string): Promise<{ checked: number; refused: string[]; decided: number }> {
  let checked = 0;
  let decided = 0;
  const refused: string[] = [];
  const session: Step[] = [];
  const stops = actions(run).flatMap((a) => (a.kind === "breakpoint" ? [a.line!] : []));
  for (let i = 0; i < run.frames.length; i++) {
    session.push(stateAt(run, i, Math.max(0, i - 1), i ? { kind: "step_into" } : undefined));
    for (const a of actions(run)) {
      const truth = stateAt(run, transition(run.frames, i, a), i, a);
      for (const history of [[stateAt(run, i, i)], session]) {
        await reach.know(history);
        const next = reach.next(history, a);
        checked++;
        const why = next ? refusal(next, truth, history[history.length - 1].frame) : `no rules for ${history[history.length - 1].frame?.func}`;
        if (why) refused.push(`${name} state ${i} ${a.kind}${a.line ?? ""}: ${why}`);
        // A step decided from the whole session (a return goes back to its caller, known there).
        const step = history === session ? await reach.decided(history, a) : undefined;
        if (step) decided++;
        if (step && !(truth.frame && sameFrame(step, truth.frame)))
          refused.push(`${name} state ${i} ${a.kind} in the session: decided ${JSON.stringify(step)}, not ${JSON.stringify(truth.frame ?? truth.exit)}`);
      }
      // (a continue stops at the session's breakpoints: semantics' continue has none, so only the states passed are checked)
      const ahead = await reach.ahead([stateAt(run, i, i)], a, a.kind === "continue" ? stops : []);
      if ("frame" in ahead) {
        decided++;
        if (a.kind !== "continue" && !(truth.frame && sameFrame(ahead.frame, truth.frame)))
          refused.push(`${name} state ${i} ${a.kind}${a.line ?? ""}: decided ${JSON.stringify(ahead.frame)}, not ${JSON.stringify(truth.frame ?? truth.exit)}`);
        continue;
      }
      // (a step return passes states stepping over calls; a breakpoint or continue, stepping into them)
      const move = { kind: a.kind === "step_return" ? "step_over" : "step_into" } as const;
      for (let k = i, j = 0; j < ahead.passed.length; j++) {
        const from = k;
        k = transition(run.frames, k, move);
        const t = stateAt(run, k, from, move);
        decided++;
        if (!(t.frame && sameFrame(ahead.passed[j].frame!, t.frame))) {
          refused.push(`${name} state ${i} ${a.kind}${a.line ?? ""}: passed ${JSON.stringify(ahead.passed[j].frame)}, not ${JSON.stringify(t.frame ?? t.exit)}`);
          break;
        }
      }
    }
  }
  return { checked, refused, decided };
}

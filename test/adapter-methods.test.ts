// Methods of built-in values over the real protocol: in a record session stopped in a word
// counter, hovers and watches of `text.split()`, `counts.items()` ... give what Python itself
// gives for the same expressions in the same frame (evaluated there by a real Python under
// sys.settrace), and a method that would change its object is refused with a clear message.
import { before, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findPython } from "../adapter/real/hostRun.js";
import { buildDist } from "./support/dist.js";
import { launchToFirstStop, openSession } from "./support/dap.js";

before(buildDist);

const PROGRAM = `def word_freq(text):
    counts = {}
    for w in text.split():
        counts[w] = counts.get(w, 0) + 1
    return counts


print(word_freq("the cat the dog"))
`;
const STOP_LINE = 5;

const EXPRESSIONS = [
  "text.split()", "text.upper()", "counts.items()", "counts.keys()", "sorted(counts.items())", "counts.get('the', 0)",
  "counts.get('bird', 0)", "len(text.split()[1:])", "text.split()[1:]", "'the cat'.split(' ')[0]", "text.startswith('the')",
  "text.split().index('dog')", "text.count('the')", "' '.join(text.split()[::-1])",
  "w.title()", "max(counts.values())",
];

/** What Python gives for each expression in the frame of word_freq at STOP_LINE (the first time it gets there). */
async function pythonAnswers(program: string): Promise<string[]> {
  const script = `
import json, sys
exprs = json.load(sys.stdin)
out = []
def tracer(frame, event, arg):
    if event == "line" and frame.f_code.co_name == "word_freq" and frame.f_lineno == ${STOP_LINE} and not out:
        for e in exprs:
            out.append(repr(eval(e, {}, dict(frame.f_locals))))
    return tracer
sys.settrace(tracer)
exec(compile(open(${JSON.stringify(program)}).read(), "p.py", "exec"), {"__name__": "__main__"})
sys.settrace(None)
print(json.dumps(out))
`;
  const run = spawnSync(await findPython(), ["-c", script], { input: JSON.stringify(EXPRESSIONS), encoding: "utf8", timeout: 30_000 });
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout.trim().split("\n").pop()!) as string[];
}

test("hover and watch of methods of built-in values give what Python gives; a mutating method changes a copy, not the state", async () => {
  const dir = mkdtempSync(join(tmpdir(), "ndbg-methods-"));
  const program = join(dir, "words.py");
  writeFileSync(program, PROGRAM);
  const s = await openSession(30_000);
  try {
    const want = await pythonAnswers(program);
    assert.equal(want[0], "['the', 'cat', 'the', 'dog']");
    assert.equal(want[2], "dict_items([('the', 2), ('cat', 1), ('dog', 1)])");
    const { first } = await launchToFirstStop(s.dc, { mode: "record", trusted: true, program, stopOnEntry: false }, program, [{ line: STOP_LINE }]);
    assert.equal(first.event, "stopped");
    const top = (await s.dc.stackTraceRequest({ threadId: 1 })).body.stackFrames[0];
    assert.deepEqual([top.name, top.line], ["word_freq", STOP_LINE]);
    const frameId = top.id;
    for (const [i, expression] of EXPRESSIONS.entries()) {
      for (const context of ["hover", "watch"]) {
        const r = await s.dc.evaluateRequest({ expression, frameId, context });
        assert.equal(r.body.result, want[i], `${context} of ${expression}`);
      }
    }
    // A view's type is named as Python names it.
    assert.equal((await s.dc.evaluateRequest({ expression: "counts.items()", frameId, context: "watch" })).body.type, "dict_items");
    // A method that changes a value changes a copy rebuilt from the state, never the recorded state.
    for (let i = 0; i < 2; i++) assert.equal((await s.dc.evaluateRequest({ expression: "counts.pop('the')", frameId, context: "watch" })).body.result, "2");
    assert.equal((await s.dc.evaluateRequest({ expression: "counts['the']", frameId, context: "watch" })).body.result, "2");
    assert.equal((await s.dc.evaluateRequest({ expression: "text.split().sort()", frameId, context: "repl" })).body.result, "None");
    await assert.rejects(s.dc.evaluateRequest({ expression: "text.nope()", frameId, context: "hover" }), /AttributeError: 'str' object has no attribute 'nope'/);
  } finally {
    await s.dc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

// Hybrid mode over the real protocol: the built adapter runs the program for real under the tracer
// and the bundled model (on the CPU) fills its holes: a `raise NotImplementedError` helper, a module
// that is not installed, a name defined nowhere. Up to the first hole every stop is the completed
// program's (a record-mode session on it is the truth); the values that came from the model are
// marked "predicted" in Variables, hover and watch, the rest are not; setting a hole's value runs
// the program again with it; an untrusted workspace is refused.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DebugClient } from "@vscode/debugadapter-testsupport";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { buildDist } from "./support/dist.js";
import { THREAD, inspect, isPredicted, launchToFirstStop, openSession, shown, stopAfter, type Stop } from "./support/dap.js";

const T = { timeout: 180_000 };
let dir = "";
let incomplete = "";
let complete = "";

const PROGRAM = `import textkit_missing


def parse_price(text):
    """'$3.50' -> 3.5"""
    raise NotImplementedError


def main():
    p = parse_price("$2.50")
    q = p
    slug = textkit_missing.slugify("Hi There")
    rate = lookup_rate("EU")
    return q, slug, rate
`;
// The completed form: the same lines up to the first hole and beyond; the helper appended.
const COMPLETED = PROGRAM.replace("import textkit_missing", "import string as textkit_missing") + `

def parse_price(text):
    return float(text.lstrip("$"))
`;

before(() => {
  buildDist();
  dir = mkdtempSync(join(tmpdir(), "ndbg-adapter-hybrid-"));
  incomplete = join(dir, "shop.py");
  complete = join(dir, "shop_complete.py");
  writeFileSync(incomplete, PROGRAM);
  writeFileSync(complete, COMPLETED);
});

after(() => rmSync(dir, { recursive: true, force: true }));


test("hybrid mode: the real run up to the first hole, holes marked as predicted, a hole's value set and the program re-run with it", T, async () => {
  // The truth: the completed program, recorded.
  const truth: string[] = [];
  const r = await openSession(60_000);
  try {
    await launchToFirstStop(r.dc, { program: complete, call: "main()", mode: "record", trusted: true, stopOnEntry: true }, complete);
    truth.push(shown(await inspect(r.dc)));
    for (let i = 0; i < 2; i++) {
      await stopAfter(r.dc, (dc) => dc.stepInRequest(THREAD));
      truth.push(shown(await inspect(r.dc)));
    }
  } finally {
    await r.dc.stop();
  }

  const s = await openSession(60_000);
  try {
    const { first } = await launchToFirstStop(s.dc, { program: incomplete, call: "main()", mode: "hybrid", trusted: true, gpu: "cpu", threads: 1, stopOnEntry: true }, incomplete);
    assert.equal(first.event, "stopped");
    const console = (): string => s.text("console");
    assert.match(console(), /the model predicts only its holes: parse_price\(\) \(not written yet\), lookup_rate \(defined nowhere\)/);
    assert.match(console(), /module textkit_missing is not installed: it stands in/);
    assert.match(console(), /parse_price\(\) at line 6 = .* \(predicted, \d+%\)/);

    // main:9, main:10: the real run, stop for stop, as the completed program's; then into the hole
    // (the completed helper stands elsewhere: its arguments are the same).
    const seen = [shown(await inspect(s.dc))];
    await stopAfter(s.dc, (dc) => dc.stepInRequest(THREAD));
    seen.push(shown(await inspect(s.dc)));
    assert.deepEqual(seen, truth.slice(0, 2));
    await stopAfter(s.dc, (dc) => dc.stepInRequest(THREAD));
    const entered = await inspect(s.dc);
    assert.equal(shown(entered).replace(/:\d+ /, " "), truth[2].replace(/:\d+ /, " "));
    assert.equal(entered.frame.name, "parse_price");
    assert.ok(entered.vars.every((v) => !isPredicted(v)), "the hole's arguments are real");
    // A real value cannot be set: the program runs for real.
    await assert.rejects(
      s.dc.setVariableRequest({ variablesReference: entered.scope.variablesReference, name: "text", value: "'$9'" }),
      /only a predicted value \(marked "predicted"\) can be set/,
    );

    // Step Over from the body's line goes on past the return to main's next line (as debugpy's):
    // the value returned is shown there, the model's, and marked; p came from it; hover and watch say so.
    await stopAfter(s.dc, (dc) => dc.nextRequest(THREAD));
    const back = await inspect(s.dc);
    assert.equal(back.frame.line, 11);
    const rv = back.vars.find((v) => v.name === "(return) parse_price");
    assert.ok(rv && isPredicted(rv), `the return value is marked: ${JSON.stringify(back.vars)}`);
    const p = back.vars.find((v) => v.name === "p")!;
    assert.ok(isPredicted(p), `p is marked: ${p.type}`);
    for (const context of ["hover", "watch"]) {
      const e = await s.dc.evaluateRequest({ expression: "p", frameId: back.frame.id, context });
      assert.match(e.body.result, /\(predicted, \d+%/, context);
    }

    // q = p: computed for real from the guess, and marked as such.
    await stopAfter(s.dc, (dc) => dc.nextRequest(THREAD));
    const derived = (await inspect(s.dc)).vars.find((v) => v.name === "q");
    assert.match(derived?.type ?? "", /from a predicted value \(\d+%\)/, `q is marked as computed from the guess: ${derived?.type}`);
    await stopAfter(s.dc, (dc) => dc.stepBackRequest(THREAD));
    const again = await inspect(s.dc);
    assert.equal(again.frame.line, 11);

    // Set the hole's value: the program runs again with it, and q (assigned from p) follows.
    const set = await s.dc.setVariableRequest({ variablesReference: again.scope.variablesReference, name: "p", value: "2.5" });
    assert.equal(set.body.value, "2.5");
    await stopAfter(s.dc, (dc) => dc.nextRequest(THREAD));
    const after = await inspect(s.dc);
    assert.equal(after.frame.line, 12);
    assert.equal(after.vars.find((v) => v.name === "q")?.value, "2.5");
    assert.equal(isPredicted(after.vars.find((v) => v.name === "p")), false, "a value the user set is no guess");
    assert.match(console(), /the program ran again with p = 2\.5/);
    assert.match(console(), /parse_price\(\) = 2\.5 is kept in .*neural-python-holes\.json/, "the answer is kept in the project");

    // q was computed from the hole's value: the hole is set, not q.
    await assert.rejects(
      s.dc.setVariableRequest({ variablesReference: after.scope.variablesReference, name: "q", value: "1" }),
      /q is computed from the value of hole parse_price\(\), not that value itself/,
    );

    // The missing module's call: filled and marked, or refused and raised there, said as such.
    const e = await stopAfter(s.dc, (dc) => dc.nextRequest(THREAD));
    assert.equal(e.event, "stopped");
    const at = await inspect(s.dc);
    const slug = at.vars.find((v) => v.name === "slug");
    if (at.frame.line === 13) assert.ok(isPredicted(slug), "slug came from the model");
    else assert.match(JSON.stringify(at.vars), /HoleError/, `a refused hole is an exception in the program: ${shown(at)}`);
  } finally {
    await s.dc.stop();
  }
});

test("hybrid mode: a stub's return value is set where it returns, and the program runs again with it", T, async () => {
  // (the test before answered this hole, and the project kept the answer: forgotten, the model answers again)
  rmSync(join(dir, ".vscode"), { recursive: true, force: true });
  const s = await openSession(60_000);
  try {
    await launchToFirstStop(s.dc, { program: incomplete, call: "main()", mode: "hybrid", trusted: true, gpu: "cpu", threads: 1, stopOnEntry: true }, incomplete);
    // (Step Into from the stub's line stops at its return, shown in main on the calling line)
    for (let n = 0; n < 3; n++) await stopAfter(s.dc, (dc) => dc.stepInRequest(THREAD));
    const returned = await inspect(s.dc);
    assert.equal(returned.frame.name, "main");
    const rv = returned.vars.find((v) => v.name === "(return) parse_price");
    assert.ok(rv && isPredicted(rv), `the hole's return value is the model's: ${shown(returned)}`);
    assert.deepEqual(rv.presentationHint?.attributes ?? [], [], "a hole's return value can be set");
    const set = await s.dc.setVariableRequest({ variablesReference: returned.scope.variablesReference, name: "(return) parse_price", value: "7.25" });
    assert.equal(set.body.value, "7.25");
    await stopAfter(s.dc, (dc) => dc.nextRequest(THREAD));
    const back = await inspect(s.dc);
    assert.equal(back.frame.name, "main");
    const p = back.vars.find((v) => v.name === "p");
    assert.equal(p?.value, "7.25", shown(back));
    assert.equal(isPredicted(p), false, "a value the user set is no guess");
    assert.match(s.text("console"), /the program ran again with \(return\) = 7\.25/);
  } finally {
    await s.dc.stop();
  }
});

test("hybrid mode: a name defined nowhere is a hole; its value is marked, or the refusal is the program's exception there", T, async () => {
  const program = join(dir, "words.py");
  writeFileSync(program, 'def main():\n    text = "the cat the dog"\n    n = count_words(text)\n    return n\n');
  const s = await openSession(60_000);
  try {
    await launchToFirstStop(s.dc, { program, call: "main()", mode: "hybrid", trusted: true, gpu: "cpu", threads: 1, stopOnEntry: true }, program);
    assert.match(s.text("console"), /count_words \(defined nowhere\)/);
    await stopAfter(s.dc, (dc) => dc.nextRequest(THREAD)); // main:2
    await stopAfter(s.dc, (dc) => dc.nextRequest(THREAD)); // main:3
    const e = await stopAfter(s.dc, (dc) => dc.nextRequest(THREAD));
    assert.equal(e.event, "stopped");
    const at = await inspect(s.dc);
    const text = at.vars.find((v) => v.name === "text");
    assert.equal(isPredicted(text), false, "text is real");
    if (at.frame.line === 4) {
      assert.ok(isPredicted(at.vars.find((v) => v.name === "n")), `n came from the model: ${shown(at)}`);
      assert.match(s.text("console"), /count_words\(\) at line 3 = .* \(predicted, \d+%\)/);
    } else {
      assert.equal((e as DebugProtocol.StoppedEvent).body.reason, "exception");
      assert.match(s.text("console"), /count_words\(\) at line 3/);
    }
  } finally {
    await s.dc.stop();
  }
});

test("hybrid mode runs the program: an untrusted workspace is refused; predict lists are checked", T, async () => {
  const s = await openSession(60_000);
  try {
    await s.dc.initializeRequest({ adapterID: "neural-python", pathFormat: "path", linesStartAt1: true, columnsStartAt1: true });
    await assert.rejects(s.dc.launch({ program: incomplete, call: "main()", mode: "hybrid" }), /hybrid mode runs the program, which needs a trusted workspace/);
    await assert.rejects(s.dc.launch({ program: incomplete, call: "main()", mode: "hybrid", trusted: true, predict: ["os.system()"] }), /"predict" must be a list of function names/);
    await assert.rejects(s.dc.launch({ program: incomplete, call: "main()", mode: "predict", predict: ["main"] }), /predict mode does not use it/);
  } finally {
    await s.dc.stop();
  }
});

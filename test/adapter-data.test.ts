// Data breakpoints over the real protocol, in predict mode (the sealed run) and record mode: from
// the Variables view, a local (total) and an object's attribute (cart.total), which a method
// changes; Continue stops where each changes, with the old and new values, Reverse Continue where
// it last changed; "where did this value come from" goes back to the statement that set it. Each
// stop is checked against the real run (the tracer's states): the line where the value changed.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { REQUESTS } from "../adapter/protocol.js";
import { type TraceResult } from "../adapter/real/run.js";
import { runTrace } from "../adapter/real/hostRun.js";
import { buildDist } from "./support/dist.js";
import { THREAD, inspect, launchToFirstStop, openSession, stopAfter, type Session } from "./support/dap.js";

const T = { timeout: 240_000 };

const SOURCE = `class Cart:
    def __init__(self):
        self.total = 0

    def add(self, price):
        self.total += price


def run(prices):
    total = 0
    cart = Cart()
    for p in prices:
        total = total + p
        cart.add(p)
    return total


result = run([3, 0, 4])
print(result)
`;
const LINE = (text: string): number => SOURCE.split("\n").findIndex((l) => l.trim().startsWith(text)) + 1;

let dir = "";
let program = "";
let truth: TraceResult;

before(async () => {
  buildDist();
  dir = mkdtempSync(join(tmpdir(), "ndbg-adapter-data-"));
  program = join(dir, "cart.py");
  writeFileSync(program, SOURCE);
  truth = await runTrace(program, {});
});

after(() => rmSync(dir, { recursive: true, force: true }));

const MODES: Record<string, Record<string, unknown>> = {
  "predict (sealed)": { mode: "predict", threads: 1 },
  record: { mode: "record", trusted: true },
};

async function variables(s: Session, ref: number): Promise<DebugProtocol.Variable[]> {
  return (await s.dc.variablesRequest({ variablesReference: ref })).body.variables;
}

/** The dataId the Variables view's "Break on Value Change" would set for `name` in the container `ref`. */
async function dataId(s: Session, ref: number, name: string): Promise<string> {
  const info = (await s.dc.customRequest("dataBreakpointInfo", { variablesReference: ref, name })).body as DebugProtocol.DataBreakpointInfoResponse["body"];
  assert.ok(info.dataId, `${name} can be watched: ${info.description}`);
  assert.deepEqual(info.accessTypes, ["write"]);
  return info.dataId;
}

/** The real run's states where a local of `func` holds `locals` (a subset), at `line`. */
function realAt(func: string, line: number, locals: Record<string, string>): number[] {
  return truth.frames.flatMap((f, i) => (f.func === func && f.line === line && Object.entries(locals).every(([k, v]) => f.locals[k] === v) ? [i] : []));
}

for (const [mode, launch] of Object.entries(MODES)) {
  test(`${mode}: data breakpoints on a local and on an object's attribute stop where each changes, forwards and back; a value's origin`, T, async () => {
    const s = await openSession(120_000);
    try {
      const { first } = await launchToFirstStop(s.dc, { program, stopOnEntry: false, ...launch }, program, [{ line: LINE("for p") }]);
      assert.equal(first.event, "stopped", s.text());
      const at = await inspect(s.dc);
      assert.equal(at.frame.line, LINE("for p"));
      const total = await dataId(s, at.scope.variablesReference, "total");
      const cart = at.vars.find((v) => v.name === "cart")!;
      assert.ok(cart.variablesReference > 0, "cart opens");
      const cartTotal = await dataId(s, cart.variablesReference, "total");
      // A group of functions names no value: nothing to watch.
      const none = (await s.dc.customRequest("dataBreakpointInfo", { variablesReference: at.scope.variablesReference, name: "(return) f" })).body;
      assert.equal(none.dataId, null);

      await s.dc.setBreakpointsRequest({ source: { path: program }, breakpoints: [] });
      const set = (await s.dc.customRequest("setDataBreakpoints", { breakpoints: [{ dataId: total }, { dataId: cartTotal }] })).body.breakpoints as DebugProtocol.Breakpoint[];
      assert.deepEqual(set.map((b) => b.verified), [true, true]);

      // total = total + 3 (line 13): seen on the next line.
      let e = (await stopAfter(s.dc, (dc) => dc.continueRequest(THREAD))) as DebugProtocol.StoppedEvent;
      assert.equal(e.body.reason, "data breakpoint");
      assert.equal(e.body.description, `total in run() changed: 0 → 3 (line ${LINE("total = total")})`);
      assert.deepEqual(e.body.hitBreakpointIds, [set[0].id]);
      let now = await inspect(s.dc);
      assert.deepEqual([now.frame.name, now.frame.line], ["run", LINE("cart.add")]);
      assert.ok(realAt("run", LINE("cart.add"), { total: "3" }).length);
      // cart.add(3): where the method changes it, in the method's frame (self.total).
      e = (await stopAfter(s.dc, (dc) => dc.continueRequest(THREAD))) as DebugProtocol.StoppedEvent;
      assert.equal(e.body.reason, "data breakpoint");
      assert.match(e.body.description ?? "", new RegExp(`^cart\\.total .*changed: 0 → 3 \\(line ${LINE("self.total +=")}\\)$`));
      assert.deepEqual(e.body.hitBreakpointIds, [set[1].id]);
      now = await inspect(s.dc);
      assert.equal(now.frame.name, "Cart.add");
      // add(0) changes nothing, total + 0 neither: the next stop is total's 3 → 7.
      e = (await stopAfter(s.dc, (dc) => dc.continueRequest(THREAD))) as DebugProtocol.StoppedEvent;
      assert.equal(e.body.description, `total in run() changed: 3 → 7 (line ${LINE("total = total")})`);
      // Back: where a watched value last changed before here (cart.total's 0 → 3 in add).
      e = (await stopAfter(s.dc, (dc) => dc.reverseContinueRequest(THREAD))) as DebugProtocol.StoppedEvent;
      assert.equal(e.body.reason, "data breakpoint");
      assert.match(e.body.description ?? "", /^cart\.total .*changed: 0 → 3/);
      assert.equal((await inspect(s.dc)).frame.name, "Cart.add");

      // Where did total's value come from: at `return total`, the statement that set it to 7.
      await s.dc.customRequest("setDataBreakpoints", { breakpoints: [] });
      await s.dc.setBreakpointsRequest({ source: { path: program }, breakpoints: [{ line: LINE("return total") }] });
      await stopAfter(s.dc, (dc) => dc.continueRequest(THREAD));
      const ret = await inspect(s.dc);
      assert.equal(ret.frame.line, LINE("return total"));
      e = (await stopAfter(s.dc, (dc) => dc.customRequest(REQUESTS.valueOrigin, { variablesReference: ret.scope.variablesReference, name: "total" }))) as DebugProtocol.StoppedEvent;
      assert.equal(e.body.reason, "goto");
      assert.equal(e.body.description, `total in run() was set to 7 here (line ${LINE("total = total")})`);
      const origin = await inspect(s.dc);
      assert.deepEqual([origin.frame.line, origin.vars.find((v) => v.name === "total")?.value], [LINE("total = total"), "3"]);
      assert.ok(realAt("run", LINE("total = total"), { total: "3", p: "4" }).length, "the real run set it there");
    } finally {
      await s.dc.stop();
    }
  });
}

test("record: a data breakpoint's condition and hit count pick the changes that stop; a hit count that is no number is refused", T, async () => {
  const s = await openSession(120_000);
  try {
    await launchToFirstStop(s.dc, { program, stopOnEntry: false, ...MODES.record }, program, [{ line: LINE("for p") }]);
    const at = await inspect(s.dc);
    const total = await dataId(s, at.scope.variablesReference, "total");
    await s.dc.setBreakpointsRequest({ source: { path: program }, breakpoints: [] });
    const set = (await s.dc.customRequest("setDataBreakpoints", { breakpoints: [{ dataId: total, condition: "total > 5" }] })).body.breakpoints as DebugProtocol.Breakpoint[];
    assert.deepEqual(set.map((b) => [b.verified, b.message]), [[true, undefined]]);
    // total: 0 → 3 (condition false), 3 → 7 (true).
    const e = (await stopAfter(s.dc, (dc) => dc.continueRequest(THREAD))) as DebugProtocol.StoppedEvent;
    assert.equal(e.body.description, `total in run() changed: 3 → 7 (line ${LINE("total = total")})`);
    const bad = (await s.dc.customRequest("setDataBreakpoints", { breakpoints: [{ dataId: total, hitCondition: "often" }] })).body.breakpoints as DebugProtocol.Breakpoint[];
    assert.equal(bad[0].verified, false);
    assert.match(bad[0].message ?? "", /hit count "often" is not a number/);
  } finally {
    await s.dc.stop();
  }
});

test("data breakpoints need every event of the run: the model alone says so, and nothing is set", T, async () => {
  const s = await openSession(120_000);
  try {
    await launchToFirstStop(s.dc, { program, mode: "predict", compute: false, gpu: "cpu", threads: 1, stopOnEntry: true }, program);
    const at = await inspect(s.dc);
    const info = (await s.dc.customRequest("dataBreakpointInfo", { variablesReference: at.scope.variablesReference, name: "Cart" })).body;
    assert.equal(info.dataId, null);
    assert.match(info.description, /need every event of the run/);
    await assert.rejects(s.dc.customRequest(REQUESTS.valueOrigin, { variablesReference: at.scope.variablesReference, name: "Cart" }), /need every event of the run/);
  } finally {
    await s.dc.stop();
  }
});

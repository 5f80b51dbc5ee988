// Objects open as in debugpy, over the real protocol: where the program really runs (sealed in
// predict mode, on this machine in record mode) an object in the Variables view expands into its
// attributes, a list of objects into objects that expand in turn, each child with the expression
// that names it. In predict mode the Debug Console runs the program's own methods on its live
// objects (the program runs again sealed up to the stop, then the expression there): a method's
// value, what it prints, the error it raises; nothing of this machine is reached from there.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DebugClient } from "@vscode/debugadapter-testsupport";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { buildDist } from "./support/dist.js";
import { THREAD, inspect, launchToFirstStop, openSession, shown, stopAfter } from "./support/dap.js";

const T = { timeout: 240_000 };
let dir = "";
let program = "";
let secret = "";

// A script as users write it: a dataclass, a class holding a list of them and a dict, a method that prints.
const SOURCE = `from dataclasses import dataclass


@dataclass
class Item:
    name: str
    price: int


class Cart:
    def __init__(self, owner):
        self.owner = owner
        self.items = []
        self.tags = {"first": Item("card", 0)}

    def add(self, item):
        self.items.append(item)

    def total(self):
        return sum(i.price for i in self.items)

    def shout(self):
        print("CART OF", self.owner.upper())
        return len(self.items)


cart = Cart("ana")
cart.add(Item("pen", 3))
cart.add(Item("ink", 5))
due = cart.total()
print(cart.owner, "pays", due)
`;
const LINE = (text: string): number => SOURCE.split("\n").findIndex((l) => l.startsWith(text)) + 1;

before(() => {
  buildDist();
  dir = mkdtempSync(join(tmpdir(), "ndbg-adapter-objects-"));
  // The program's project is its folder: the sandbox offers it, and nothing above it.
  mkdirSync(join(dir, "project"));
  program = join(dir, "project", "cart.py");
  writeFileSync(program, SOURCE);
  secret = join(dir, "secret.txt");
  writeFileSync(secret, "not for the sandbox");
});

after(() => rmSync(dir, { recursive: true, force: true }));

async function children(dc: DebugClient, v: DebugProtocol.Variable | undefined): Promise<DebugProtocol.Variable[]> {
  assert.ok(v, "the variable is shown");
  assert.ok(v.variablesReference > 0, `${v.name} = ${v.value} opens`);
  return (await dc.variablesRequest({ variablesReference: v.variablesReference })).body.variables;
}

const byName = (vars: DebugProtocol.Variable[], name: string): DebugProtocol.Variable | undefined => vars.find((v) => v.name === name);

/** Stops at `line` (a breakpoint, then continue) and opens `cart` three levels down, checking each child as debugpy shows it. */
async function opensCart(dc: DebugClient, line: number): Promise<void> {
  await dc.setBreakpointsRequest({ source: { path: program }, breakpoints: [{ line }] });
  await stopAfter(dc, (d) => d.continueRequest(THREAD));
  const stop = await inspect(dc);
  assert.equal(stop.frame.line, line, shown(stop));
  const cart = await children(dc, byName(stop.vars, "cart"));
  assert.deepEqual(cart.map((v) => v.name), ["owner", "items", "tags"]);
  assert.equal(byName(cart, "owner")?.value, "'ana'");
  assert.equal(byName(cart, "owner")?.evaluateName, "cart.owner");
  assert.equal(byName(cart, "owner")?.variablesReference, 0, "a string does not open");
  const items = await children(dc, byName(cart, "items"));
  assert.deepEqual(items.map((v) => [v.name, v.value, v.evaluateName]), [
    ["[0]", "Item(name='pen', price=3)", "cart.items[0]"],
    ["[1]", "Item(name='ink', price=5)", "cart.items[1]"],
  ]);
  const ink = await children(dc, items[1]);
  assert.deepEqual(ink.map((v) => [v.name, v.value, v.evaluateName]), [
    ["name", "'ink'", "cart.items[1].name"],
    ["price", "5", "cart.items[1].price"],
  ]);
  const tags = await children(dc, byName(cart, "tags"));
  const first = await children(dc, byName(tags, "'first'"));
  assert.deepEqual(first.map((v) => `${v.name}=${v.value}`), ["name='card'", "price=0"]);
  // The filter VS Code sends for an object's children: its attributes are named, not indexed.
  const named = (await dc.variablesRequest({ variablesReference: byName(stop.vars, "cart")!.variablesReference, filter: "named" })).body.variables;
  assert.equal(named.length, 3);
}

test("record mode: an object opens into its attributes, a list of objects into objects, three levels down", T, async () => {
  const s = await openSession(120_000);
  try {
    await launchToFirstStop(s.dc, { program, mode: "record", trusted: true, stopOnEntry: true }, program);
    await opensCart(s.dc, LINE("due = "));
    // Add to Watch on a child watches its evaluateName: the run's value of it, opening as in Variables.
    const watch = async (expression: string, frameId?: number): Promise<DebugProtocol.EvaluateResponse["body"]> =>
      (await s.dc.evaluateRequest({ expression, context: "watch", ...(frameId !== undefined ? { frameId } : {}) })).body;
    assert.equal((await watch("cart.items[1].name")).result, "'ink'");
    const ink = await watch("cart.items[1]");
    assert.equal(ink.result, "Item(name='ink', price=5)");
    assert.deepEqual((await s.dc.variablesRequest({ variablesReference: ink.variablesReference })).body.variables.map((v) => `${v.name}=${v.value}`), ["name='ink'", "price=5"]);
    assert.ok((await watch("cart")).variablesReference > 0, "a watched object opens");
    // In a method: self's attributes, and a module's object by its global name.
    await s.dc.setBreakpointsRequest({ source: { path: program }, breakpoints: [{ line: LINE("        return sum(") }] });
    await stopAfter(s.dc, (d) => d.continueRequest(THREAD));
    const [top] = (await s.dc.stackTraceRequest(THREAD)).body.stackFrames;
    assert.equal((await watch("self.items[0].price", top.id)).result, "3");
    assert.equal((await watch("cart.owner", top.id)).result, "'ana'");
    // What the run did not record is not made up: a method's value is the program's to compute.
    await assert.rejects(watch("self.total()", top.id), /not known here, only its repr/);
  } finally {
    await s.dc.stop();
  }
});

test("predict mode (sealed): objects open as in record mode, and `self` in a method; the caller's frame evaluates in its own", T, async () => {
  const s = await openSession(120_000);
  try {
    await launchToFirstStop(s.dc, { program, mode: "predict", trusted: false, stopOnEntry: true }, program);
    await opensCart(s.dc, LINE("due = "));
    // Into a method: self is the cart.
    await stopAfter(s.dc, (dc) => dc.stepInRequest(THREAD));
    const stop = await inspect(s.dc);
    assert.equal(stop.frame.name, "Cart.total", shown(stop));
    const self = await children(s.dc, byName(stop.vars, "self"));
    assert.equal(byName(self, "items")?.evaluateName, "self.items");
    assert.equal(byName(self, "items")?.indexedVariables, 2);
    // The Debug Console at the caller's frame (selected in the Call Stack) runs there.
    const [inner, caller] = (await s.dc.stackTraceRequest(THREAD)).body.stackFrames;
    assert.equal(caller.name, "<module>");
    assert.equal((await s.dc.evaluateRequest({ expression: "[i.name for i in cart.items]", frameId: caller.id, context: "repl" })).body.result, "['pen', 'ink']");
    await assert.rejects(s.dc.evaluateRequest({ expression: "self", frameId: caller.id, context: "repl" }), /NameError: name 'self' is not defined/);
    assert.equal((await s.dc.evaluateRequest({ expression: "self.owner", frameId: inner.id, context: "repl" })).body.result, "'ana'");
  } finally {
    await s.dc.stop();
  }
});

test("predict mode (sealed): the Debug Console calls the program's methods on its live objects", T, async () => {
  const s = await openSession(120_000);
  try {
    await launchToFirstStop(s.dc, { program, mode: "predict", trusted: false, stopOnEntry: true }, program, [{ line: LINE("due = ") }]);
    await stopAfter(s.dc, (dc) => dc.continueRequest(THREAD)); // from the entry stop to the breakpoint
    const [top] = (await s.dc.stackTraceRequest(THREAD)).body.stackFrames;
    assert.equal(top.line, LINE("due = "));
    const frameId = top.id;
    const evaluate = (expression: string): Promise<DebugProtocol.EvaluateResponse> => s.dc.evaluateRequest({ expression, frameId, context: "repl" });
    // Stopped before `due = cart.total()` runs: the method runs on the cart as it stands.
    assert.equal((await evaluate("cart.total()")).body.result, "8");
    assert.equal((await evaluate("cart.total() * 2 + len(cart.items)")).body.result, "18");
    // A method that prints: its output reaches the Debug Console, and its value comes back.
    const printed = s.output.length;
    assert.equal((await evaluate("cart.shout()")).body.result, "2");
    assert.match(s.output.slice(printed).map((o) => o.output).join(""), /CART OF ANA/);
    // A value the program computes opens, as a local does.
    const made = await evaluate("Item('cap', 7)");
    assert.equal(made.body.result, "Item(name='cap', price=7)");
    const fields = (await s.dc.variablesRequest({ variablesReference: made.body.variablesReference })).body.variables;
    assert.deepEqual(fields.map((v) => `${v.name}=${v.value}`), ["name='cap'", "price=7"]);
    // The program's errors are the expression's answer.
    await assert.rejects(evaluate("cart.nope()"), /AttributeError: 'Cart' object has no attribute 'nope'/);
    await assert.rejects(evaluate("undefined_name"), /NameError: name 'undefined_name' is not defined/);
    // Evaluating reaches nothing outside the sandbox: a file outside the program's project is not there.
    await assert.rejects(evaluate(`open(${JSON.stringify(secret)}).read()`), /FileNotFoundError/);
    // The session goes on as before: the next stop is the run's.
    await stopAfter(s.dc, (dc) => dc.nextRequest(THREAD));
    const stop = await inspect(s.dc);
    assert.equal(byName(stop.vars, "due")?.value, "8", shown(stop));
  } finally {
    await s.dc.stop();
  }
});

// Hybrid mode below the protocol: the real tracer runs the program and asks for each hole; the
// answers here come from a scripted oracle (the part under test is the tracer's side: where holes
// are, what runs for real, what is refused) and, for HybridPredictor, from the bundled model.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type HoleAnswer, type HoleList, type HoleRequest } from "../adapter/real/run.js";
import { runTrace } from "../adapter/real/hostRun.js";
import { SEALED_EXECUTOR } from "../adapter/real/executor.js";
import { HybridPredictor, hideBodies, markValues, type HoleFill } from "../adapter/predictors/hybrid.js";
import { ModelPredictor } from "../adapter/predictors/model.js";
import { disposeAll } from "../adapter/model/backend.js";
import { Engine } from "../adapter/engine/engine.js";
import type { Frame } from "../adapter/format/trajectory.js";
import { evalHybrid, outsideHoles, readHybridCases } from "../adapter/tools/hybridEval.js";

let dir = "";
const file = (name: string, text: string): string => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};

before(() => {
  dir = mkdtempSync(join(tmpdir(), "ndbg-hybrid-"));
});
after(async () => {
  rmSync(dir, { recursive: true, force: true });
  await disposeAll();
});

// The incomplete program, and its completed form: the same lines, with the helper's body appended
// (a later def replaces the stub before main() runs).
const INCOMPLETE = `from typing import List


def parse_price(text: str) -> float:
    """'$3.50' -> 3.5"""
    raise NotImplementedError


def total(items: List[str]) -> float:
    s = 0.0
    for it in items:
        p = parse_price(it)
        s += p
    return s


def main():
    return total(["$1.00", "$2.50"])
`;
const COMPLETE = INCOMPLETE + `

def parse_price(text: str) -> float:
    return float(text.lstrip("$"))
`;

type Oracle = (req: HoleRequest, frames: readonly Frame[]) => HoleAnswer | Promise<HoleAnswer>;

function hybridTrace(program: string, oracle: Oracle, opts: { predict?: string[]; timeout?: number } = {}) {
  const asked: { req: HoleRequest; at: number }[] = [];
  let found: HoleList | undefined;
  const standIns: string[] = [];
  const run = runTrace(program, {
    call: "main()",
    ...(opts.timeout ? { timeout: opts.timeout } : {}),
    hybrid: {
      predict: opts.predict ?? [],
      fill: async (req, frames) => {
        asked.push({ req, at: frames.length });
        return oracle(req, frames);
      },
      found: (h) => (found = h),
      standIn: (m) => standIns.push(m),
    },
  });
  return run.then((r) => ({ ...r, asked, found: found!, standIns }));
}

const key = (f: Frame): string => JSON.stringify([f.event, f.line, f.depth, f.func, f.locals, f.value ?? null]);

test("the parts that run are the real run: up to the first hole the frames are the completed program's, and the oracle's values flow on", async () => {
  const truth = await runTrace(file("complete.py", COMPLETE), { call: "main()" });
  const prices: Record<string, string> = { "'$1.00'": "1.0", "'$2.50'": "2.5" };
  const r = await hybridTrace(file("incomplete.py", INCOMPLETE), (req, frames) => ({ repr: prices[frames.at(-1)!.locals.text] }));
  assert.deepEqual(r.found, { functions: { parse_price: "stub" }, names: [], unknown: [], bodies: [[6, 6]] });
  assert.equal(r.asked.length, 2);
  assert.deepEqual(r.asked[0].req, { kind: "function", name: "parse_price", line: 6, target: "p", returns: "float", type: ["float"] });
  const first = r.asked[0].at;
  // Before the first hole: the real run, event for event, but for the stub's own frame.
  const before = r.frames.slice(0, first - 2).map(key);
  assert.deepEqual(before, truth.frames.slice(0, first - 2).map(key));
  assert.equal(r.frames[first - 2].func, "parse_price");
  // The hole returns the answer; outside the stub every frame is the completed program's.
  const outside = (fs: readonly Frame[]) => fs.filter((f) => f.func !== "parse_price").map(key);
  assert.deepEqual(outside(r.frames), outside(truth.frames));
  assert.deepEqual(r.exit, truth.exit);
  assert.equal(r.exit.status, "normal");
});

test("nothing from the model's text runs: code as a prediction is refused and raised in the program, and its side effect never happens", async () => {
  const marker = join(dir, "pwned");
  const r = await hybridTrace(file("refuse.py", INCOMPLETE), () => ({ repr: `__import__('os').system('touch ${marker}')` }));
  assert.equal(existsSync(marker), false);
  assert.equal(r.exit.status, "error");
  assert.match(r.exit.value!, /HoleError\(.*refused.*not a literal value/);
  const raised = r.frames.find((f) => f.event === "exception" && f.func === "parse_price");
  assert.ok(raised, "the refusal is raised where the hole is");
});

test("a hole the model cannot fill raises a clear exception there", async () => {
  const r = await hybridTrace(file("nofill.py", INCOMPLETE), () => ({ error: "the model predicts an exception event" }));
  assert.equal(r.exit.status, "error");
  assert.match(r.exit.value!, /parse_price\(\) is a hole that could not be filled: the model predicts an exception event/);
});

test("a missing module stands in, its assigned calls are holes; a name bound nowhere too; an unassigned call cannot be filled", async () => {
  const program = file(
    "imports.py",
    `import textkit_not_installed as tk
from pricing_not_installed import tax


def main():
    slug = tk.slugify("Hello World")
    t = tax(10)
    rate = lookup_rate("EU")
    print(tk.shout(slug))
    return slug, t, rate
`,
  );
  const answers: Record<string, string> = { slug: "'hello-world'", t: "1.5", rate: "0.2" };
  const r = await hybridTrace(program, (req) => ({ repr: answers[req.target!] }));
  assert.deepEqual(r.standIns, ["textkit_not_installed", "pricing_not_installed"]);
  assert.deepEqual(r.found.names, ["lookup_rate"]);
  assert.deepEqual(
    r.asked.map((a) => a.req),
    [
      { kind: "call", name: "textkit_not_installed.slugify", line: 6, target: "slug" },
      { kind: "call", name: "pricing_not_installed.tax", line: 7, target: "t" },
      { kind: "call", name: "lookup_rate", line: 8, target: "rate" },
    ],
  );
  const at9 = r.frames.find((f) => f.line === 9 && f.event === "line")!;
  assert.deepEqual(at9.locals, { slug: "'hello-world'", t: "1.5", rate: "0.2" });
  assert.match(r.exit.value!, /textkit_not_installed\.shout\(\) cannot run here and its value cannot be predicted/);
});

test("listed functions are predicted rather than run; a listed name the program lacks is reported", async () => {
  const program = file("listed.py", "def slow(n):\n    return sum(range(n))\n\n\ndef main():\n    a = slow(10)\n    return a * 2\n");
  const r = await hybridTrace(program, () => ({ repr: "45" }), { predict: ["slow", "nowhere"] });
  assert.deepEqual(r.found.functions, { slow: "listed" });
  assert.deepEqual(r.found.unknown, ["nowhere"]);
  assert.deepEqual(r.found.bodies, []);
  assert.equal(r.frames.find((f) => f.event === "return" && f.func === "main")?.value, "90");
});

test("the program's time limit stops while a hole is answered", async () => {
  const program = file("slow_answer.py", INCOMPLETE);
  const r = await hybridTrace(program, () => new Promise((res) => setTimeout(() => res({ repr: "1.0" }), 1500)), { timeout: 1 });
  assert.equal(r.exit.status, "normal");
  assert.equal(r.asked.length, 2);
});

test("marks: a stub's return value and what it was assigned to, kept while the value stays the same in its frame; values computed from them are marked as derived", () => {
  const f = (event: Frame["event"], line: number, depth: number, func: string, locals: Record<string, string>, value?: string): Frame =>
    ({ event, line, depth, func, locals, ...(value !== undefined ? { value } : {}) }) as Frame;
  const source = ["def main():", "    v = stub(1)", "    w = v + 1", "    v = 8", "    return twice(w)", "def stub(x):", "    ...", "def twice(n):", "    return n * 2", ""].join("\n");
  const frames = [
    f("call", 1, 0, "main", {}),
    f("line", 2, 0, "main", {}),
    f("call", 6, 1, "stub", { x: "1" }),
    f("line", 7, 1, "stub", { x: "1" }),
    f("return", 7, 1, "stub", { x: "1" }, "7"),
    f("line", 3, 0, "main", { v: "7" }),
    f("line", 4, 0, "main", { v: "7", w: "8" }),
    f("line", 5, 0, "main", { v: "8", w: "8" }),
    f("call", 8, 1, "twice", { n: "8" }),
    f("line", 9, 1, "twice", { n: "8" }),
    f("return", 9, 1, "twice", { n: "8" }, "16"),
    f("return", 5, 0, "main", { v: "8", w: "8" }, "16"),
  ];
  const fills: HoleFill[] = [{ kind: "function", name: "stub", line: 7, index: 0, at: 4, repr: "7", confidence: 0.5, by: "model", args: {} }];
  const m = markValues(frames, fills, source);
  const hole = { hole: 0, confidence: 0.5 };
  const derived = { ...hole, derived: true };
  assert.deepEqual([...m.get(4)!], [["(return)", hole]]);
  assert.deepEqual([...m.get(5)!], [["v", hole], ["(return)", hole]], "the caller's next event shows the value returned");
  assert.deepEqual([...m.get(6)!], [["v", hole], ["w", derived]], "w = v + 1 reads the guess");
  assert.deepEqual([...m.get(7)!], [["w", derived]], "v = 8 reads no guess: v's mark ends");
  assert.deepEqual([...m.get(8)!], [["n", derived]], "an argument passed from a guess");
  assert.deepEqual([...m.get(10)!], [["n", derived], ["(return)", derived]]);
  assert.deepEqual([...m.get(11)!], [["w", derived], ["(return)", derived]], "return twice(w): a call's marked return");
  // Without the program's text nothing is derived: only the hole's own values.
  const plain = markValues(frames, fills);
  assert.deepEqual([...plain.keys()], [4, 5, 6]);
  assert.equal(plain.get(6)!.has("w"), false);
});

const DOCUMENTED = `def to_f(c: float) -> float:
    """Celsius to Fahrenheit.

    >>> to_f(100)
    212.0
    """
    ...


def main():
    hot = to_f(100)
    warm = to_f(37)
    return hot, warm
`;

test("a stub's docstring example gives the value of the call it shows, exactly, and says so; the annotation types the request", async () => {
  const r = await hybridTrace(file("documented.py", DOCUMENTED), () => ({ repr: "98.6" }));
  assert.deepEqual(
    r.asked.map((a) => a.req),
    [
      { kind: "function", name: "to_f", line: 7, target: "hot", returns: "float", type: ["float"], docstring: { repr: "212.0", line: 4 } },
      { kind: "function", name: "to_f", line: 7, target: "warm", returns: "float", type: ["float"] },
    ],
  );
  // Through the predictor: the docstring's value is used as it is, the model is asked only for the other call.
  const program = file("documented2.py", DOCUMENTED);
  const lines: string[] = [];
  const asked: string[] = [];
  const p = await HybridPredictor.create(program, {
    call: "main()",
    model: async () => ({
      source: DOCUMENTED,
      start: () => Promise.reject(new Error("not used")),
      predict: async (history) => {
        asked.push(JSON.stringify(history.at(-1)?.step.frame?.locals));
        return { step: { frame: { ...history.at(-1)!.step.frame!, event: "line", line: 12, locals: { hot: "212.0", warm: "98.6" } } }, confidence: 0.5 };
      },
      dispose: async () => undefined,
    }),
    console: (l) => lines.push(l),
  });
  try {
    assert.deepEqual(p.fills.map((f) => [f.by, f.repr]), [["docstring", "212.0"], ["model", "98.6"]]);
    assert.equal(asked.length, 1, "the model is asked for the call no example shows, once");
    assert.match(lines.join("\n"), /to_f\(\) at line 7 = 212\.0 \(from its docstring, line 4\)/);
    assert.equal(p.frames.at(-1)?.value, "(212.0, 98.6)", "main returns the docstring's value and the model's");
    const ret = p.frames.findIndex((f) => f.event === "return" && f.func === "to_f");
    assert.deepEqual(p.guessed(p.frames[ret])?.get("(return)"), { hole: 0, docstring: 4 });
  } finally {
    await p.dispose();
  }
});

test("HybridPredictor with the bundled model: an annotated hole gets a value of its type", { timeout: 120_000 }, async () => {
  const program = file(
    "typed.py",
    [
      "from typing import Optional",
      "def to_f(c: float) -> float:\n    ...",
      "def is_palindrome(word: str) -> bool:\n    ...",
      "def words(text: str) -> list[str]:\n    ...",
      "def counts(text: str) -> dict[str, int]:\n    ...",
      "def main():\n    a = to_f(37)\n    b = is_palindrome('level')\n    c = words('a b')\n    d = counts('a b a')\n    return [type(v).__name__ for v in (a, b, c, d)], all(isinstance(w, str) for w in c), all(isinstance(k, str) and type(n) is int for k, n in d.items())",
    ].join("\n\n\n") + "\n",
  );
  const p = await HybridPredictor.create(program, { call: "main()", executor: SEALED_EXECUTOR, model: (source) => ModelPredictor.create({ program, source, threads: 1 }) });
  try {
    assert.deepEqual(p.fills.map((f) => f.type), [["float"], ["bool"], ["list", ["str"]], ["dict", ["str"], ["int"]]]);
    assert.equal(p.frames.at(-1)?.value, "(['float', 'bool', 'list', 'dict'], True, True)", p.fills.map((f) => f.error ?? f.repr).join("; "));
  } finally {
    await p.dispose();
  }
});

test("a hole annotated with the program's own class gets an instance its constructor builds from the predicted literals; code in them is refused", async () => {
  const program = file(
    "point.py",
    "from dataclasses import dataclass\n\n\n@dataclass\nclass Point:\n    x: int\n    y: int\n\n\ndef origin_of(name: str) -> Point:\n    ...\n\n\ndef main():\n    p = origin_of('home')\n    return type(p).__name__, p.x + p.y\n",
  );
  const r = await hybridTrace(program, () => ({ repr: "Point(x=1, y=2)" }));
  assert.deepEqual(r.asked[0].req.type, ["class", "Point"]);
  assert.equal(r.frames.at(-1)?.value, "('Point', 3)");
  const bad = await hybridTrace(program, () => ({ repr: "Point(x=__import__('os').getpid(), y=0)" }));
  assert.match(bad.exit.value ?? "", /HoleError\(.*refused.*not a literal value/);
});

test("hideBodies: the model reads each stub's body as `...`, every line in its place", () => {
  const text = "def f(x):\n    '''doc'''\n    raise NotImplementedError(\n        'later')\n\n\ny = 1\n";
  assert.equal(hideBodies(text, [[3, 4]]), "def f(x):\n    '''doc'''\n    ...\n\n\n\ny = 1\n");
});

test("HybridPredictor with the bundled model: holes filled and marked, the rest real; setting a hole's value runs the program again with it", { timeout: 120_000 }, async () => {
  const program = file("predictor.py", "def half(n):\n    ...\n\n\ndef main():\n    h = half(10)\n    d = h * 2\n    return d\n");
  const lines: string[] = [];
  const p = await HybridPredictor.create(program, {
    call: "main()",
    model: (source) => ModelPredictor.create({ program, source, threads: 1 }),
    console: (l) => lines.push(l),
  });
  try {
    assert.equal(p.fills.length, 1);
    const fill = p.fills[0];
    assert.equal(fill.name, "half");
    assert.ok(fill.repr !== undefined, `the bundled model fills the hole (${fill.error})`);
    assert.match(lines.join("\n"), /the model predicts only its holes: half\(\) \(not written yet\)/);
    const engine = new Engine(p);
    await engine.start();
    await engine.step("step_into"); // main:6
    const at7 = await engine.step("step_over");
    const frame = at7.step.frame!;
    assert.equal(frame.line, 7);
    assert.equal(frame.locals.h, fill.repr);
    assert.deepEqual(p.guessed(frame)?.get("h"), { hole: 0, ...(fill.confidence !== undefined ? { confidence: fill.confidence } : {}) });
    assert.equal(p.refuseEdit(at7, "h"), undefined);
    // Set the hole's value: the next step runs the program again with it.
    engine.setVariable("h", "21");
    const at8 = await engine.step("step_over");
    assert.equal(at8.step.frame?.locals.d, "42");
    assert.equal(p.fills[0].by, "user");
    assert.match(lines.at(-1)!, /ran again with h = 21/);
    assert.deepEqual(p.guessed(at8.step.frame!)?.get("h"), { hole: 0, set: true });
  } finally {
    await p.dispose();
  }
});

test("outsideHoles: the holes' own frames, what they call and other files' frames are left out", () => {
  const f = (event: Frame["event"], depth: number, func: string, file?: string): Frame =>
    ({ event, line: 1, depth, func, locals: {}, ...(file ? { file } : {}) }) as Frame;
  const frames = [
    f("call", 0, "main"),
    f("call", 1, "hole"),
    f("line", 1, "hole"),
    f("call", 2, "helper"),
    f("return", 2, "helper"),
    f("return", 1, "hole"),
    f("line", 0, "main"),
    f("call", 1, "slugify", "_impl.py"),
    f("return", 1, "slugify", "_impl.py"),
    f("call", 1, "other"),
    f("return", 0, "main"),
  ];
  assert.deepEqual(
    outsideHoles(frames, ["hole"]).map((x) => `${x.event} ${x.func}`),
    ["call main", "line main", "call other", "return main"],
  );
});

test("eval hybrid on fixture cases: the part of the run before the first hole agrees with the completed program entirely", { timeout: 180_000 }, async () => {
  const all = readHybridCases(join(import.meta.dirname, "fixtures", "hybrid"));
  const cases = ["stub_letter_grades", "name_mixer_clamp"].map((id) => all.find((c) => c.id === id)!);
  const r = await evalHybrid(cases, { threads: 1, gpu: "cpu" });
  for (const c of r.cases) {
    assert.equal(c.error, undefined, `${c.id}: ${c.error}`);
    assert.ok(c.steps > 0 && c.ran > 0, `${c.id}: states to compare`);
    assert.equal(c.ranAgree, c.ran, `${c.id}: the part that ran agrees`);
    assert.ok(c.holesReached > 0, `${c.id}: the run reached its hole`);
    assert.ok(c.hybrid >= c.ranAgree, `${c.id}: at least what ran agrees`);
  }
  assert.equal(r.kinds.overall.cases, 2);
});

test("eval hybrid on the documented set, sealed: every hole whose call a docstring example shows is answered from it, and right", { timeout: 180_000 }, async () => {
  const cases = readHybridCases(join(import.meta.dirname, "fixtures", "hybrid-documented"));
  const r = await evalHybrid(cases, { threads: 1, gpu: "cpu", maxSteps: 30, executor: "sealed" });
  for (const c of r.cases) assert.equal(c.error, undefined, `${c.id}: ${c.error}`);
  const { docstring } = r.kinds.overall.sources;
  // The examples show 14 of the calls the eight programs make (the rest are the model's).
  assert.equal(docstring.filled, 14);
  assert.equal(docstring.right, docstring.filled);
  assert.ok(r.cases.every((c) => c.sources.docstring.filled > 0), "each program has a call its docstring shows");
});

// The canonical layout (adapter/pyread/layout.ts + adapter/python/canonical.py) on a file written the way
// people write Python, its line map both ways, its fallbacks, and predict mode through it with the
// real bundled model: every state the model gives stands on a line of the user's file.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { canonicalLayout, LayoutError, type CanonicalLayout } from "../adapter/pyread/layout.js";
import { parsePython } from "../adapter/pyread/parse.js";
import type { PySource } from "../adapter/pyread/source.js";
import { ModelPredictor, type ModelPredictorOptions } from "../adapter/predictors/model.js";
import { disposeAll } from "../adapter/model/backend.js";
import { PredictionError } from "../adapter/model/dialect.js";
import type { Predicted } from "../adapter/engine/predictor.js";
import type { Action, Frame } from "../adapter/format/trajectory.js";
import { validateLaunch } from "../adapter/session/launch.js";

const ROOT = join(import.meta.dirname, "..");
const FIXTURE = join(import.meta.dirname, "fixtures", "layout", "documented.py");
const USER = readFileSync(FIXTURE, "utf8");
/** One documented function alone (the bundled model knows no constants above a function yet). */
const RESTOCK = join(import.meta.dirname, "fixtures", "layout", "restock.py");
const T = { timeout: 120_000 };

const dir = mkdtempSync(join(tmpdir(), "ndbg-layout-"));
after(async () => {
  await disposeAll();
  rmSync(dir, { recursive: true, force: true });
});

/** The user line holding `text` (first occurrence). */
const lineOf = (text: string): number => {
  const i = USER.split("\n").findIndex((l) => l.includes(text));
  assert.ok(i >= 0, `no line holds ${text}`);
  return i + 1;
};

const CANONICAL = `import math
DEFAULT_PRICE = 1.5
TAGS = ['new', 'sale']

def logged(fn):
    return fn

@logged
def total_cost(items, prices=None):
    prices = prices or {}

    def price_of(name):
        return prices.get(name, DEFAULT_PRICE)
    total = 0.0
    for name, qty in items.items():
        total += qty * price_of(name)
    names = [n.upper() for n in items]
    return math.floor(total * 100) / 100

class Shelf:
    capacity: int = 10

    def __init__(self, items):
        self.items = list(items)

    def add(self, item):
        if len(self.items) >= self.capacity:
            return False
        self.items.append(item)
        return True
`;

test("the canonical text drops docstrings, comments, blank lines in functions and annotations, and keeps everything else", async () => {
  const layout = await canonicalLayout(USER);
  assert.equal(layout.text, CANONICAL);
});

test("what only the annotations needed goes too: typing imports nothing reads, unread aliases and type variables", async () => {
  const user = [
    "from __future__ import annotations",
    "from typing import Dict, List, NamedTuple, TypeVar, cast",
    "import typing",
    "",
    'T = TypeVar("T")',
    "Matrix = List[List[int]]",
    "Pair = typing.Tuple[int, int]",
    "",
    "class P(NamedTuple):",
    "    x: int",
    "",
    "def f(m: Matrix, t: T) -> Dict[str, T]:",
    "    return cast(dict, {})",
    "",
  ].join("\n");
  const layout = await canonicalLayout(user);
  assert.equal(layout.text, "from typing import NamedTuple, cast\n\nclass P(NamedTuple):\n    x: int\n\ndef f(m, t):\n    return cast(dict, {})\n");
  assert.equal(layout.toCanonical(2), 1);
  assert.equal(layout.statementAfter(5), 3, "a dropped type variable's line goes to the next statement");
});

test("the canonical text is the training layout: training/printer.py prints it unchanged", async () => {
  const layout = await canonicalLayout(USER);
  const script = "import ast, sys; from training.printer import unparse; t = sys.stdin.read(); sys.stdout.write(unparse(ast.parse(t)) + '\\n')";
  const r = spawnSync("python3", ["-c", script], { cwd: ROOT, input: layout.text, encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, layout.text);
});

test("user lines map to their statement's canonical line: multi-line statements, decorators, headers, annotations", async () => {
  const L = await canonicalLayout(USER);
  const canon = (text: string): number => CANONICAL.split("\n").findIndex((l) => l.includes(text)) + 1;
  const cases: [string, string][] = [
    ["import math", "import math"],
    ["DEFAULT_PRICE: float = 1.5", "DEFAULT_PRICE = 1.5"],
    ["@logged", "@logged"],
    ["def total_cost(items: Dict", "def total_cost(items, prices=None)"],
    ["prices = prices or {}", "prices = prices or {}"],
    ["def price_of(name: str)", "def price_of(name)"],
    ["total: float = 0.0", "total = 0.0"],
    ["for name, qty in items.items():  # every item", "for name, qty in"],
    ["total += qty * price_of(", "total += qty"],
    ["capacity: int = 10", "capacity: int = 10"],
    ["def add(self, item: str)", "def add(self, item)"],
  ];
  for (const [user, canonical] of cases) {
    assert.equal(L.toCanonical(lineOf(user)), canon(canonical), user);
    assert.equal(L.toUser(canon(canonical)), lineOf(user), canonical);
  }
  // Every line of a multi-line statement stands for it; its canonical line maps back to its first line.
  for (let l = lineOf("total += qty * price_of("); l <= lineOf("total += qty * price_of(") + 2; l++) assert.equal(L.toCanonical(l), canon("total += qty"));
  for (let l = lineOf("names = ["); l <= lineOf("names = [") + 3; l++) assert.equal(L.toCanonical(l), canon("names = [n.upper()"));
  assert.equal(L.toUser(canon("names = [n.upper()")), lineOf("names = ["));
});

test("lines without a statement (docstring, comment, blank, bare annotation) go to the next statement", async () => {
  const L = await canonicalLayout(USER);
  const canon = (text: string): number => CANONICAL.split("\n").findIndex((l) => l.includes(text)) + 1;
  assert.equal(L.statementAfter(lineOf(">>> total_cost({\"pear\": 2})")), canon("prices = prices or {}"));
  assert.equal(L.statementAfter(lineOf("# skip nothing")), canon("total += qty"));
  assert.equal(L.statementAfter(lineOf("count: int")), canon("for name, qty in"));
  assert.equal(L.statementAfter(lineOf("Everything here is pure")), canon("import math"));
  assert.equal(L.statementAfter(lineOf("from typing import")), canon("DEFAULT_PRICE = 1.5"));
  assert.equal(L.statementAfter(lineOf('"""Add one item')), canon("if len(self.items)"));
  assert.equal(L.statementAfter(USER.split("\n").length + 5), undefined, "past the last statement");
});

test("every statement line makes the round trip both ways", async () => {
  const L = await canonicalLayout(USER);
  const user = await parsePython(USER);
  const canonical = await parsePython(L.text);
  // Executed docstrings (module, class) and the typing import have no canonical statement: they are the only lines left out.
  const dropped = [lineOf('"""Inventory helpers.'), lineOf('"""A shelf of items.'), lineOf("from typing import")];
  const statements = user.statementLines.filter((l) => !dropped.includes(l));
  assert.ok(statements.length >= 20);
  for (const l of statements) assert.equal(L.toUser(L.toCanonical(l)), l, `user line ${l}`);
  for (const c of canonical.statementLines) assert.equal(L.toCanonical(L.toUser(c)), c, `canonical line ${c}`);
});

test("a file that does not parse, no usable Python and a timeout are clear LayoutErrors", async () => {
  await assert.rejects(canonicalLayout("def f(x):\n    return x +\n"), (e: Error) => e instanceof LayoutError && /does not parse as Python \(line 2/.test(e.message));
  await assert.rejects(canonicalLayout(USER, { python: join(dir, "no-such-python") }), (e: Error) => e instanceof LayoutError && /no-such-python.*cannot be used/.test(e.message));
  await assert.rejects(canonicalLayout(USER, { timeoutMs: 1 }), (e: Error) => e instanceof LayoutError && /took more than/.test(e.message));
});

test("the program is only parsed: nothing in it runs and nothing beside it is imported", async () => {
  const marker = join(dir, "ran");
  const evil = `import os\nopen(${JSON.stringify(marker)}, "w").write("x")\nimport tokenize\n`;
  writeFileSync(join(tmpdir(), "ast.py"), `open(${JSON.stringify(marker)}, "w").write("imported")\n`);
  try {
    const L = await canonicalLayout(evil);
    assert.match(L.text, /^import os\nopen\(/);
  } finally {
    rmSync(join(tmpdir(), "ast.py"), { force: true });
  }
  assert.throws(() => readFileSync(marker), /ENOENT/);
});

// ---- predict mode with the bundled model ----

const create = (opts: Partial<ModelPredictorOptions> = {}): Promise<ModelPredictor> =>
  ModelPredictor.create({ program: FIXTURE, call: 'total_cost({"apple": 2, "pear": 1}, {"apple": 0.5})', gpu: "cpu", threads: 1, ...opts });

/** The frame stands on an executable line of the user's file, inside the function it names. */
function assertUserLine(src: PySource, f: Frame): void {
  const scope = [...src.functions, ...src.classes].find((s) => s.qualname === f.func || f.func.startsWith(s.qualname + ".<locals>.<"));
  assert.ok(scope, `unknown function ${f.func}`);
  if (f.event === "call" && !f.func.includes("<")) assert.equal(f.line, scope.callLine, `call event of ${f.func}`);
  else {
    assert.ok(src.lines.includes(f.line), `${f.func}:${f.line} is not an executable line of the file`);
    assert.ok(f.line >= scope.callLine && f.line <= scope.endLine, `${f.func}:${f.line} is outside ${scope.qualname} (${scope.callLine}-${scope.endLine})`);
  }
}

async function attempt(p: ModelPredictor, history: Predicted[], action: Action, breakpoints?: number[]): Promise<Predicted | undefined> {
  try {
    return await p.predict(history, action, breakpoints ? { breakpoints: breakpoints.map((line) => ({ line })) } : {});
  } catch (e) {
    if (e instanceof PredictionError) return undefined;
    throw e;
  }
}

test("predict mode reads the canonical layout and every state it gives stands on a line of the user's file", T, async () => {
  const logs: string[] = [];
  const p = await create({ program: RESTOCK, call: 'restock({"b": 1, "a": 0, "c": 5})', log: (m) => logs.push(m) });
  const line = (text: string): number => readFileSync(RESTOCK, "utf8").split("\n").findIndex((l) => l.includes(text)) + 1;
  try {
    assert.equal(p.describe().layout, "canonical");
    assert.equal(p.source, readFileSync(RESTOCK, "utf8"));
    assert.deepEqual(logs.filter((m) => /layout/.test(m)), []);
    const start = await p.start();
    assert.deepEqual(start.step.frame && [start.step.frame.event, start.step.frame.line, start.step.frame.func], ["call", line("def restock("), "restock"]);
    const history: Predicted[] = [start];
    let moved = 0;
    for (const kind of ["step_over", "step_over", "step_over", "step_into", "step_into", "step_over", "step_over", "step_over", "step_return"] as const) {
      const r = await attempt(p, history, { kind });
      if (!r || r.step.exit) break;
      assert.equal(r.step.action?.kind, kind);
      assertUserLine(p.src, r.step.frame!);
      history.push(r);
      moved++;
    }
    assert.ok(moved >= 4, `only ${moved} states before the model failed`);
    // The first step_over lands on the first statement after the docstring and the comment, as the real run does.
    assert.equal(history[1].step.frame!.line, line("low: List[str] = []"));
  } finally {
    await p.dispose();
  }
});

test("a breakpoint on a user line is hit there; one on a comment stops at the next statement", T, async () => {
  const p = await create();
  try {
    const start = await p.start();
    // A decorated function's call event stands on its first decorator, as CPython reports it.
    assert.deepEqual(start.step.frame && [start.step.frame.event, start.step.frame.line, start.step.frame.func], ["call", lineOf("@logged"), "total_cost"]);
    const ret = lineOf("return math.floor");
    const hit = await p.predict([start], { kind: "continue" }, { breakpoints: [{ line: ret }] });
    assert.equal(hit.step.frame?.line, ret);
    assert.equal(hit.step.frame?.func, "total_cost");
    const jump = await p.predict([start], { kind: "breakpoint", line: ret });
    assert.equal(jump.step.frame?.line, ret);
    assert.deepEqual(jump.step.action, { kind: "breakpoint", line: ret });
    const comment = lineOf("# skip nothing");
    const next = await p.predict([start], { kind: "continue" }, { breakpoints: [{ line: comment }] });
    assert.equal(next.step.frame?.line, lineOf("total += qty * price_of("));
  } finally {
    await p.dispose();
  }
});

test("without the canonical layout, predict mode reads the file as written and says why once", T, async () => {
  const broken = join(dir, "broken.py");
  writeFileSync(broken, "def f(x):\n    y = x +\n    return y\n");
  for (const [opts, why] of [
    [{ program: broken, call: "f(1)" }, /broken\.py as written.*does not parse as Python \(line 2/],
    [{ python: join(dir, "no-such-python") }, /documented\.py as written.*no-such-python.*cannot be used/],
  ] as const) {
    const logs: string[] = [];
    const p = await create({ ...opts, log: (m) => logs.push(m) });
    try {
      assert.equal(p.describe().layout, "original");
      const said = logs.filter((m) => / as written/.test(m));
      assert.equal(said.length, 1, logs.join("\n"));
      assert.match(said[0], why);
    } finally {
      await p.dispose();
    }
  }
  const logs: string[] = [];
  const p = await create({ layout: "original", log: (m) => logs.push(m) });
  try {
    assert.equal(p.describe().layout, "original");
    assert.deepEqual(logs.filter((m) => / as written/.test(m)), [], "asked for: nothing to explain");
  } finally {
    await p.dispose();
  }
});

test("the layout launch attribute: canonical by default, original on request, anything else a clear error", () => {
  const ok = (args: Record<string, unknown>) => {
    const r = validateLaunch({ program: FIXTURE, ...args });
    assert.ok(r.ok, r.ok ? "" : r.error);
    return r.config;
  };
  assert.equal(ok({}).layout, "canonical");
  assert.equal(ok({ layout: "original" }).layout, "original");
  const bad = validateLaunch({ program: FIXTURE, layout: "pretty" });
  assert.deepEqual(bad, { ok: false, error: '"layout" must be one of canonical, original, not "pretty"' });
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  const attr = pkg.contributes.debuggers[0].configurationAttributes.launch.properties.layout;
  assert.deepEqual([attr.enum, attr.default], [["canonical", "original"], "canonical"]);
});

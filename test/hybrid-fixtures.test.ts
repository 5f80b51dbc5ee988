// The evaluation set of incomplete programs for hybrid launches (test/fixtures/hybrid/NAME/):
// main.py is the program with its holes, complete.py the completed form whose real trace is the
// truth, case.json what is missing. Checked here: case.json is well formed, complete.py keeps every
// line of main.py in place (but the import lines named in "changed"), complete.py's real trace
// ends normally, and main.py's real run does reach its hole (it fails there or prints otherwise).
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { type TraceResult } from "../adapter/real/run.js";
import { runTrace } from "../adapter/real/hostRun.js";

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures", "hybrid");
const KINDS = ["stub", "name", "import", "predict"] as const;
type Kind = (typeof KINDS)[number];
const KEYS = new Set(["call", "kind", "holes", "predict", "changed", "note"]);
const MIN_CASES = 34;

interface Case {
  call: string;
  kind: Kind;
  holes: string[];
  predict?: string[];
  changed?: number[];
  note: string;
}

const cases = readdirSync(ROOT, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();
const read = (name: string, file: string): string => readFileSync(path.join(ROOT, name, file), "utf8");
const linesOf = (text: string): string[] => text.replace(/\n$/, "").split("\n");
const isNames = (v: unknown): v is string[] =>
  Array.isArray(v) && v.length > 0 && v.every((s) => typeof s === "string" && /^[A-Za-z_][\w.]*$/.test(s));

/** case.json, checked field by field. */
function loadCase(name: string, mainLines: number): Case {
  const c = JSON.parse(read(name, "case.json")) as Record<string, unknown>;
  for (const key of Object.keys(c)) assert.ok(KEYS.has(key), `${name}: unknown key "${key}"`);
  assert.equal(c.call, "main()", `${name}: call`);
  assert.ok(KINDS.includes(c.kind as Kind), `${name}: kind ${String(c.kind)}`);
  assert.ok(isNames(c.holes), `${name}: holes must be a non-empty list of names`);
  assert.equal(new Set(c.holes).size, c.holes.length, `${name}: repeated hole`);
  assert.ok(typeof c.note === "string" && c.note.trim() !== "" && !c.note.includes("\n"), `${name}: note must be one line`);
  if (c.kind === "predict") assert.deepEqual(c.predict, c.holes, `${name}: a predict case predicts exactly its holes`);
  else assert.equal(c.predict, undefined, `${name}: "predict" belongs to kind predict only`);
  if (c.kind === "import") {
    const changed = c.changed;
    assert.ok(Array.isArray(changed) && changed.length > 0, `${name}: an import case names its changed lines`);
    for (const n of changed) assert.ok(Number.isInteger(n) && n >= 1 && n <= mainLines, `${name}: changed line ${n}`);
  } else assert.equal(c.changed, undefined, `${name}: only import lines change in place`);
  return c as unknown as Case;
}

/** What a run printed, in order. */
const printed = (r: TraceResult): string => r.frames.map((f) => f.stdout ?? "").join("") + (r.exit.stdout ?? "");

/** An import line: the module it names and how main.py then calls its function `f`. */
function parseImport(line: string): { module: string; callOf: (f: string) => string } {
  const m = /^\s*(?:import\s+(\w+)(?:\s+as\s+(\w+))?|from\s+(\w+)\s+import\s+[\w, ]+)\s*(?:#.*)?$/.exec(line);
  assert.ok(m, `not an import line: ${line}`);
  if (m[3]) return { module: m[3], callOf: (f) => f };
  return { module: m[1]!, callOf: (f) => `${m[2] ?? m[1]}.${f}` };
}

/** A stand-in call is filled only as `name = call(...)`: every call of it in main.py must be one. */
function assertAssignedCalls(name: string, source: string, call: string): void {
  const callRe = call.replace(".", "\\.");
  const uses = source.split("\n").filter((line) => new RegExp(`(?<![\\w.])${callRe}\\(`).test(line));
  assert.ok(uses.length > 0, `${name}: main.py never calls ${call}`);
  for (const line of uses) assert.match(line, new RegExp(`^\\s*\\w+ = ${callRe}\\(`), `${name}: not assigned to a name: ${line.trim()}`);
}

const defines = (source: string, fn: string): boolean => new RegExp(`^\\s*def ${fn}\\(`, "m").test(source);

test(`the set holds at least ${MIN_CASES} cases of every kind`, () => {
  assert.ok(cases.length >= MIN_CASES, `${cases.length} cases`);
  const kinds = cases.map((name) => (JSON.parse(read(name, "case.json")) as Case).kind);
  for (const kind of KINDS) assert.ok(kinds.filter((k) => k === kind).length >= 5, `fewer than 5 ${kind} cases`);
});

for (const name of cases) {
  test(`${name}: complete.py lines up with main.py, ends normally, and main.py meets its hole`, async () => {
    const main = read(name, "main.py");
    const complete = read(name, "complete.py");
    const mainLines = linesOf(main);
    const completeLines = linesOf(complete);
    const c = loadCase(name, mainLines.length);

    // A program as a developer writes it, entered through main().
    assert.ok(mainLines.length >= 15 && mainLines.length <= 60, `${name}: main.py has ${mainLines.length} lines`);
    assert.match(main, /^def main\(\):$/m);
    for (const file of readdirSync(path.join(ROOT, name)).filter((f) => f.endsWith(".py"))) {
      assert.doesNotMatch(read(name, file), /\b(?:import (?:random|time|socket|subprocess|urllib)|open\(|input\()/, `${name}/${file}: no files, clock, randomness or input`);
    }

    // Line for line, so the two traces line up.
    const changed = new Set(c.changed ?? []);
    assert.ok(completeLines.length >= mainLines.length, `${name}: complete.py is shorter than main.py`);
    mainLines.forEach((line, i) => {
      if (changed.has(i + 1)) assert.notEqual(completeLines[i], line, `${name}: line ${i + 1} is named changed but is not`);
      else assert.equal(completeLines[i], line, `${name}: line ${i + 1} differs`);
    });

    // Each kind's hole is where case.json says.
    const tail = completeLines.slice(mainLines.length).join("\n");
    if (c.kind === "predict") assert.equal(complete, main, `${name}: a predict case runs main.py itself`);
    for (const hole of c.holes) {
      const fn = hole.split(".").at(-1)!;
      if (c.kind === "stub" || c.kind === "predict") assert.ok(defines(main, fn), `${name}: main.py has no def ${fn}`);
      if (c.kind === "stub" || c.kind === "name") assert.ok(defines(tail, fn), `${name}: complete.py does not complete ${fn} after main.py's lines`);
      if (c.kind === "name") {
        assert.doesNotMatch(main, new RegExp(`^\\s*(?:def ${fn}\\(|${fn}\\s*=|import .*\\b${fn}\\b)`, "m"), `${name}: ${fn} is defined in main.py`);
        assertAssignedCalls(name, main, fn);
      }
    }
    if (c.kind === "import") {
      const imports = [...changed].map((n) => parseImport(mainLines[n - 1]!));
      for (const hole of c.holes) {
        const [module, fn] = hole.split(".");
        const from = imports.find((i) => i.module === module);
        assert.ok(from && fn, `${name}: ${hole} is not a function of a missing module`);
        assertAssignedCalls(name, main, from.callOf(fn));
      }
      for (const { module: m } of imports) {
        assert.ok(!existsSync(path.join(ROOT, name, `${m}.py`)) && !existsSync(path.join(ROOT, name, m)), `${name}: ${m} must stay missing`);
      }
    }

    // The truth: the completed program's real trace ends normally.
    const truth = await runTrace(path.join(ROOT, name, "complete.py"), { call: c.call });
    assert.equal(truth.exit.status, "normal", `${name}: complete.py ended ${truth.exit.status}: ${truth.exit.value ?? ""}`);
    assert.ok(truth.frames.length > 0);
    if (c.kind === "predict") return;

    // main.py reaches the hole and fails there, or (a stub returning None) prints something else.
    const real = await runTrace(path.join(ROOT, name, "main.py"), { call: c.call });
    const error = real.exit.status === "error" ? (real.exit.value ?? "") : "";
    if (c.kind === "import") assert.match(error, /^ModuleNotFoundError/, `${name}: main.py ended ${real.exit.status}`);
    if (c.kind === "name") assert.match(error, new RegExp(`^NameError.*'(?:${c.holes.join("|")})'`), `${name}: main.py ended ${real.exit.status}`);
    if (c.kind === "stub") {
      assert.ok(error !== "" || printed(real) !== printed(truth), `${name}: the stub neither fails nor changes the output`);
      for (const hole of c.holes) assert.ok(real.frames.some((f) => f.func === hole), `${name}: main.py never calls ${hole}`);
    }
  });
}

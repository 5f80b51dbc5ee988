// All 800 CRUXEval functions through the batch tracer: the entry frame's return value must equal
// the dataset's output, every event must match an independent minimal sys.settrace recorder, and
// every frame must be one the frame grammar (built from the program's text) admits.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { type TraceResult } from "../adapter/real/run.js";
import { findPython, TraceBatch } from "../adapter/real/hostRun.js";
import { parsePython } from "../adapter/pyread/parse.js";
import { scopeTable } from "../adapter/rules/grammar.js";
import { checkFrame, PredictionError } from "../adapter/model/dialect.js";
import { CRUXEVAL as DATA, cruxevalSkip } from "./support/cruxeval.js";

const missing = cruxevalSkip();
const chosen = process.env.NDBG_TEST_PYTHON || undefined;

interface Row {
  id: string;
  code: string;
  input: string;
  output: string;
}

// Python decides equality of two reprs (sets, dicts, floats), one process for all pairs.
const EQUAL = `
import json, sys
out = []
for a, b in json.load(sys.stdin):
    try:
        out.append(eval(a) == eval(b))
    except Exception:
        out.append(False)
print(json.dumps(out))
`;

// A recorder that shares no code with the tracer: one settrace function, a depth counter, and
// the tracer's documented value rules (addresses normalised, reprs over 1000 characters cut).
const RECORDER = `
import json, re, sys
ADDR = re.compile(r" at 0x[0-9a-fA-F]+")
def rep(v):
    try:
        r = repr(v)
    except Exception as e:
        return "<repr failed: %s>" % type(e).__name__
    r = ADDR.sub(" at 0x...", r)
    return r if len(r) <= 1000 else r[:1000] + "\\u2026(+%d chars)" % (len(r) - 1000)
for line in sys.stdin:
    row = json.loads(line)
    events, depth = [], [0]
    def trace(frame, event, arg):
        if frame.f_code.co_filename != "<crux>" or len(events) > 20000:
            return None
        if event == "call":
            depth[0] += 1
        if event in ("call", "line", "return", "exception"):
            value = rep(arg) if event == "return" else rep(arg[1]) if event == "exception" else None
            names = {k: rep(v) for k, v in frame.f_locals.items() if not k.startswith(".")}
            events.append([event, frame.f_lineno, depth[0] - 1, frame.f_code.co_name, names, value])
        if event == "return":
            depth[0] -= 1
        return trace
    ns = {"__name__": "crux"}
    try:
        exec(compile(row["code"], "<crux>", "exec"), ns)
        call = compile("f(%s)" % row["input"], "<call>", "eval")
        sys.settrace(trace)
        eval(call, ns)
    except BaseException:
        pass
    finally:
        sys.settrace(None)
    print(json.dumps(events))
`;

test("CRUXEval: the traced return value of f equals the dataset's output for all 800", { skip: missing }, async (t) => {
  const rows: Row[] = readFileSync(DATA, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(rows.length, 800);
  const python = await findPython(chosen);

  const batch = new TraceBatch({ python: chosen });
  const results: TraceResult[] = [];
  const start = performance.now();
  try {
    for (const row of rows) results.push(await batch.trace({ source: row.code, call: `f(${row.input})` }));
  } finally {
    await batch.close();
  }
  const ms = performance.now() - start;
  t.diagnostic(`traced ${rows.length} programs in ${ms.toFixed(0)} ms (${((rows.length * 1000) / ms).toFixed(0)} programs/s, ${results.reduce((n, r) => n + r.frames.length, 0)} frames, ${batch.starts} process)`);

  const values = results.map((r, i) => {
    assert.equal(r.exit.status, "normal", `${rows[i].id}: ${r.exit.value}`);
    // f is called once from the untraced entry call, so its frame is the one at depth 0.
    const ret = r.frames.find((f) => f.event === "return" && f.depth === 0 && f.func === "f");
    assert.ok(ret && ret.value !== undefined, `${rows[i].id}: no return value`);
    return ret.value!;
  });
  const exact = values.filter((v, i) => v === rows[i].output).length;
  const equal: boolean[] = JSON.parse(
    execFileSync(python, ["-c", EQUAL], { input: JSON.stringify(values.map((v, i) => [v, rows[i].output])), encoding: "utf8", maxBuffer: 1 << 26 }),
  );
  t.diagnostic(`return value = output: ${exact}/800 as strings, ${equal.filter(Boolean).length}/800 by Python equality`);
  const wrong = rows.flatMap((r, i) => (equal[i] ? [] : [`${r.id}: ${values[i]} != ${r.output}`]));
  assert.deepEqual(wrong, []);
});

test("CRUXEval: every event, line, depth and local matches an independent settrace recorder", { skip: missing }, async () => {
  const rows: Row[] = readFileSync(DATA, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  const python = await findPython(chosen);
  const recorded: unknown[][][] = execFileSync(python, ["-c", RECORDER], {
    input: rows.map((r) => JSON.stringify(r)).join("\n") + "\n",
    encoding: "utf8",
    maxBuffer: 1 << 28,
    env: { ...process.env, PYTHONHASHSEED: "0" },
  })
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  assert.equal(recorded.length, rows.length);

  const batch = new TraceBatch({ python: chosen });
  let events = 0;
  try {
    for (const [i, row] of rows.entries()) {
      const r = await batch.trace({ source: row.code, call: `f(${row.input})` });
      // The recorder sees plain names and every return's argument (None where a frame unwound).
      const ours = r.frames.map((f) => [f.event, f.line, f.depth, f.func.split(".").pop(), f.locals, f.value ?? (f.event === "return" ? "None" : null)]);
      assert.deepEqual(ours, recorded[i], row.id);
      events += ours.length;
    }
  } finally {
    await batch.close();
  }
  assert.ok(events > 5000);
});

test("CRUXEval: every traced frame is one the frame grammar admits (its function and line come from the program's text)", { skip: missing }, async () => {
  const rows: Row[] = readFileSync(DATA, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  const batch = new TraceBatch({ python: chosen });
  let nested = 0;
  try {
    for (const row of rows) {
      const table = scopeTable(await parsePython(row.code));
      const r = await batch.trace({ source: row.code, call: `f(${row.input})` });
      for (const f of r.frames) {
        assert.doesNotThrow(() => checkFrame(f, table, ""), `${row.id}: ${f.event} ${f.line} ${f.func}`);
        if (f.func.endsWith(">")) nested++;
      }
      // A comprehension or lambda the function does not contain is no frame it can be in.
      const absent = [...(row.code.includes("lambda") ? [] : ["<lambda>"]), ...(row.code.includes(" for ") ? [] : ["<listcomp>", "<genexpr>", "<dictcomp>"])];
      for (const name of absent)
        assert.throws(() => checkFrame({ event: "line", line: 2, depth: 1, func: `f.<locals>.${name}`, locals: {} }, table, ""), PredictionError);
    }
  } finally {
    await batch.close();
  }
  assert.ok(nested > 500, `${nested} frames of comprehensions and lambdas`);
});

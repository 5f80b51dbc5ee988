// The tolerant Python reader (adapter/pyread/: parse.ts, calls.ts, source.ts): executable lines checked against real runs
// of CPython (through the tracer), functions and parameters, entry-call binding, and programs
// that do not parse (test/fixtures/broken/).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { blockExit, PySourceError, findFunction, functionAt, snapLine, type PySource } from "../adapter/pyread/source.js";
import { initPython } from "../adapter/pyread/parser.js";
import { parsePython, parsePythonSync } from "../adapter/pyread/parse.js";
import { bindCall } from "../adapter/pyread/calls.js";
import { runTrace } from "../adapter/real/hostRun.js";

const BROKEN = join(import.meta.dirname, "fixtures", "broken");
const broken = (name: string): Promise<PySource> => parsePython(readFileSync(join(BROKEN, name), "utf8"));
const fn = (src: PySource, q: string) => {
  const f = src.functions.find((x) => x.qualname === q);
  assert.ok(f, `function ${q} not found among ${src.functions.map((x) => x.qualname).join(", ")}`);
  return f;
};

// Constructs where CPython stops on continuation lines, skips docstrings and `else:`, runs decorators.
const CONSTRUCTS = `"""module doc"""
import sys

def deco(fn):
    return fn

def f(a,
      b=2):
    """doc
    string"""
    global Q
    x: int
    x = (a +
         b)
    y = [i
         for i in range(2)]
    z = g(
        x,
        y,
    )
    if (x and
            y):
        pass
    else:
        pass
    try:
        q = 1
    finally:
        q = 2
    return {
        'x': x,
    }

def g(p, q):
    return p

@deco
def h(*args, k=1, **kw):
    def inner():
        return k
    return inner()

class C:
    """class doc"""
    k = 1
    def m(self, y=None):
        return y

r = f(1)
for i in range(2):
    r = (r,
         i)
h(1, 2, k=3, z=4)
C().m()
`;

test("executable lines are a superset of every line CPython reports, and exclude docstrings, else, finally, global, bare annotations", async () => {
  const src = await parsePython(CONSTRUCTS);
  const dir = mkdtempSync(join(tmpdir(), "ndbg-parse-"));
  try {
    const prog = join(dir, "constructs.py");
    writeFileSync(prog, CONSTRUCTS);
    const run = await runTrace(prog, { timeout: 20 });
    assert.equal(run.exit.status, "normal", JSON.stringify(run.exit));
    const lines = new Set(src.lines);
    const reported = [...new Set(run.frames.filter((f) => f.event === "line").map((f) => f.line))];
    assert.ok(reported.length > 20);
    for (const l of reported) assert.ok(lines.has(l), `CPython stopped on line ${l}, which the parse does not list (${src.lines.join(",")})`);
    // Call events stand on a function's call line (its first decorator), or line 1 for <module>.
    for (const f of run.frames.filter((x) => x.event === "call")) {
      if (f.func === "<module>") assert.equal(f.line, 1);
      else if (f.func !== "C" && !f.func.endsWith(">")) assert.equal(fn(src, f.func).callLine, f.line, `call line of ${f.func}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const not = (l: number, why: string): void => assert.ok(!src.lines.includes(l), `line ${l} (${why}) must not be executable`);
  not(9, "docstring");
  not(10, "docstring continuation");
  not(11, "global");
  not(12, "annotation without value");
  not(20, "closing bracket");
  not(24, "else:");
  not(28, "finally:");
  not(32, "closing brace");
  assert.ok(src.lines.includes(14) && src.lines.includes(16) && src.lines.includes(21), "continuation lines that carry code are executable");
  assert.ok(!src.statementLines.includes(14), "a continuation line is not a statement line");
  assert.ok(src.lines.includes(1) && src.lines.includes(44), "module and class docstrings are executed");
});

test("functions: qualified names, parameters with kinds and defaults, call lines under decorators, line ranges", async () => {
  const src = await parsePython(CONSTRUCTS);
  assert.deepEqual(src.functions.map((f) => f.qualname), ["deco", "f", "g", "h", "h.<locals>.inner", "C.m"]);
  const f = fn(src, "f");
  assert.deepEqual(f.params, [{ name: "a", kind: "positional" }, { name: "b", kind: "positional", default: "2" }]);
  assert.deepEqual([f.defLine, f.callLine, f.bodyLine, f.endLine], [7, 7, 13, 32]);
  const h = fn(src, "h");
  assert.deepEqual(h.params, [
    { name: "args", kind: "var_positional" },
    { name: "k", kind: "keyword_only", default: "1" },
    { name: "kw", kind: "var_keyword" },
  ]);
  assert.equal(h.callLine, 37, "a decorated function's call event stands on its first decorator");
  assert.equal(h.defLine, 38);
  assert.equal(fn(src, "C.m").method, true);
  assert.equal(functionAt(src, 40)?.qualname, "h.<locals>.inner");
  assert.equal(functionAt(src, 41)?.qualname, "h");
  assert.equal(functionAt(src, 50), undefined);
  assert.deepEqual(src.classes.map((c) => c.qualname), ["C"]);
  assert.equal(src.definesOnly, false, "the module calls functions at the top level");
  assert.equal(src.firstLine, 1);
  assert.deepEqual(src.loops, [{ line: 50, endLine: 52 }]);
  assert.ok(src.names.includes("inner") && src.names.includes("kw"));
});

test("unfinished functions (..., pass, TODO, NotImplementedError) are functions with executable bodies", async () => {
  const src = await broken("unfinished.py");
  assert.deepEqual(src.functions.map((f) => f.qualname), ["parse", "evaluate", "run", "later"]);
  assert.deepEqual(fn(src, "parse").bodyLine, 3, "the docstring is skipped; `...` is the body");
  assert.deepEqual(fn(src, "evaluate").bodyLine, 8, "a comment is skipped; `pass` is the body");
  assert.deepEqual(fn(src, "evaluate").params, [{ name: "tokens", kind: "positional" }, { name: "env", kind: "positional", default: "None" }]);
  assert.ok(src.lines.includes(16), "a bare TODO name is a statement");
  assert.equal(fn(src, "run").endLine, 17);
  assert.equal(src.definesOnly, true);
  assert.deepEqual(src.errorLines, []);
});

test("missing imports change nothing: the file is only read", async () => {
  const src = await broken("missing_import.py");
  assert.deepEqual(src.statementLines, [1, 2, 5, 6, 7, 8, 9]);
  assert.equal(src.definesOnly, true);
  const b = await bindCall(src, "mean([1, 2, 3])");
  assert.deepEqual(b.locals, { xs: "[1, 2, 3]", weights: "None" });
});

test("syntax errors: statements and functions are recovered around them", async () => {
  const src = await broken("syntax_error.py");
  assert.ok(src.errorLines.length > 0, "the errors are reported");
  assert.deepEqual(src.functions.map((f) => f.qualname), ["total", "broken", "fine"]);
  // `for x in xs` without its colon, and a def whose parenthesis is never closed.
  assert.deepEqual(src.statementLines, [1, 2, 3, 4, 5, 8, 9, 10, 11, 14, 15, 16, 17, 18]);
  const b = fn(src, "broken");
  assert.deepEqual(b.params, [{ name: "a", kind: "positional" }, { name: "b", kind: "positional", default: "[1, 2]" }]);
  assert.deepEqual([b.bodyLine, b.endLine], [9, 11]);
  assert.deepEqual(fn(src, "fine").params.map((p) => `${p.kind}:${p.name}`), ["positional:n", "var_positional:rest", "keyword_only:scale", "var_keyword:opts"]);
  const call = await bindCall(src, "broken(1)");
  assert.deepEqual(call.locals, { a: "1", b: "[1, 2]" });
});

test("half-written code: unclosed brackets do not swallow the following statements", async () => {
  const src = await broken("half_written.py");
  assert.deepEqual(src.functions.map((f) => [f.qualname, f.bodyLine, f.endLine]), [["fib", 2, 5], ["table", 9, 13]]);
  for (const l of [9, 10, 11, 12, 13]) assert.ok(src.statementLines.includes(l), `line ${l} starts a statement`);
});

test("entry calls bind like Python: positional, keyword, defaults, *args, **kwargs, reprs of values", async () => {
  const src = await parsePython(CONSTRUCTS);
  assert.deepEqual((await bindCall(src, "f([1,2])")).locals, { a: "[1, 2]", b: "2" });
  assert.deepEqual((await bindCall(src, "f(b='x', a=-3)")).locals, { a: "-3", b: "'x'" });
  assert.deepEqual((await bindCall(src, 'f((1,), {"k": 2.50})')).locals, { a: "(1,)", b: "{'k': 2.5}" });
  const h = await bindCall(src, "h(1, 'two', k=3, z=[4])");
  assert.deepEqual(h.locals, { k: "3", args: "(1, 'two')", kw: "{'z': [4]}" });
  assert.deepEqual(Object.keys(h.locals), ["k", "args", "kw"], "CPython's order: keyword-only, then *args, then **kwargs");
  assert.deepEqual((await bindCall(src, "h()")).locals, { k: "1", args: "()", kw: "{}" });
  // A value that is not computed without running code stays as written, and is marked.
  const g = await bindCall(src, "g(len('ab'), undefined_name)");
  assert.equal(g.locals.p, "2", "len of a literal is computed");
  assert.equal(g.locals.q, "undefined_name");
  assert.deepEqual(g.unevaluated, ["q"]);
  const m = await bindCall(src, "C().m(5)");
  assert.deepEqual(Object.keys(m.locals), ["self", "y"]);
  assert.equal(m.locals.y, "5");
  assert.equal(findFunction(src, "m")?.qualname, "C.m");
});

test("bad entry calls get clear errors", async () => {
  const src = await parsePython(CONSTRUCTS);
  const bad = async (call: string, re: RegExp): Promise<void> => {
    await assert.rejects(bindCall(src, call), (e: unknown) => e instanceof PySourceError && re.test(e.message));
  };
  await bad("nope(1)", /names nope, which this file does not define \(it defines deco, f, g, h, C\.m\)/);
  await bad("g(1)", /missing an argument: q/);
  await bad("g(1, 2, 3)", /takes 2 positional arguments/);
  await bad("g(1, p=2)", /multiple values for argument 'p'/);
  await bad("g(1, 2, r=3)", /unexpected keyword argument 'r'/);
  await bad("f(*xs)", /unpacks \*xs/);
  await bad("f(1) + 1", /is not a call/);
  await bad("f(1", /is not a call/);
});

test("breakpoint lines snap to the next executable line; CRLF sources; the synchronous parser after init", async () => {
  await initPython();
  const src = parsePythonSync("def f(x):\r\n\r\n    # note\r\n    y = x\r\n    return y\r\n");
  assert.deepEqual(src.lines, [1, 4, 5]);
  assert.equal(snapLine(src, 2), 4);
  assert.equal(snapLine(src, 5), 5);
  assert.equal(snapLine(src, 6), undefined);
  const empty = parsePythonSync("");
  assert.deepEqual([empty.lines, empty.functions, empty.definesOnly, empty.firstLine], [[], [], false, undefined]);
  const garbage = parsePythonSync("))) def (( :\n\x00\n  return\n");
  assert.ok(Array.isArray(garbage.lines), "garbage still gets an answer");
});

test("a simple statement that ends its block goes past the `if` it ends a branch of, back to its loop's header, or off its function's end, and so does an if that fails or a loop that ends; not out of try, with or `while True`", async () => {
  const code = [
    "def f(xs):", //            1
    "    out = []", //          2
    "    for x in xs:", //      3
    "        if x > 1:", //     4
    "            out.append(x)", // 5
    "        elif x < 0:", //   6
    "            pass", //      7
    "        else:", //         8
    "            y = 2", //     9
    "    while out:", //        10
    "        out.pop()", //     11
    "    try:", //              12
    "        z = 1", //         13
    "    except ValueError:", // 14
    "        z = 2", //         15
    "    if z:", //             16
    "        z = 3", //         17
    "    while True:", //       18
    "        break_now = 1", // 19
    "    return out", //        20
    "", //                      21
    "def g():", //              22
    "    a = 1", //             23
    "",
  ].join("\n");
  const src = await parsePython(code);
  const at = (line: number): ReturnType<typeof blockExit> => blockExit(src, src.statements.find((s) => s.line === line)!);
  assert.deepEqual(at(5), { loop: 3 }, "the if statement ends the for body: back to the header");
  assert.deepEqual(at(7), { loop: 3 });
  assert.deepEqual(at(9), { loop: 3 }, "an else branch too");
  assert.deepEqual(at(11), { loop: 10 });
  assert.deepEqual(at(17), { to: { line: 18, endLine: 18 } }, "past the if, to the next statement");
  assert.deepEqual(at(23), { end: true }, "off the end of g");
  assert.equal(at(2), undefined, "not the last of its block");
  assert.equal(at(13), undefined, "a try body");
  assert.equal(at(15), undefined, "an except block");
  assert.equal(at(19), undefined, "while True jumps back past its header");
  assert.equal(at(20), undefined, "a return does not fall through");
  // An if whose test fails, or a loop that ends, with no clause after it: past the whole statement.
  assert.deepEqual(at(16), { to: { line: 18, endLine: 18 } });
  assert.deepEqual(at(3), { to: { line: 10, endLine: 10 } });
  assert.equal(at(4), undefined, "an elif follows: the test's failure goes there");
});

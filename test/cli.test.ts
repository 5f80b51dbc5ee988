// The built CLI (dist/ndbg.js) as a user runs it: a subprocess, its output and its exit code.
import { test, before } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, sameExit, sameFrame, sameLocals, type Exit, type Frame, type Step } from "../adapter/format/trajectory.js";
import { runTrace } from "../adapter/real/hostRun.js";
import { ROOT, buildDist, ndbgWithin } from "./support/dist.js";

const dir = mkdtempSync(join(tmpdir(), "ndbg-cli-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

const ndbg = ndbgWithin(60_000);
const write = (name: string, text: string): string => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};

const PROG = write("prog.py", `def g(x):
    y = x * 2
    print('g', y)
    return y

def f(n):
    total = 0
    for i in range(n):
        total += g(i)
    return total
`);

before(buildDist);

test("--help lists every command; no command or an unknown one is a usage error (2)", async () => {
  const help = await ndbg("--help");
  assert.equal(help.code, 0);
  assert.match(help.stdout, /ndbg trace FILE/);
  assert.match(help.stdout, /ndbg steps FILE/);
  const none = await ndbg();
  assert.equal(none.code, 2);
  assert.match(none.stderr, /Usage: ndbg <command>/);
  const unknown = await ndbg("frobnicate");
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown command "frobnicate"/);
  assert.equal(unknown.stdout, "");
  const one = await ndbg("trace", "--help");
  assert.equal(one.code, 0);
  assert.match(one.stdout, /^Usage: ndbg trace FILE/);
  assert.match(one.stdout, /\n  --call EXPR +a call to make once the file has run/);
  // A subcommand's help is its own: every flag it reads.
  const steps = await ndbg("eval", "steps", "--help");
  assert.equal(steps.code, 0);
  assert.match(steps.stdout, /^Usage: ndbg eval steps --data .*--concurrency N.*--no-sealed/);
  assert.match((await ndbg("eval", "hybrid", "--help")).stdout, /^Usage: ndbg eval hybrid --data DIR .*--hole-model/);
  assert.match((await ndbg("eval", "--help")).stdout, /ndbg eval SUBCOMMAND --help/);
});

test("each command's --help lists every flag it parses, and its parser is the one its help comes from", async () => {
  const commands = join(ROOT, "adapter", "cli", "commands");
  const names = new Set<string>();
  for (const file of readdirSync(commands).filter((f) => f.endsWith(".ts"))) {
    const source = readFileSync(join(commands, file), "utf8");
    // Flags are parsed only with a spec (flags.ts): no options declared by hand beside the help.
    for (const [, arg] of source.matchAll(/\bflags\(argv, ([^)]*)\)/g)) assert.match(arg, /^[A-Z]+$/, `${file}: flags(argv, ${arg})`);
    assert.doesNotMatch(source, /\bparseArgs\b/, `${file} parses by itself`);
    const mod = (await import(join(commands, file))) as { specs?: { usage: string; options: Record<string, unknown> }[] };
    if (!mod.specs) {
      assert.doesNotMatch(source, /\bflags\(/, `${file} parses flags but exports no specs`);
      continue;
    }
    for (const spec of mod.specs) {
      const name = spec.usage.split(" [")[0].split(" --")[0].replace(/ (FILE|FILE\|TRACE\.ndbg)$/, "");
      names.add(name);
      const r = await ndbg(...name.split(" "), "--help");
      assert.equal(r.code, 0, r.stderr);
      const options = r.stdout.split("\nOptions:\n")[1] ?? "";
      const listed = [...options.matchAll(/^  --([a-z-]+)/gm)].map((m) => m[1]);
      assert.deepEqual(listed.sort(), Object.keys(spec.options).sort(), `ndbg ${name} --help`);
      for (const flag of listed) assert.ok(r.stdout.split("\n")[0].includes(`--${flag}`), `ndbg ${name}: --${flag} in the usage line`);
    }
  }
  assert.deepEqual([...names].sort(), ["bench", "calibrate", "data", "doctor", "eval compare", "eval cruxeval", "eval hybrid", "eval steps", "hybrid", "mcp", "predict", "steps", "trace"]);
});

test("trace: the real trajectory in the one format, step_into between every event", async () => {
  const r = await ndbg("trace", PROG, "--call", "f(2)");
  assert.equal(r.code, 0, r.stderr);
  const t = parse(r.stdout);
  assert.deepEqual(t.meta, { program: PROG, call: "f(2)" });
  const real = await runTrace(PROG, { call: "f(2)" });
  assert.equal(t.source, real.source);
  const frames = t.steps.flatMap((s) => (s.frame ? [s.frame] : []));
  // (a return's caller and a value just returned are a debugger's view of the run: not written)
  assert.deepEqual(frames, real.frames.map(({ caller: _, returned: __, ...f }) => f));
  assert.ok(t.steps.slice(1).every((s) => s.action?.kind === "step_into"));
  assert.deepEqual(t.steps.at(-1)!.exit, { status: "normal" });
  assert.equal(t.steps[0].action, undefined);
  assert.match(r.stdout, /<\|return_sep\|>10 0 f<\|arg_sep\|>n=2<\|arg_sep\|>total=2<\|arg_sep\|>i=1<\|value_sep\|>2\n/);
});

test("trace --json: one JSON frame a line, then the exit record", async () => {
  const r = await ndbg("trace", PROG, "--call", "f(2)", "--json");
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trimEnd().split("\n").map((l) => JSON.parse(l) as Frame & { status?: string });
  const real = await runTrace(PROG, { call: "f(2)" });
  assert.equal(lines.length, real.frames.length + 1);
  assert.deepEqual(lines.slice(0, -1), real.frames);
  assert.deepEqual(lines.at(-1), { event: "exit", status: "normal" });
  assert.equal(lines.filter((l) => l.stdout).map((l) => l.stdout).join(""), "g 0\ng 2\n");
});

test("trace: a script, a program that raises, and a runaway program cut off by --max-events", async () => {
  const script = write("script.py", "x = 1\nprint(x)\n");
  let r = await ndbg("trace", script);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(parse(r.stdout).steps[0].frame!.func, "<module>");
  const raises = write("raises.py", "def f():\n    raise KeyError('k')\n");
  r = await ndbg("trace", raises, "--call", "f()");
  assert.equal(r.code, 0, "a run that raises is still a trajectory");
  assert.deepEqual(parse(r.stdout).steps.at(-1)!.exit, { status: "error", value: "KeyError('k')" });
  const forever = write("forever.py", "i = 0\nwhile True:\n    i += 1\n");
  r = await ndbg("trace", forever, "--max-events", "20", "--json");
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trimEnd().split("\n");
  assert.equal(lines.length, 21);
  assert.equal(JSON.parse(lines[20]).status, "limit");
});

test("trace: bad input gets a clear message and a non-zero exit, nothing on stdout", async () => {
  const cases: [string[], number, RegExp][] = [
    [["trace"], 2, /FILE is missing/],
    [["trace", PROG, PROG], 2, /one FILE expected/],
    [["trace", PROG, "--bogus"], 2, /Unknown option '--bogus'/],
    [["trace", PROG, "--call"], 2, /--call/],
    [["trace", PROG, "--max-events", "x"], 2, /--max-events needs a positive integer/],
    [["trace", PROG, "--timeout=-1"], 2, /--timeout needs a positive number/],
    // Past Node's longest timer the run ended at once ("exit never"): bounded like the launch attribute.
    [["trace", PROG, "--timeout", "2147483"], 2, /--timeout must be at most 1000000 seconds/],
    [["steps", PROG, "--actions", "step_into", "--timeout", "1e7"], 2, /--timeout must be at most 1000000 seconds/],
    [["data", "--programs", PROG, "--out", join(dir, "out.jsonl"), "--timeout", "3e6"], 2, /--timeout must be at most 1000000 seconds/],
    [["eval", "cruxeval", "--data", PROG, "--task", "output", "--check-timeout", "3e6"], 2, /--check-timeout must be at most 1000000 seconds/],
    [["bench", "--timeout", "3e6"], 2, /--timeout must be at most 1000000 seconds/],
    [["trace", join(dir, "missing.py")], 1, /missing\.py/],
    [["trace", PROG, "--call", "f("], 2, /bad --call "f\("/],
    [["trace", PROG, "--call", "nope(1)"], 1, /the call nope\(1\) failed before any traced code ran: NameError/],
    [["trace", write("syntax.py", "def f(:\n"), "--json"], 1, /failed before any traced code ran: SyntaxError/],
    [["trace", PROG, "--python", "/nonexistent/python3"], 1, /python/i],
  ];
  for (const [args, code, re] of cases) {
    const r = await ndbg(...args);
    assert.equal(r.code, code, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, re, args.join(" "));
    assert.equal(r.stdout, "", args.join(" "));
  }
});

test("steps --json: one line per action, the state after it", async () => {
  const r = await ndbg("steps", PROG, "--call", "f(3)", "--json", "--actions",
    "step_over,step_over,step_over,step_into,step_into,step_return,step_over,breakpoint:3,step_back,step_back,continue", "--breakpoints", "10");
  assert.equal(r.code, 0, r.stderr);
  const out = r.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
  const brief = out.map((o) => `${o.action} ${o.event} ${o.line ?? o.status}`);
  assert.deepEqual(brief, [
    "step_over line 7",
    "step_over line 8",
    "step_over line 9",
    "step_into call 1",
    "step_into line 2",
    "step_return return 4",
    "step_over line 8",
    "breakpoint:3 line 3",
    "step_back line 2",
    "step_back line 9",
    "continue line 10",
  ]);
  assert.deepEqual(out[3].locals, { x: "0" });
  assert.equal(out[5].value, "0");
  assert.equal(out[5].stdout, "g 0\n");
  assert.deepEqual(out[7].locals, { x: "1", y: "2" });
  assert.deepEqual(out[10].locals, { n: "3", total: "6", i: "2" });
});

test("steps: readable text; reverse_continue; the exit", async () => {
  const r = await ndbg("steps", PROG, "--call", "f(3)", "--actions", "continue,reverse_continue,continue,continue,continue,continue,step_into", "--breakpoints", "4");
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trimEnd().split("\n");
  assert.equal(lines.length, 8);
  assert.match(lines[0], /^start\s+call\s+f:6\s+n=3$/);
  assert.match(lines[1], /^continue\s+line\s+g:4\s+x=0 y=0\s+output "g 0\\n"$/);
  assert.match(lines[2], /^reverse_continue\s+call\s+f:6/);
  assert.match(lines[4], /^continue\s+line\s+g:4\s+x=1 y=2/);
  assert.match(lines[5], /^continue\s+line\s+g:4\s+x=2 y=4/);
  assert.match(lines[6], /^continue\s+exit normal$/);
  assert.match(lines[7], /^step_into\s+exit normal$/);
});

test("steps on a trace file written by trace gives the same answers as on the program", async () => {
  const tr = await ndbg("trace", PROG, "--call", "f(2)");
  const file = write("prog.ndbg", tr.stdout);
  const actions = ["--actions", "step_over,step_over,step_over,step_into,step_return,step_back,continue", "--breakpoints", "3", "--json"];
  const fromFile = await ndbg("steps", file, ...actions);
  const fromProgram = await ndbg("steps", PROG, "--call", "f(2)", ...actions);
  assert.equal(fromFile.code, 0, fromFile.stderr);
  assert.equal(fromFile.stdout, fromProgram.stdout);
});

test("steps: bad input gets a clear message and a non-zero exit", async () => {
  const bad = write("bad.ndbg", "#ndbg 1\n<|src_sep|>\nx\n<|frame_sep|><|jump|>\n");
  const session = write("session.ndbg", "#ndbg 1\n<|src_sep|>\nx = 1\n<|frame_sep|><|line_sep|>1 0 <module>\n<|action_sep|><|step_over|>\n<|exit_normal|>\n");
  const cases: [string[], number, RegExp][] = [
    [["steps", PROG, "--call", "f(1)"], 2, /--actions is missing/],
    [["steps", PROG, "--call", "f(1)", "--actions", "step_over,jump"], 2, /unknown action "jump" \(actions: step_into, step_over/],
    [["steps", PROG, "--call", "f(1)", "--actions", ""], 2, /--actions is empty/],
    [["steps", PROG, "--call", "f(1)", "--actions", "breakpoint"], 2, /breakpoint needs a line: breakpoint:LINE/],
    [["steps", PROG, "--call", "f(1)", "--actions", "breakpoint:x"], 2, /breakpoint needs a line/],
    [["steps", PROG, "--call", "f(1)", "--actions", "step_over:3"], 2, /step_over takes no argument/],
    [["steps", PROG, "--call", "f(1)", "--actions", "continue", "--breakpoints", "7,x"], 2, /--breakpoints needs line numbers/],
    [["steps", join(dir, "nope.py"), "--call", "f(1)", "--actions", "step_over"], 1, /nope\.py/],
    [["steps", PROG, "--call", "g(", "--actions", "step_over"], 2, /bad --call/],
    [["steps", PROG, "--call", "h(1)", "--actions", "step_over"], 1, /failed before any traced code ran: NameError/],
    [["steps", bad, "--actions", "step_over"], 1, /is not a trace file: unknown token <\|jump\|> at offset \d+/],
    [["steps", join(dir, "nope.ndbg"), "--actions", "step_over"], 1, /cannot read the trace .*nope\.ndbg: no such file/],
    [["steps", session, "--call", "f()", "--actions", "step_over"], 2, /--call applies to a program/],
  ];
  for (const [args, code, re] of cases) {
    const r = await ndbg(...args);
    assert.equal(r.code, code, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, re, args.join(" "));
    assert.equal(r.stdout, "", args.join(" "));
  }
  // A saved session (not every event) replays stop by stop.
  const r = await ndbg("steps", session, "--actions", "step_over");
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /exit normal/);
});

test("the bundled example runs through the CLI", async () => {
  const r = await ndbg("steps", join(ROOT, "examples", "demo.py"), "--call", "total([3, 1, 2])", "--actions", "step_over,step_over,step_over,step_return", "--json");
  assert.equal(r.code, 0, r.stderr);
  const last = JSON.parse(r.stdout.trimEnd().split("\n").at(-1)!);
  assert.equal(last.event, "return");
  assert.equal(last.value, "9");
});

/** A line of `ndbg steps --json` / `ndbg predict --json` as the state it stands for. */
function stepOf(line: string): Step {
  const { action: _a, confidence: _c, tokens: _t, event, ...rest } = JSON.parse(line) as Record<string, unknown>;
  return event === "exit" ? { exit: rest as unknown as Exit } : { frame: { event, ...rest } as unknown as Frame };
}

test("predict --compare: the model's states above the real ones, ✓ exactly where they are the same, and a count that adds up", { timeout: 180_000 }, async () => {
  const demo = join(ROOT, "examples", "demo.py");
  const actions = "step_into,step_over,step_over,step_return,step_over";
  const args = ["--call", "total([3, 1, 2])", "--actions", actions, "--threads", "1", "--gpu", "cpu"];
  const slow = ndbgWithin(120_000);
  const r = await slow("predict", demo, ...args, "--compare");
  assert.equal(r.code, 0, r.stderr);
  // The same actions, each side on its own: the real states (ndbg steps) and the predicted ones (the same greedy model).
  const real = (await ndbg("steps", demo, "--call", "total([3, 1, 2])", "--actions", actions, "--json")).stdout.trimEnd().split("\n").map(stepOf);
  const predicted = (await slow("predict", demo, ...args, "--json")).stdout.trimEnd().split("\n").map(stepOf);
  assert.equal(real.length, 5);
  assert.equal(predicted.length, 5);
  const rows = r.stdout.trimEnd().split("\n");
  const heads = rows.filter((l) => /^\S/.test(l) && /^[a-z_]+ +[✓✗] /.test(l));
  assert.deepEqual(heads.map((l) => l.split(/\s+/)[0]), ["start", ...actions.split(",")]);
  const same = (p: Step, t: Step): boolean => (p.exit && t.exit ? sameExit(p.exit, t.exit) : !!p.frame && !!t.frame && sameFrame(p.frame, t.frame));
  for (let i = 0; i < 5; i++) {
    const head = heads[i + 1];
    const at = rows.indexOf(head);
    assert.match(head, /predicted /);
    assert.match(rows[at + 1], /^ +real /, `the real state under the predicted one: ${rows[at + 1]}`);
    const t = real[i];
    assert.ok(rows[at + 1].includes(t.exit ? `exit ${t.exit.status}` : `${t.frame!.func}:${t.frame!.line}`), `${rows[at + 1]} is the real state ${JSON.stringify(t)}`);
    const exact = same(predicted[i], t);
    assert.equal(head.includes(" ✓ "), exact, `step ${i + 1}: ${head}`);
    // A miss says what differs: line and locals, each ✓ or ✗.
    if (!exact) assert.match(rows[at + 2], /^ +line [✓✗] · locals [✓✗]/);
  }
  const n = predicted.filter((p, i) => same(p, real[i])).length;
  const lines = predicted.filter((p, i) => (p.exit && real[i].exit) || (p.frame && real[i].frame && p.frame.line === real[i].frame!.line)).length;
  const locals = predicted.filter((p, i) => (p.exit && real[i].exit) || (p.frame && real[i].frame && sameLocals(p.frame.locals, real[i].frame!.locals))).length;
  assert.match(r.stdout, new RegExp(`\\n${n} of 5 predicted states exact \\(line right in ${lines} of 5, locals in ${locals} of 5\\)\\.\\n`));
  assert.equal(heads.slice(1).filter((l) => l.includes(" ✓ ")).length, n);
  // Bad combinations are usage errors.
  const both = await ndbg("predict", demo, "--actions", "step_over", "--compare", "--json");
  assert.equal(both.code, 2);
  assert.match(both.stderr, /--compare prints the two sides as text/);
  const py = await ndbg("predict", demo, "--actions", "step_over", "--python", "python3");
  assert.equal(py.code, 2);
  assert.match(py.stderr, /--python runs the real program, for --compare/);
});

// The trajectory format (adapter/format/trajectory.ts) against its golden files, round trips, escaping,
// the delta rule, files of several trajectories and the errors malformed input gets.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import {
  FORMAT_VERSION, SPECIAL_TOKENS, TrajectoryError, escapeText, isDelta, parse, parseMany, serialize, serializeMany, unescapeText,
  type Action, type Frame, type Step, type Trajectory,
} from "../adapter/format/trajectory.js";

const GOLDEN = join(import.meta.dirname, "golden");
const goldenNames = readdirSync(GOLDEN).filter((f) => f.endsWith(".json")).map((f) => f.slice(0, -5));

const frame = (event: Frame["event"], line: number, locals: Record<string, string>, extra: Partial<Frame> = {}): Frame =>
  ({ event, line, depth: 0, func: "f", locals, ...extra });
const traj = (steps: Step[], source = "def f(a):\n    b = a\n    return b\n", meta?: Record<string, unknown>): Trajectory =>
  meta ? { version: FORMAT_VERSION, meta, source, steps } : { version: FORMAT_VERSION, source, steps };
const roundTrip = (t: Trajectory): void => {
  const text = serialize(t);
  assert.deepEqual(parse(text), t);
  assert.equal(serialize(parse(text)), text);
};
/** Asserts that parsing fails with a TrajectoryError whose message matches `re`; returns the message. */
const parseError = (text: string, re: RegExp): string => {
  let msg = "";
  assert.throws(() => parse(text), (e: unknown) => {
    assert.ok(e instanceof TrajectoryError, `expected a TrajectoryError, got ${String(e)}`);
    msg = e.message;
    assert.match(msg, re);
    return true;
  });
  return msg;
};
const offsetOf = (msg: string): number => Number(/offset (\d+)/.exec(msg)?.[1] ?? NaN);

test("golden files exist", () => {
  assert.ok(goldenNames.includes("minimal") && goldenNames.includes("features"), goldenNames.join(","));
});

for (const name of goldenNames) {
  const json = JSON.parse(readFileSync(join(GOLDEN, name + ".json"), "utf8")) as Trajectory;
  const text = readFileSync(join(GOLDEN, name + ".ndbg"), "utf8");
  test(`golden ${name}: parse(text) equals the JSON`, () => {
    assert.deepEqual(parse(text), json); // deepEqual ignores key order
  });
  test(`golden ${name}: serialize(JSON) is the text byte for byte`, () => {
    assert.equal(serialize(json), text);
  });
  test(`golden ${name}: round trips both ways`, () => {
    assert.equal(serialize(parse(text)), text);
    assert.deepEqual(parse(serialize(json)), json);
  });
}

test("golden features covers every event, action kind and exit with a value", () => {
  const t = JSON.parse(readFileSync(join(GOLDEN, "features.json"), "utf8")) as Trajectory;
  const events = new Set(t.steps.flatMap((s) => (s.frame ? [s.frame.event] : [])));
  assert.deepEqual([...events].sort(), ["call", "exception", "line", "return"]);
  const kinds = new Set(t.steps.flatMap((s) => (s.action ? [s.action.kind] : [])));
  for (const k of ["step_into", "step_over", "inv_step_return", "breakpoint", "inv_breakpoint", "continue"]) assert.ok(kinds.has(k as never), k);
});

test("special tokens: fixed order, unique, each one parses as a token", () => {
  assert.equal(new Set(SPECIAL_TOKENS).size, SPECIAL_TOKENS.length);
  assert.equal(SPECIAL_TOKENS[0], "<|src_sep|>");
  for (const tok of SPECIAL_TOKENS) assert.match(tok, /^<\|[a-z_]+\|>$/);
  assert.equal(SPECIAL_TOKENS.length, 6 + 4 + 9 + 3);
});

test("escaping: <| gains one backslash, and unescaping is its exact inverse", () => {
  assert.equal(escapeText("<|"), "<\\|");
  assert.equal(escapeText("<\\|"), "<\\\\|");
  assert.equal(escapeText("<\\\\|"), "<\\\\\\|");
  assert.equal(escapeText("a < b | c <> |"), "a < b | c <> |");
  for (const s of ["<|", "<\\|", "<\\\\|", "<|frame_sep|>", "<<||", "x<\\\\\\|y", "<", "\\|", "|<|<|", ""]) {
    assert.equal(unescapeText(escapeText(s)), s);
    assert.doesNotMatch(escapeText(s), /<\|/);
  }
});

test("escaping: <|, <\\| and <\\\\| survive in reprs, source, stdout, values and exits", () => {
  const nasty = ["<|", "<\\|", "<\\\\|", "<|frame_sep|>", "<|action_sep|><|step_into|>", "x<", "<\\", "|>"];
  const source = nasty.map((s, i) => `v${i} = ${JSON.stringify(s)}`).join("\n") + "\n";
  const locals = Object.fromEntries(nasty.map((s, i) => [`v${i}`, s]));
  const t = traj(
    [
      { frame: frame("line", 1, locals, { func: "<module>", stdout: nasty.join("\n") }) },
      { action: { kind: "step_over" }, frame: frame("line", 2, { ...locals, v0: "<\\\\|<|" }, { func: "<module>", stdout: "<|" }) },
      { action: { kind: "step_over" }, frame: frame("return", 2, locals, { func: "<module>", value: "<|exit_normal|>" }) },
      { action: { kind: "continue" }, exit: { status: "error", value: "ValueError('<\\|')", stdout: "<|out_sep|>" } },
    ],
    source,
  );
  const text = serialize(t);
  // The only special tokens in the text are the ones the structure put there: the same
  // trajectory with every distinct free text replaced by a plain one has exactly the same.
  const names = new Map<string, string>();
  const plainText = (v: string): string => names.get(v) ?? (names.set(v, `t${names.size}`), `t${names.size - 1}`);
  const structural = new Set(["event", "func", "kind", "status"]);
  const plain = JSON.parse(JSON.stringify(t, (k, v) => (typeof v === "string" && !structural.has(k) ? plainText(v) : v)));
  const tokens = (s: string): string[] => s.match(/<\|[a-z_]+\|>/g) ?? [];
  assert.deepEqual(tokens(text), tokens(serialize(plain)));
  roundTrip(t);
});

test("round trip: stdout and values that end with newlines, empty and multi-line reprs", () => {
  roundTrip(traj([
    { frame: frame("call", 1, { a: "''" }, { stdout: "\n" }) },
    { action: { kind: "step_into" }, frame: frame("line", 2, { a: "''" }, { stdout: "two\nlines\n\n" }) },
    { action: { kind: "step_into" }, frame: frame("line", 3, { a: "''", b: "a\nmulti-line repr\n" }) },
    { action: { kind: "step_into" }, frame: frame("return", 3, { a: "''", b: "" }, { value: "\n" }) },
    { action: { kind: "step_into" }, exit: { status: "normal", stdout: "end\n" } },
  ]));
});

test("round trip: other files, qualified names, depth, no locals, and a limit exit", () => {
  roundTrip(traj([
    { frame: frame("call", 3, {}, { func: "Stack.push", depth: 2, file: "pkg/dir with space/mod.py" }) },
    { action: { kind: "step_into" }, frame: frame("line", 4, { x: "1" }, { func: "f.<locals>.g", depth: 3 }) },
    { action: { kind: "step_over" }, frame: frame("exception", 4, { x: "1" }, { func: "f.<locals>.g", depth: 3, value: "KeyError('k')" }) },
    { action: { kind: "step_into" }, exit: { status: "limit" } },
  ], "", { program: "m.py", call: "f([1, 2])", nested: { n: 1 } }));
});

test("round trip: every action kind, with line arguments", () => {
  const kinds: Action[] = [
    { kind: "step_into" }, { kind: "step_over" }, { kind: "step_return" }, { kind: "breakpoint", line: 12 }, { kind: "continue" },
    { kind: "inv_step_into" }, { kind: "inv_step_over" }, { kind: "inv_step_return" }, { kind: "inv_breakpoint", line: 1 },
  ];
  assert.throws(() => serialize(traj([{ frame: frame("call", 1, {}) }, { action: { kind: "breakpoint" }, frame: frame("line", 2, {}) }])), /breakpoint needs a line number/);
  const steps: Step[] = [{ frame: frame("call", 1, { a: "1" }) }];
  kinds.forEach((action, i) => steps.push({ action, frame: frame("line", 2 + i, { a: String(i) }) }));
  roundTrip(traj(steps));
  assert.match(serialize(traj(steps)), /<\|breakpoint\|>12\n/);
});

test("round trip: a trajectory with no steps and one with an empty source", () => {
  roundTrip(traj([]));
  roundTrip(traj([], ""));
  roundTrip(traj([{ exit: { status: "normal" } }], ""));
});

test("source: CRLF is normalized and a final newline is added", () => {
  const t = parse(serialize(traj([], "a = 1\r\nb = 2")));
  assert.equal(t.source, "a = 1\nb = 2\n");
});

test("delta rule: only a same-call line step by step_into/step_over that removes no local", () => {
  const call = frame("call", 1, { a: "1" });
  const l2 = frame("line", 2, { a: "1" });
  const l3 = frame("line", 3, { a: "1", b: "1" });
  const into: Action = { kind: "step_into" };
  assert.equal(isDelta(call, into, l2), true);
  assert.equal(isDelta(l2, { kind: "step_over" }, l3), true);
  assert.equal(isDelta(undefined, into, l2), false, "first frame");
  assert.equal(isDelta(call, undefined, l2), false, "no action");
  assert.equal(isDelta(l3, into, { ...l2, locals: { a: "1" } }), false, "deleted local");
  for (const kind of ["step_return", "breakpoint", "continue", "inv_step_into", "inv_step_over", "inv_step_return", "inv_breakpoint"] as const)
    assert.equal(isDelta(l2, { kind, line: 3 }, l3), false, `jump by ${kind}`);
  assert.equal(isDelta(l2, into, { ...l3, event: "return" }), false, "return");
  assert.equal(isDelta(l2, into, { ...l3, event: "exception" }), false, "exception");
  assert.equal(isDelta({ ...l2, event: "return" }, into, l3), false, "after a return");
  assert.equal(isDelta(l2, into, { ...l3, depth: 1 }), false, "other depth");
  assert.equal(isDelta(l2, into, { ...l3, func: "g" }), false, "other function");
  assert.equal(isDelta(l2, into, { ...l3, file: "o.py" }), false, "other file");
});

test("delta rule in text: changed locals only; full after a deleted local and after a jump", () => {
  const text = serialize(traj([
    { frame: frame("call", 1, { a: "1", keep: "[1]" }) },
    { action: { kind: "step_into" }, frame: frame("line", 2, { a: "1", keep: "[1]" }) },
    { action: { kind: "step_over" }, frame: frame("line", 3, { a: "2", keep: "[1]", b: "3" }) },
    { action: { kind: "step_over" }, frame: frame("line", 2, { keep: "[1]", b: "3" }) }, // a deleted
    { action: { kind: "breakpoint", line: 3 }, frame: frame("line", 3, { keep: "[1]", b: "4" }) }, // jump
    { action: { kind: "inv_step_into" }, frame: frame("line", 2, { keep: "[1]", b: "3" }) }, // inverse
  ]));
  const frames = text.split("\n").filter((l) => l.startsWith("<|frame_sep|>"));
  assert.equal(frames[1], "<|frame_sep|><|line_sep|>2 0 f<|arg_sep|>..");
  assert.equal(frames[2], "<|frame_sep|><|line_sep|>3 0 f<|arg_sep|>..<|arg_sep|>a=2<|arg_sep|>b=3");
  assert.equal(frames[3], "<|frame_sep|><|line_sep|>2 0 f<|arg_sep|>keep=[1]<|arg_sep|>b=3");
  assert.equal(frames[4], "<|frame_sep|><|line_sep|>3 0 f<|arg_sep|>keep=[1]<|arg_sep|>b=4");
  assert.equal(frames[5], "<|frame_sep|><|line_sep|>2 0 f<|arg_sep|>keep=[1]<|arg_sep|>b=3");
  // The parser rebuilds full locals from deltas.
  assert.deepEqual(parse(text).steps[2].frame!.locals, { a: "2", keep: "[1]", b: "3" });
});

test("delta locals are rebuilt across an exit step and from the last frame", () => {
  const t = traj([
    { frame: frame("call", 1, { a: "1" }) },
    { action: { kind: "step_into" }, frame: frame("line", 2, { a: "1" }) },
    { action: { kind: "step_into" }, frame: frame("line", 3, { a: "1", b: "1" }) },
  ]);
  roundTrip(t);
});

test("several trajectories in one file: parseMany / serializeMany, offsets per file", () => {
  const a = traj([{ frame: frame("call", 1, { a: "1" }) }, { action: { kind: "step_into" }, frame: frame("line", 2, { a: "1" }) }], undefined, { side: "predicted" });
  const b = traj([{ frame: frame("call", 1, { a: "2" }) }, { action: { kind: "continue" }, exit: { status: "normal", stdout: "#ndbg 1\n" } }], "#ndbg 1\nx = 1\n", { side: "real" });
  const c = traj([], "");
  const text = serializeMany([a, b, c]);
  assert.deepEqual(parseMany(text), [a, b, c]);
  assert.equal(serializeMany(parseMany(text)), text);
  assert.throws(() => parse(text), /expected one trajectory, found 3/);
  // An error in the second trajectory reports an offset into the whole file.
  const bad = serialize(a) + serialize(b).replace("<|continue|>", "<|contnue|>");
  assert.throws(() => parseMany(bad), (e: unknown) => {
    assert.ok(e instanceof TrajectoryError);
    assert.match(e.message, /unknown token <\|contnue\|>/);
    assert.equal(offsetOf(e.message), bad.indexOf("<|contnue|>"));
    return true;
  });
  const badDelta = serialize(a) + serialize(b).replace("<|arg_sep|>a=2", "<|arg_sep|>..");
  assert.throws(() => parseMany(badDelta), (e: unknown) => {
    assert.ok(e instanceof TrajectoryError);
    assert.equal(offsetOf(e.message), badDelta.lastIndexOf("<|arg_sep|>.."));
    return true;
  });
});

test("header: metadata is optional, must be JSON; a line like a header inside a source is not a header", () => {
  const t = traj([{ frame: frame("line", 1, {}) }], "#ndbg 1\n#ndbg 1 {}\nprint(1)\n", { program: "a.py" });
  roundTrip(t);
  assert.equal(parseMany(serialize(t)).length, 1);
});

// ---- malformed input ----

const ok = serialize(traj([
  { frame: frame("call", 1, { a: "1" }) },
  { action: { kind: "step_into" }, frame: frame("line", 2, { a: "1" }) },
  { action: { kind: "step_return" }, frame: frame("return", 3, { a: "1", b: "1" }, { value: "1" }) },
]));

test("malformed: the valid base text parses", () => {
  assert.equal(parse(ok).steps.length, 3);
});

test("malformed: unknown token, with its offset", () => {
  const text = ok.replace("<|step_return|>", "<|step_out|>");
  const msg = parseError(text, /unknown token <\|step_out\|>/);
  assert.equal(offsetOf(msg), text.indexOf("<|step_out|>"));
});

test("malformed: bad or missing header", () => {
  parseError(ok.replace("#ndbg 2", "#ndbg"), /a trajectory starts with "#ndbg 2"/);
  parseError(ok.replace("#ndbg 2", "ndbg 2"), /a trajectory starts with/);
  parseError("\n" + ok, /a trajectory starts with/);
  parseError("", /a trajectory starts with/);
  parseError(ok.replace("#ndbg 2", '#ndbg 2 {"a":'), /a trajectory starts with|metadata/);
  parseError(ok.replace("#ndbg 2", '#ndbg 2 {"a":}'), /metadata is not valid JSON/);
  parseError(ok.replace("<|src_sep|>\n", ""), /a trajectory starts with "#ndbg 2" then "<\|src_sep\|>"/);
});

test("malformed: wrong version", () => {
  parseError(ok.replace("#ndbg 2", "#ndbg 3"), /version 3 is not supported \(this reads and writes 1 and 2\)/);
  parseError(ok.replace("#ndbg 2", "#ndbg 0"), /version 0 is not supported/);
});

test("header: version 2 carries the Python version, version 1 reads as unknown; both round trip as written", () => {
  const steps: Step[] = [{ frame: frame("call", 1, { a: "1" }) }, { action: { kind: "step_into" }, frame: frame("line", 2, { a: "1" }) }];
  const v2: Trajectory = { version: 2, python: "3.12", meta: { program: "a.py" }, source: "def f(a):\n    b = a\n", steps };
  const text2 = serialize(v2);
  assert.ok(text2.startsWith('#ndbg 2 python3.12 {"program":"a.py"}\n<|src_sep|>\n'), text2);
  roundTrip(v2);
  roundTrip({ ...v2, python: "3.11" });
  const bare: Trajectory = { version: 2, source: "x = 1\n", steps: [] };
  assert.equal(serialize(bare), "#ndbg 2\n<|src_sep|>\nx = 1\n");
  roundTrip(bare);
  // Version 1: no Python version; read, it is unknown, and it is written back as version 1, byte for byte.
  const v1: Trajectory = { version: 1, meta: { program: "a.py" }, source: v2.source, steps };
  const text1 = serialize(v1);
  assert.ok(text1.startsWith('#ndbg 1 {"program":"a.py"}\n'), text1);
  assert.equal(parse(text1).python, undefined);
  assert.equal(parse(text1).version, 1);
  roundTrip(v1);
  assert.deepEqual(parse(text2).steps, parse(text1).steps);
  // One file may hold both (a version 1 trace and a version 2 session saved after it).
  assert.deepEqual(parseMany(text1 + text2).map((t) => [t.version, t.python]), [[1, undefined], [2, "3.12"]]);
  assert.throws(() => serialize({ ...v1, python: "3.11" }), /a version 1 header has no Python version/);
  assert.throws(() => serialize({ ...v2, python: "3.x" }), /bad Python version "3.x"/);
  assert.throws(() => serialize({ ...v2, version: 3 }), /version 3 is not supported/);
});

test("malformed: a bad Python version in the header", () => {
  parseError(ok.replace("#ndbg 2", "#ndbg 2 python3"), /bad Python version "3" in the header/);
  parseError(ok.replace("#ndbg 2", "#ndbg 2 python2.7"), /bad Python version "2.7"/);
  parseError(ok.replace("#ndbg 2", "#ndbg 2 python3.11x"), /bad Python version "3.11x"/);
  parseError(ok.replace("#ndbg 2", "#ndbg 1 python3.11"), /a version 1 header has no Python version/);
  // Only a header directly before <|src_sep|> starts a trajectory: "python" must follow one space.
  parseError(ok.replace("#ndbg 2", "#ndbg 2  python3.11"), /a trajectory starts with/);
});

test("malformed: a delta where the format requires full locals, with the frame's offset", () => {
  // After a return, after a jump, as the first frame, and after a deleted local.
  const afterReturn = ok + "<|action_sep|><|step_into|>\n<|frame_sep|><|line_sep|>4 0 f<|arg_sep|>..\n";
  let msg = parseError(afterReturn, /delta where the format requires them in full/);
  assert.equal(offsetOf(msg), afterReturn.lastIndexOf("<|line_sep|>"));
  const jump = ok.replace("<|step_into|>\n", "<|breakpoint|>2\n");
  assert.notEqual(jump, ok);
  msg = parseError(jump, /delta where the format requires them in full/);
  assert.equal(offsetOf(msg), jump.indexOf("<|line_sep|>"));
  const first = "#ndbg 2\n<|src_sep|>\n<|frame_sep|><|line_sep|>1 0 f<|arg_sep|>..\n";
  msg = parseError(first, /delta mark must open the locals of a frame that has a predecessor/);
  assert.equal(offsetOf(msg), first.lastIndexOf("<|arg_sep|>"));
  const late = ok.replace("<|line_sep|>2 0 f<|arg_sep|>..", "<|line_sep|>2 0 f<|arg_sep|>a=1<|arg_sep|>..");
  parseError(late, /delta mark must open the locals/);
});

test("malformed: a frame after the first without an action, an action without a state", () => {
  const missing = ok.replace("<|action_sep|><|step_into|>\n", "");
  // Reported at the second frame's <|frame_sep|>.
  let msg = parseError(missing, /steps after the first must start with <\|action_sep\|>/);
  assert.equal(offsetOf(msg), missing.indexOf("<|frame_sep|>", missing.indexOf("<|frame_sep|>") + 1));
  const afterExit = ok + "<|action_sep|><|continue|>\n<|exit_normal|>\n<|frame_sep|><|line_sep|>1 0 f\n";
  msg = parseError(afterExit, /steps after the first must start with <\|action_sep\|>/);
  assert.equal(offsetOf(msg), afterExit.lastIndexOf("<|frame_sep|>"));
  msg = parseError(ok + "<|action_sep|><|step_over|>\n", /an action must be followed by a frame or an exit/);
  assert.equal(offsetOf(msg), ok.length + "<|action_sep|>".length);
  parseError(ok + "<|action_sep|>\n<|frame_sep|><|line_sep|>1 0 f\n", /unexpected text after <\|action_sep\|>/);
  parseError(ok + "<|action_sep|><|frame_sep|><|line_sep|>1 0 f\n", /must be followed by an action token/);
});

test("malformed: bad action arguments", () => {
  parseError(ok.replace("<|step_return|>", "<|breakpoint|>"), /breakpoint needs a line number/);
  parseError(ok.replace("<|step_return|>", "<|breakpoint|>x"), /breakpoint needs a line number/);
  parseError(ok.replace("<|step_return|>", "<|step_return|>3"), /unexpected text after <\|step_return\|>/);
});

test("malformed: bad frame header, bad local, misplaced tokens", () => {
  parseError(ok.replace("<|call_sep|>1 0 f", "<|call_sep|>one 0 f"), /bad frame header "one 0 f"/);
  parseError(ok.replace("<|call_sep|>1 0 f", "<|call_sep|>1 f"), /bad frame header/);
  parseError(ok.replace("<|call_sep|>1 0 f", ""), /a frame must start with an event token/);
  parseError(ok.replace("<|arg_sep|>a=1\n", "<|arg_sep|>a\n"), /bad local "a": expected NAME=REPR/);
  parseError(ok.replace("<|arg_sep|>a=1\n", "<|arg_sep|>=1\n"), /bad local/);
  parseError(ok.replace("<|frame_sep|><|call_sep|>", "<|frame_sep|>x<|call_sep|>"), /unexpected text after <\|frame_sep\|>/);
  parseError(ok.replace("<|value_sep|>1", "<|value_sep|>1<|src_sep|>"), /unexpected <\|src_sep\|> inside a frame/);
  parseError(ok.replace("<|frame_sep|><|call_sep|>", "<|call_sep|>"), /expected a frame or an exit, found <\|call_sep\|>/);
  parseError(ok + "<|action_sep|><|continue|>\n<|exit_normal|>x\n", /unexpected text after an exit token/);
  parseError(ok + "<|action_sep|><|continue|>\n<|exit_normal|><|arg_sep|>a=1\n", /unexpected <\|arg_sep\|> inside an exit/);
});

test("malformed: every error is a TrajectoryError, never another exception", () => {
  // Every prefix of a valid text either parses or fails cleanly.
  const text = readFileSync(join(GOLDEN, "features.ndbg"), "utf8");
  let parsed = 0;
  for (let n = 0; n <= text.length; n += 7) {
    try {
      parse(text.slice(0, n));
      parsed++;
    } catch (e) {
      assert.ok(e instanceof TrajectoryError, `prefix ${n}: ${String(e)}`);
    }
  }
  assert.ok(parsed > 0);
});

// Known defects in adapter/format/trajectory.ts, reported to its owner; these run and show as TODO until fixed.
test("metadata holding U+2028 round trips", () => {
  roundTrip(traj([], "", { program: "a\u2028b.py" }));
});
test("text before the first trajectory is an error", () => {
  parseError("#ndbg 2\njunk\n" + ok, /./);
});

test("locals named __proto__, constructor and toString survive a round trip, in full and as a delta", () => {
  // JSON.parse keeps "__proto__" as an own key; an assignment while parsing the text set the prototype instead.
  const first: Record<string, string> = JSON.parse('{"__proto__": "1", "constructor": "\'c\'"}');
  const second: Record<string, string> = JSON.parse('{"__proto__": "2", "constructor": "\'c\'", "toString": "3"}');
  const t = traj([
    { frame: frame("call", 1, {}) },
    { action: { kind: "step_into" }, frame: frame("line", 2, first) },
    { action: { kind: "step_into" }, frame: frame("line", 3, second) },
  ]);
  const text = serialize(t);
  assert.match(text, /__proto__=2/);
  const back = parse(text);
  assert.deepEqual(Object.keys(back.steps[2].frame!.locals).sort(), ["__proto__", "constructor", "toString"]);
  assert.equal(back.steps[1].frame!.locals["__proto__"], "1");
  assert.equal(back.steps[2].frame!.locals["__proto__"], "2");
  assert.equal(Object.getPrototypeOf(back.steps[2].frame!.locals), Object.prototype);
  // The second frame keeps every local of the first (it adds toString): a delta. Dropping locals is not.
  assert.ok(isDelta(back.steps[1].frame, { kind: "step_into" }, back.steps[2].frame!));
  assert.ok(!isDelta(back.steps[2].frame, { kind: "step_into" }, frame("line", 3, JSON.parse('{"__proto__": "2"}'))), "dropping constructor and toString is no delta");
});

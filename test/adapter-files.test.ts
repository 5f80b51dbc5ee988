// Paths that a request, a launch or a trace's header names, over the real protocol (the built
// adapter driven by DebugClient): a FIFO, a device or a huge file is refused at once with a clear
// message and the adapter keeps answering. A plain read of a FIFO waits for a writer forever
// (synchronously it froze the whole adapter), and /dev/zero never ends.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serialize } from "../adapter/format/trajectory.js";
import { buildDist } from "./support/dist.js";
import { THREAD, firstOf, openSession, type Session } from "./support/dap.js";

/** Every answer here must come at once; a read that waits on a FIFO would miss this by far. */
const QUICK_MS = 5_000;

let dir = "";
let fifo = "";
let program = "";

before(() => {
  buildDist();
  dir = mkdtempSync(join(tmpdir(), "ndbg-files-"));
  fifo = join(dir, "pipe.py");
  execFileSync("mkfifo", [fifo]);
  program = join(dir, "prog.py");
  writeFileSync(program, "x = 1\ny = x + 1\nprint(y)\n");
});

after(() => rmSync(dir, { recursive: true, force: true }));

const open = (): Promise<Session> => openSession(QUICK_MS);

/** A request's answer, and how long it took. */
async function timed<T>(request: Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = performance.now();
  const value = await request;
  return { value, ms: performance.now() - t0 };
}

/** A file of `bytes` bytes that takes no disk space (a sparse file). */
function sparse(name: string, bytes: number): string {
  const file = join(dir, name);
  writeFileSync(file, "");
  truncateSync(file, bytes);
  return file;
}

test("setBreakpoints before launch on a FIFO, /dev/zero or a huge file answers at once, and the adapter stays responsive", async () => {
  const s = await open();
  try {
    await s.dc.initializeRequest();
    const cases: [string, RegExp][] = [
      [fifo, /cannot read .*pipe\.py: it is a FIFO \(named pipe\), not a regular file/],
      ["/dev/zero", /cannot read \/dev\/zero: it is a device, not a regular file/],
      [sparse("huge.py", 64 * 1024 * 1024), /cannot read .*huge\.py: it is 64\.0 MiB, more than the 16\.0 MiB limit/],
    ];
    for (const [path, message] of cases) {
      const { value, ms } = await timed(s.dc.setBreakpointsRequest({ source: { path }, breakpoints: [{ line: 1 }] }));
      assert.ok(ms < QUICK_MS, `${path}: answered in ${ms} ms`);
      const [bp] = value.body.breakpoints;
      assert.equal(bp.verified, false, path);
      assert.match(bp.message ?? "", message);
    }
    // Still answering: a regular file's breakpoints are checked as usual, and other requests answer.
    const ok = await s.dc.setBreakpointsRequest({ source: { path: program }, breakpoints: [{ line: 2 }, { line: 9 }] });
    assert.deepEqual(ok.body.breakpoints.map((b) => [b.verified, b.message]), [[true, undefined], [false, "no code on this line"]]);
    assert.deepEqual((await s.dc.threadsRequest()).body.threads, [{ id: 1, name: "main" }]);
  } finally {
    await s.dc.stop();
  }
});

test("replaying a trace whose header names a FIFO or /dev/stdin starts at once, with the program's text from the trace", async () => {
  for (const named of ["pipe.py", "/dev/stdin"]) {
    const trace = join(dir, "names-pipe.ndbg");
    writeFileSync(
      trace,
      serialize({
        version: 1,
        meta: { program: named },
        source: "x = 1\n",
        steps: [{ frame: { line: 1, depth: 0, func: "<module>", event: "line", locals: {} } }, { action: { kind: "step_into" }, exit: { status: "normal" } }],
      }),
    );
    const s = await open();
    try {
      const stopped = firstOf(s.dc, ["stopped", "terminated"]);
      const { ms } = await timed(Promise.all([s.dc.launch({ program: trace, mode: "replay" }), s.dc.configurationDoneRequest()]));
      assert.ok(ms < QUICK_MS, `${named}: launch answered in ${ms} ms`);
      assert.equal((await stopped).event, "stopped", named);
      const [top] = (await s.dc.stackTraceRequest(THREAD)).body.stackFrames;
      assert.equal(top.source?.path, undefined, `${named} never stands for the program`);
      assert.ok(top.source?.sourceReference, "the program's text comes from the trace");
    } finally {
      await s.dc.stop();
    }
  }
});

test("a trace or a program over the size limit is refused at launch with the limit named", async () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ program: sparse("huge.ndbg", 300 * 1024 * 1024), mode: "replay" }, /cannot read the trace .*huge\.ndbg: it is 300\.0 MiB, more than the 256\.0 MiB limit/],
    [{ program: sparse("big.py", 20 * 1024 * 1024), mode: "predict", model: join(dir, "absent.gguf") }, /[Cc]annot read the program .*big\.py: it is 20\.0 MiB, more than the 16\.0 MiB limit/],
  ];
  for (const [args, message] of cases) {
    const s = await open();
    try {
      const t0 = performance.now();
      await assert.rejects(s.dc.launch(args), message);
      assert.ok(performance.now() - t0 < QUICK_MS);
    } finally {
      await s.dc.stop();
    }
  }
});

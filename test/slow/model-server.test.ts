// A model on a server: the real llama.cpp server (built from the llama.cpp source node-llama-cpp
// ships: scripts/llama-server.sh), serving the bundled GGUF on 127.0.0.1, reached through the
// "model" attribute's endpoint form over the real protocol (the built adapter, DebugClient).
// The model alone ("compute": false) must give the same greedy states through the server as in
// the inference host. The faults are real too: a port nobody listens on, the server killed with
// a step in flight. Only "too slow" and "malformed" go through a small proxy of this file's own,
// in front of the real server, that answers the generation badly: that is what is tested.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { NDBG, ROOT, buildDist, sh } from "../support/dist.js";
import { shippedModel } from "../support/models.js";
import { freePort, startServer, type RunningServer } from "../support/llama-server.js";
import { THREAD, inspect, launchToFirstStop, openSession, shown, stopAfter, type Session, type Stop } from "../support/dap.js";
import { REQUESTS, type StatsBody } from "../../adapter/protocol.js";

const T = { timeout: 120_000 };
/** The first build of llama-server takes minutes on two cores (README); later runs find it cached. */
const BUILD = { timeout: 60 * 60_000 };

/**
 * Programs and entry calls compared state by state, and how many steps into each. (Since the model
 * alone is held to no value CPython computed, it circles on binary_search's second line, and on
 * fizzbuzz(6) the server and the host part at a near tie of two tokens after 20 states: neither is
 * a case of the same greedy answers.)
 */
const CASES = [
  { program: join(ROOT, "test", "fixtures", "dap", "calls.py"), call: "main(3)", steps: 24 },
  { program: join(ROOT, "examples", "demo.py"), call: "total([3, 1, 2])", steps: 24 },
  { program: join(ROOT, "test", "fixtures", "userstyle", "stack_calc.py"), call: "rpn('3 4 + 2 *')", steps: 30 },
];

let server: RunningServer;

/** A stop as shown(), without the low-confidence marks (the confidence is compared on its own). */
const unmarked = (stop: Stop): string => shown(stop).replace(/ {2}⚠ low confidence/g, "");

before(async () => {
  buildDist();
  server = await startServer(shippedModel());
}, BUILD);

after(async () => {
  await server?.stop();
});

const launchArgs = (model: string, c: { program: string; call: string }): Record<string, unknown> => ({
  mode: "predict",
  compute: false,
  model,
  gpu: "cpu",
  threads: 1,
  pythonVersion: "3.12",
  program: c.program,
  call: c.call,
  stopOnEntry: true,
});

/** A session launched to its first stop. */
async function launched(model: string, c: { program: string; call: string }): Promise<Session> {
  const s = await openSession(60_000);
  const { first } = await launchToFirstStop(s.dc, launchArgs(model, c), c.program);
  assert.equal(first.event, "stopped", "the session starts stopped at the entry");
  return s;
}

/**
 * Each stop after a step in, as the user sees it (where, and every variable, without the marks
 * of low confidence: see the confidence test below), until the end; and each model call's confidence.
 */
async function walk(model: string, c: (typeof CASES)[number]): Promise<{ states: string[]; confidence: number[]; errors: string }> {
  const s = await launched(model, c);
  try {
    const states = [unmarked(await inspect(s.dc))];
    for (let i = 0; i < c.steps; i++) {
      const e = await stopAfter(s.dc, (dc) => dc.stepInRequest(THREAD));
      if (e.event === "terminated") {
        states.push("(end)");
        break;
      }
      states.push(unmarked(await inspect(s.dc)));
    }
    const stats = (await s.dc.customRequest(REQUESTS.stats, {})).body as StatsBody;
    // The predicted end says how sure the model is: that figure is the confidence compared below.
    const errors = s.text("stderr").replace(/\(predicted, \d+% sure\)/g, "(predicted, N% sure)");
    return { states, confidence: stats.steps.map((x) => x.confidence), errors };
  } finally {
    await s.dc.stop();
  }
}

test("predict mode gives the same greedy states through the llama.cpp server as in the inference host", T, async () => {
  let compared = 0;
  let same = 0;
  let calls = 0;
  for (const c of CASES) {
    const here = await walk(shippedModel(), c);
    const served = await walk(server.url, c);
    assert.equal(served.errors, here.errors, "the same steps fail (or none)");
    assert.deepEqual(served.states, here.states, `${c.call}: the same states, step by step`);
    // The model moved: the states are its answers, not the entry repeated. (From main(3), whose
    // first values the rules compute, the bundled model fails at line 17's call: four states.)
    assert.ok(new Set(here.states).size >= 4, `${c.call}: the model answered with states (${here.states.join(" | ")})`);
    compared += here.states.length;
    // The confidence: the same where the grammar let the model's first choice through; where it
    // did not, the server's is taken among the tokens below the one chosen (endpoint.ts's
    // grammarProbs), the host's among those the grammar allows: the same or a little lower.
    // Up to the float differences of evaluating the prompt in other batches (0.01).
    assert.equal(served.confidence.length, here.confidence.length);
    served.confidence.forEach((p, i) => {
      assert.ok(p <= here.confidence[i] + 0.01, `${c.call}, model call ${i}: ${p} through the server, ${here.confidence[i]} in-process`);
      if (Math.abs(p - here.confidence[i]) < 0.01) same++;
    });
    calls += here.confidence.length;
  }
  assert.ok(compared >= 40, `${compared} states compared`);
  assert.ok(same >= calls / 2, `the same confidence for ${same} of ${calls} model calls`);
  process.stdout.write(`# ${compared} states compared, all equal; the same confidence (within 0.01) for ${same} of ${calls} model calls\n`);
});

test("the session names the server it predicts on", T, async () => {
  const s = await launched(server.url, CASES[0]);
  try {
    assert.match(s.text("console"), new RegExp(`on llama\\.cpp server at ${server.url.replace(/[.]/g, "\\.")}`));
  } finally {
    await s.dc.stop();
  }
});

test("the instruct dialect speaks /v1/chat/completions with the JSON grammar: each step a state of the program or the model's wrong answer, never a refused request", T, async () => {
  // The bundled model is no chat model (the server applies its default template): what is tested is the request and the reading of its answer.
  const s = await openSession(60_000);
  try {
    const { first } = await launchToFirstStop(s.dc, { ...launchArgs(server.url, CASES[0]), dialect: "instruct" }, CASES[0].program);
    assert.equal(first.event, "stopped");
    assert.match(s.text("console"), /\(instruct prompts\) on llama\.cpp server/);
    for (let i = 0; i < 3; i++) {
      const said = s.text("stderr").length;
      const e = await stopAfter(s.dc, (dc) => dc.stepInRequest(THREAD));
      if (e.event === "terminated") break;
      const err = s.text("stderr").slice(said);
      assert.ok(err === "" || /Could not go on: the model/.test(err), `a state or the model's wrong answer: ${err}`);
      assert.doesNotMatch(err, /the model server at/, "the server took the request");
    }
    const stats = (await s.dc.customRequest(REQUESTS.stats, {})).body as StatsBody;
    assert.ok(stats.steps.length > 0 && stats.steps.every((x) => x.confidence > 0 && x.confidence <= 1), "each answer's confidence from the server's log-probabilities");
  } finally {
    await s.dc.stop();
  }
});

test("holeModel: each hole's value alone, asked of the server's chat model, held to the return annotation's type; predict mode's run goes on from it", T, async () => {
  // The bundled model is no chat model either: what is tested is the question, the grammar the
  // server holds the answer to (a float, a list of str), and the run going on from the values.
  const dir = mkdtempSync(join(tmpdir(), "ndbg-hole-model-"));
  const program = join(dir, "temps.py");
  writeFileSync(
    program,
    [
      "def to_fahrenheit(celsius: float) -> float:",
      '    """Celsius to Fahrenheit."""',
      "    ...",
      "",
      "",
      "def words(text: str) -> list[str]:",
      "    ...",
      "",
      "",
      "f = to_fahrenheit(37)",
      "w = words('a b')",
      "print(type(f).__name__, type(w).__name__, all(isinstance(x, str) for x in w))",
      "",
    ].join("\n"),
  );
  const s = await openSession(90_000);
  try {
    const { first } = await launchToFirstStop(s.dc, { program, mode: "predict", holeModel: server.url, gpu: "cpu", threads: 1 }, program);
    assert.equal(first.event, "terminated", "no hole filter set: the run goes to its end");
    assert.match(s.text("console"), /to_fahrenheit\(\) at line 3 = \S+ \(predicted by .* at http:\/\/127\.0\.0\.1:\d+\/v1, \d+%\)/);
    assert.match(s.text("console"), /words\(\) at line 7 = \[.*\] \(predicted by /);
    assert.equal(s.text("stdout"), "float list True\n", s.text("console"));
  } finally {
    await s.dc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a server that is not running fails the launch with a message that says so", T, async () => {
  const url = `http://127.0.0.1:${await freePort()}/v1`;
  const s = await openSession(30_000);
  try {
    await assert.rejects(
      launchToFirstStop(s.dc, launchArgs(url, CASES[0]), CASES[0].program),
      (e: Error) => /the model server at .* cannot be reached \(ECONNREFUSED\)/.test(e.message),
    );
  } finally {
    await s.dc.stop();
  }
});

/** A step that fails: the session stops where it was, and says why in the console. */
async function failedStep(s: Session, why: RegExp): Promise<void> {
  const before = shown(await inspect(s.dc));
  const e = await stopAfter(s.dc, (dc) => dc.stepInRequest(THREAD));
  assert.equal(e.event, "stopped");
  assert.equal(shown(await inspect(s.dc)), before, "the session stays where it was");
  assert.match(s.text("stderr"), why);
}

/** A step that works: a new state, no new error. */
async function goodStep(s: Session): Promise<void> {
  const said = s.text("stderr").length;
  const e = await stopAfter(s.dc, (dc) => dc.stepInRequest(THREAD));
  assert.equal(e.event, "stopped");
  assert.equal(s.text("stderr").slice(said), "", "the step works");
}

test("a server killed with a step in flight fails that step; the session keeps its history and goes on when it is back", T, async () => {
  const own = await startServer(shippedModel());
  const s = await launched(own.url, CASES[0]);
  try {
    await goodStep(s);
    await goodStep(s);
    const before = shown(await inspect(s.dc));
    // Frozen, it takes the request and never answers: then killed, the step in flight loses its connection.
    own.proc.kill("SIGSTOP");
    const next = stopAfter(s.dc, (dc) => dc.stepInRequest(THREAD));
    await new Promise((r) => setTimeout(r, 500));
    await own.stop();
    const e = await next;
    assert.equal(e.event, "stopped");
    assert.equal(shown(await inspect(s.dc)), before, "the session stays where it was");
    assert.match(s.text("stderr"), /Could not go on: the model server at .* cannot be reached/);
    // Its history still works without a model.
    const back = await stopAfter(s.dc, (dc) => dc.stepBackRequest(THREAD));
    assert.equal(back.event, "stopped");
    assert.notEqual(shown(await inspect(s.dc)), before, "stepped back");
    await stopAfter(s.dc, (dc) => dc.stepInRequest(THREAD)); // forward again: from the history
    // Still down: a clear refusal; back on the same port: the session goes on.
    await failedStep(s, /cannot be reached \(ECONNREFUSED\)/);
    const again = await startServer(shippedModel(), { port: own.port });
    try {
      await goodStep(s);
    } finally {
      await again.stop();
    }
  } finally {
    await s.dc.stop();
    await own.stop();
  }
});

// ---- a proxy that answers the generation badly ----

type Fault = "pass" | "hang" | "html" | "no-tokens" | "error" | "key";

/** The key the proxy wants in its "key" mode. */
const KEY = "sesame-0123";

/** Forwards to the real server, except /completion, which gets `fault`. */
async function badProxy(target: RunningServer): Promise<{ url: string; fault: Fault; close(): Promise<void> }> {
  const state = { fault: "pass" as Fault };
  const held: import("node:http").ServerResponse[] = [];
  const srv: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      if (state.fault === "key" && req.headers.authorization !== `Bearer ${KEY}`)
        return void res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: { code: 401, message: "Invalid API Key", type: "authentication_error" } }));
      if (req.url === "/completion" && state.fault !== "pass" && state.fault !== "key") {
        if (state.fault === "hang") return void held.push(res);
        if (state.fault === "html") return void res.writeHead(200, { "content-type": "text/html" }).end("<html>gateway</html>");
        if (state.fault === "no-tokens") return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ content: "x", stop: true }));
        return void res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: { code: 500, message: "the slot is gone", type: "server_error" } }));
      }
      const r = await fetch(`http://127.0.0.1:${target.port}${req.url}`, { method: req.method!, headers: { "content-type": "application/json" }, ...(chunks.length ? { body: Buffer.concat(chunks) } : {}) });
      res.writeHead(r.status, { "content-type": r.headers.get("content-type") ?? "application/json" }).end(Buffer.from(await r.arrayBuffer()));
    });
  });
  const port = await freePort();
  await new Promise<void>((r) => srv.listen(port, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${port}/v1`,
    get fault() {
      return state.fault;
    },
    set fault(f: Fault) {
      state.fault = f;
    },
    close: () => {
      for (const r of held) r.destroy();
      srv.closeAllConnections();
      return new Promise<void>((r) => srv.close(() => r()));
    },
  };
}

test("a server slower than NDBG_SERVER_TIMEOUT fails the step within it, and the next step works", T, async () => {
  const proxy = await badProxy(server);
  const was = process.env.NDBG_SERVER_TIMEOUT;
  process.env.NDBG_SERVER_TIMEOUT = "2";
  let s: Session | undefined;
  try {
    s = await launched(proxy.url, CASES[0]);
    proxy.fault = "hang";
    const t0 = Date.now();
    await failedStep(s, /did not answer \/completion within 2 s/);
    assert.ok(Date.now() - t0 < 10_000, `the step failed after ${Date.now() - t0} ms`);
    proxy.fault = "pass";
    await goodStep(s);
  } finally {
    if (was === undefined) delete process.env.NDBG_SERVER_TIMEOUT;
    else process.env.NDBG_SERVER_TIMEOUT = was;
    await s?.dc.stop();
    await proxy.close();
  }
});

test("malformed answers fail their step with what was wrong, and the session goes on", T, async () => {
  const proxy = await badProxy(server);
  const s = await launched(proxy.url, CASES[0]);
  try {
    proxy.fault = "html";
    await failedStep(s, /answered \/completion with something that is not a reply to it \(not a JSON object: "<html>gateway/);
    proxy.fault = "no-tokens";
    await failedStep(s, /answered \/completion with something that is not a reply to it \(no generated token ids\)/);
    proxy.fault = "error";
    await failedStep(s, /answered \/completion with 500 Internal Server Error: the slot is gone/);
    proxy.fault = "pass";
    await goodStep(s);
  } finally {
    await s.dc.stop();
    await proxy.close();
  }
});

test("an API key from NDBG_API_KEY goes to the server for a trusted workspace's launch, never for an untrusted one's", T, async () => {
  const proxy = await badProxy(server);
  proxy.fault = "key";
  const was = process.env.NDBG_API_KEY;
  process.env.NDBG_API_KEY = KEY;
  const sessions: Session[] = [];
  try {
    const untrusted = await openSession(30_000);
    sessions.push(untrusted);
    await assert.rejects(
      launchToFirstStop(untrusted.dc, launchArgs(proxy.url, CASES[0]), CASES[0].program),
      (e: Error) => /answered \/v1\/models with 401 Unauthorized: Invalid API Key \(.*none is sent for a workspace that is not trusted\)/.test(e.message),
    );
    const trusted = await openSession(30_000);
    sessions.push(trusted);
    const { first } = await launchToFirstStop(trusted.dc, { ...launchArgs(proxy.url, CASES[0]), trusted: true }, CASES[0].program);
    assert.equal(first.event, "stopped");
    await goodStep(trusted);
  } finally {
    if (was === undefined) delete process.env.NDBG_API_KEY;
    else process.env.NDBG_API_KEY = was;
    for (const s of sessions) await s.dc.stop();
    await proxy.close();
  }
});

test("ndbg eval steps --concurrency N sends N programs at once to a server, with the figures of one at a time", T, async () => {
  const data = join(ROOT, "test", "fixtures", "programs", "documented.jsonl");
  const run = (...more: string[]) => sh(process.execPath, [NDBG, "eval", "steps", "--data", data, "--limit", "4", "--no-compute", "--model", server.url, "--json", ...more], { timeout: 110_000 });
  const [one, four] = [await run(), await run("--concurrency", "4")];
  assert.equal(one.code, 0, one.stderr);
  assert.equal(four.code, 0, four.stderr);
  type Report = { concurrency: number; overall: { count: number; errors: number }; items: { id: string; action: string; predicted?: unknown; error?: string }[] };
  const [a, b] = [JSON.parse(one.stdout) as Report, JSON.parse(four.stdout) as Report];
  assert.equal(b.concurrency, 4);
  assert.ok(a.overall.count >= 20, `${a.overall.count} cases`);
  assert.deepEqual(b.items.map((x) => [x.id, x.action, x.predicted ?? x.error]), a.items.map((x) => [x.id, x.action, x.predicted ?? x.error]), "the same answers, in the same order");
  const local = await sh(process.execPath, [NDBG, "eval", "steps", "--data", data, "--concurrency", "2"], { timeout: 30_000 });
  assert.equal(local.code, 2);
  assert.match(local.stderr, /--concurrency .* needs --model http:\/\/HOST:PORT\/v1/);
});

test("ndbg doctor probes an endpoint: the server, its model and its measured ms per token", T, async () => {
  const r = await sh(process.execPath, [NDBG, "doctor", "--model", server.url], { timeout: 60_000 });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`server    ${server.url.replace(/[.]/g, "\\.")}: llama\\.cpp b\\d+-[0-9a-f]+, model \\S+, 2048-token context per session, 1 slot`));
  assert.match(r.stdout, /works: \d+\.\d\d ms\/token, \d+ prompt tokens\/s \(64 tokens timed\)/);
  assert.match(r.stdout, /dialects: instruct, native/);
  const json = await sh(process.execPath, [NDBG, "doctor", "--model", server.url, "--json"], { timeout: 60_000 });
  const report = JSON.parse(json.stdout) as { server: { ok: boolean; timing: { msPerToken: number } } };
  assert.ok(report.server.ok && report.server.timing.msPerToken > 0);
  const down = await sh(process.execPath, [NDBG, "doctor", "--model", `http://127.0.0.1:${await freePort()}/v1`], { timeout: 30_000 });
  assert.equal(down.code, 1);
  assert.match(down.stdout, /fails: the model server at .* cannot be reached \(ECONNREFUSED\)/);
});

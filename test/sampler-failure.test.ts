// A model whose weights are damaged (NaN in output_norm, so every logit is NaN) makes the
// sampler pick a token the frame grammar refuses; llama.cpp then throws "Unexpected empty grammar
// stack" inside node-llama-cpp's batch dispatcher, where no generation hears of it. Over the real
// protocol: the step must end with that message in the console, and the session must go on
// answering (a second step, disconnect) instead of waiting for the token forever.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readGgufHeader } from "../adapter/model/gguf.js";
import { ROOT, buildDist } from "./support/dist.js";
import { randomModel } from "./support/models.js";
import { THREAD, launchToFirstStop, openSession, stopAfter } from "./support/dap.js";

const PROGRAM = join(ROOT, "test", "fixtures", "dap", "script.py");
let dir = "";
let damaged = "";

before(async () => {
  buildDist();
  dir = mkdtempSync(join(tmpdir(), "ndbg-sampler-"));
  const good = randomModel(join(dir, "random.gguf"), 2);
  const header = await readGgufHeader(good);
  const norm = header.tensors.find((t) => t.name === "output_norm.weight");
  assert.ok(norm && norm.type === 0, "output_norm.weight is f32");
  const buf = readFileSync(good);
  const at = header.dataOffset + Number(norm.offset);
  for (let i = 0; i < norm.dims[0]; i++) buf.writeFloatLE(NaN, at + 4 * i);
  damaged = join(dir, "nan.gguf");
  writeFileSync(damaged, buf);
});

after(() => rmSync(dir, { recursive: true, force: true }));

test("a sampler error ends the step with its message, and the session keeps answering", { timeout: 120_000 }, async () => {
  const s = await openSession(30_000);
  try {
    // (compute: false: each step a model call, the program's first steps being ones it decides itself)
    const { first } = await launchToFirstStop(s.dc, { mode: "predict", program: PROGRAM, model: damaged, gpu: "cpu", threads: 1, compute: false, stopOnEntry: true }, PROGRAM);
    assert.equal(first.event, "stopped");
    for (let i = 0; i < 2; i++) {
      // stopAfter fails after the client's 30 s when the step never ends.
      const e = await stopAfter(s.dc, (dc) => dc.stepInRequest(THREAD));
      assert.equal(e.event, "stopped", "the session stays stopped where it was");
    }
    assert.match(s.text(), /the model's sampler failed \(.*grammar.*\); the model file may be damaged/);
    const frames = (await s.dc.stackTraceRequest(THREAD)).body.stackFrames;
    assert.ok(frames.length > 0);
    await s.dc.disconnectRequest({});
  } finally {
    await s.dc.stop();
  }
});

// The session's Python version in predict mode (adapter/model/pyversion.ts, adapter/predictors/model.ts):
// where it comes from, which version a model is shown, and the prompt header each model reads:
// a format 2 model (the bundled one, and one written by training/gguf.py with the versions of its
// data) "#ndbg 2 python3.12"; a format 1 model, which names no version, the version 1 prompt.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkPythonVersion, modelPython } from "../adapter/model/pyversion.js";
import { opensFrame } from "../adapter/rules/grammar.js";
import { ModelPredictor, sessionPython } from "../adapter/predictors/model.js";
import { checkModelFile } from "../adapter/model/gguf.js";
import { disposeAll } from "../adapter/model/backend.js";
import { whichPython } from "../adapter/real/hostRun.js";
import { ROOT } from "./support/dist.js";
import { pythonWithNumpy, randomModel, shippedModel } from "./support/models.js";
import { realPython } from "./support/pythons.js";

const T = { timeout: 180_000 };
let dir = "";
let program = "";

before(() => {
  dir = mkdtempSync(join(tmpdir(), "ndbg-pyversion-"));
  program = join(dir, "comp.py");
  writeFileSync(program, "def f(xs):\n    ys = [x * 2 for x in xs]\n    return sum(ys)\n");
});

after(async () => {
  await disposeAll();
  rmSync(dir, { recursive: true, force: true });
});

test("versions: checked with a clear message; comprehension frames by version; the version a model is shown", () => {
  assert.equal(checkPythonVersion("3.12"), "3.12");
  assert.equal(checkPythonVersion(" 3.9 "), "3.9");
  for (const bad of ["3", "3.x", "2.7", "3.12.1", "", 3.12, null]) assert.throws(() => checkPythonVersion(bad), /must be a Python version such as "3.11" or "3.12"/);
  assert.throws(() => checkPythonVersion("3.7"), /3.8 or newer/);
  for (const name of ["<listcomp>", "<dictcomp>", "<setcomp>"]) {
    assert.equal(opensFrame(name, "3.11"), true);
    assert.equal(opensFrame(name, undefined), true);
    assert.equal(opensFrame(name, "3.12"), false);
    assert.equal(opensFrame(name, "3.13"), false);
    // Versions the rules do not name: as the nearest they know.
    assert.equal(opensFrame(name, "3.9"), true);
    assert.equal(opensFrame(name, "3.14"), false);
  }
  for (const name of ["<genexpr>", "<lambda>"]) for (const v of ["3.11", "3.12"]) assert.equal(opensFrame(name, v), true);
  assert.equal(modelPython(["3.11", "3.12"], "3.12"), "3.12");
  assert.equal(modelPython(["3.12", "3.11"], "3.13"), "3.12", "the newest below it");
  assert.equal(modelPython(["3.11"], "3.12"), "3.11");
  assert.equal(modelPython(["3.11", "3.12"], "3.9"), "3.11", "the oldest where all are newer");
});

test("the session's version: pythonVersion, else the launch's Python (asked), else the newest the model knows", async () => {
  const here = (await whichPython()).version;
  assert.equal(await sessionPython({ pythonVersion: "3.12", python: "python3" }, ["3.11"]), "3.12");
  assert.equal(await sessionPython({ python: "python3" }, ["3.11", "3.12"]), here);
  assert.equal(await sessionPython({}, ["3.12", "3.11"]), "3.12");
  assert.equal(await sessionPython({}, ["3.11"]), "3.11");
  await assert.rejects(sessionPython({ pythonVersion: "3.x" }, ["3.11"]), /"pythonVersion" must be a Python version/);
  // A Python that cannot be asked: the newest the model knows, and why.
  const logs: string[] = [];
  assert.equal(await sessionPython({ python: join(dir, "no-such-python"), log: (m) => logs.push(m) }, ["3.11", "3.12"]), "3.12");
  assert.match(logs.join("\n"), /predicting Python 3.12's states, the newest the model knows: The configured Python .*no-such-python.* cannot be used/);
});

test("the launch's Python is asked its version: a real 3.12 predicts 3.12's states, even for a model that knows only 3.11", async (t) => {
  const py312 = await realPython("3.12");
  if (typeof py312 === "string") return t.skip(py312);
  assert.equal(await sessionPython({ python: py312.exe }, ["3.11"]), "3.12");
  assert.equal(await sessionPython({ python: py312.exe, pythonVersion: "3.11" }, ["3.11", "3.12"]), "3.11", "pythonVersion comes first");
});

/** The text of the prompt a predictor's model reads for a step from its first state. */
async function promptText(p: ModelPredictor): Promise<string> {
  const first = await p.start();
  const req = await p.dialect.request([first.step], { kind: "step_into" });
  return p.loaded!.model.detokenize(req.prompt, true);
}

test("the bundled model (format 2, trained on 3.11 and 3.12 traces) reads the prompt that names the session's version", T, async () => {
  for (const pythonVersion of ["3.11", "3.12"]) {
    const p = await ModelPredictor.create({ program, call: "f([1, 2])", model: shippedModel(), gpu: "cpu", threads: 1, pythonVersion });
    try {
      assert.equal(p.loaded!.info.format, 2);
      assert.equal(p.python, pythonVersion);
      assert.ok((await promptText(p)).startsWith(`#ndbg 2 python${pythonVersion}\n<|src_sep|>\ndef f(xs):\n`), "the header of the version it predicts");
    } finally {
      await p.dispose();
    }
  }
});

test("a format 1 model (no versions named; the model bundled before run 5) reads the version 1 prompt whatever the session's version", T, async () => {
  const v1 = randomModel(join(dir, "v1.gguf"), 2);
  for (const pythonVersion of ["3.11", "3.12"]) {
    const p = await ModelPredictor.create({ program, call: "f([1, 2])", model: v1, gpu: "cpu", threads: 1, pythonVersion });
    try {
      assert.equal(p.loaded!.info.format, 1);
      assert.equal(p.python, pythonVersion);
      assert.ok((await promptText(p)).startsWith("#ndbg 1\n<|src_sep|>\ndef f(xs):\n"), "exactly the header it was trained on");
    } finally {
      await p.dispose();
    }
  }
});

test("a format 2 model says the versions of its data: the newest is the default, and its prompt names the version", T, async () => {
  const tok = join(dir, "tok.json");
  randomModel(join(dir, "v1.gguf"), 2); // trains the fixture tokenizer into tok.json
  const gguf = join(dir, "v2.gguf");
  const script = [
    "import json, sys",
    "from training import gguf",
    "tok = json.load(open(sys.argv[1]))",
    "model = dict(gguf.load_config('tiny')['model'])",
    "arrays = gguf.random_weights(model, len(tok['tokens']), 2)",
    "gguf.export(arrays, model, tok, sys.argv[2], 'f16', 'ndbg-v2', {'format_version': 2, 'python_versions': '3.11,3.12'})",
  ].join("\n");
  execFileSync(pythonWithNumpy(), ["-c", script, tok, gguf], { cwd: ROOT, stdio: "pipe", timeout: 60_000 });
  const info = await checkModelFile(gguf);
  assert.deepEqual([info.format, info.pythonVersions], [2, ["3.11", "3.12"]]);
  const cases: [Record<string, string>, string][] = [
    [{}, "3.12"],
    [{ pythonVersion: "3.11" }, "3.11"],
  ];
  for (const [opts, want] of cases) {
    const p = await ModelPredictor.create({ program, call: "f([1, 2])", model: gguf, gpu: "cpu", threads: 1, ...opts });
    try {
      assert.equal(p.python, want);
      assert.equal(p.describe().python, want);
      assert.ok((await promptText(p)).startsWith(`#ndbg 2 python${want}\n<|src_sep|>\ndef f(xs):\n`));
    } finally {
      await p.dispose();
    }
  }
});

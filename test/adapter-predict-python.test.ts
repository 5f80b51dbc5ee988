// The model runs a Python of its own (python/canonical.py parses the program into the layout
// the model was trained on), and the launch attribute "python" names its executable: here the
// model alone ("compute": false), whose every state says which Python's it is. Over the
// real protocol: a "python" that is a script in the workspace (it leaves a marker, says it is
// Python 3.11, then runs the real Python) must not be run unless the client says the workspace is
// trusted; then it is, and the session predicts that Python's states (its version, asked).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { buildDist } from "./support/dist.js";
import { launchToFirstStop, openSession } from "./support/dap.js";

let dir = "";
let program = "";
let fake = "";
let marker = "";

before(() => {
  buildDist();
  dir = mkdtempSync(join(tmpdir(), "ndbg-predict-python-"));
  program = join(dir, "prog.py");
  writeFileSync(program, "def f(x):\n    y = x + 1\n    return y\n");
  marker = join(dir, "ran");
  fake = join(dir, "python3");
  // Asked which Python it is (the probe prints "MAJOR MINOR EXECUTABLE"), it answers 3.11.
  writeFileSync(fake, `#!/bin/sh\ntouch "${marker}"\ncase "$2" in *version_info*) printf '3 11 %s' "$0"; exit 0;; esac\nexec /usr/bin/python3 "$@"\n`);
  chmodSync(fake, 0o755);
});

after(() => rmSync(dir, { recursive: true, force: true }));

for (const trusted of [false, true]) {
  test(`predict mode ${trusted ? "runs" : "does not run"} the launch's "python" when the workspace is ${trusted ? "" : "not "}trusted`, { timeout: 120_000 }, async () => {
    rmSync(marker, { force: true });
    const s = await openSession(60_000);
    const model: DebugProtocol.Event[] = [];
    s.dc.on("ndbg/model", (e: DebugProtocol.Event) => model.push(e));
    try {
      const { first } = await launchToFirstStop(s.dc, { mode: "predict", compute: false, program, call: "f(1)", python: fake, gpu: "cpu", threads: 1, stopOnEntry: true, ...(trusted ? { trusted } : {}) }, program);
      assert.equal(first.event, "stopped");
      assert.equal(existsSync(marker), trusted);
      // Untrusted: the newest version the bundled model knows (3.12); trusted: the launch's Python's (3.11).
      assert.equal(model.find((e) => e.body?.python)?.body.python, trusted ? "3.11" : "3.12");
    } finally {
      await s.dc.stop();
    }
  });
}

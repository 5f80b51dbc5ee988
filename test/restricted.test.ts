// In Restricted Mode VS Code ignores a workspace's value for the settings package.json lists in
// `restrictedConfigurations`: an untrusted folder must not choose which model file is parsed and
// loaded, which Python runs, whether a long-lived adapter keeps a model loaded, or which API key
// is sent to a model server (a workspace could send the user's key to a server of its choosing).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./support/dist.js";

const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));

test("the settings that pick a model, a python, the warm adapter or a server's API key are restricted in untrusted workspaces", () => {
  const restricted: string[] = pkg.capabilities.untrustedWorkspaces.restrictedConfigurations;
  const settings = Object.keys(pkg.contributes.configuration.properties ?? {});
  for (const name of restricted) assert.ok(settings.includes(name), `${name} is not a contributed setting`);
  assert.deepEqual([...restricted].sort(), ["neuralPython.apiKey", "neuralPython.keepAdapterWarm", "neuralPython.model", "neuralPython.python"]);
  // A key is the user's, per machine: never a workspace's or a folder's.
  assert.equal(pkg.contributes.configuration.properties["neuralPython.apiKey"].scope, "machine");
});

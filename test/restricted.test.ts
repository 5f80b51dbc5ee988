// In Restricted Mode VS Code ignores a workspace's value for the settings package.json lists in
// `restrictedConfigurations`: an untrusted folder must not choose which model file is parsed and
// loaded, which Python runs, or whether a long-lived adapter keeps a model loaded.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./support/dist.js";

const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));

test("the settings that pick a model, a python or the warm adapter are restricted in untrusted workspaces", () => {
  const restricted: string[] = pkg.capabilities.untrustedWorkspaces.restrictedConfigurations;
  const settings = Object.keys(pkg.contributes.configuration.properties ?? {});
  for (const name of restricted) assert.ok(settings.includes(name), `${name} is not a contributed setting`);
  assert.deepEqual([...restricted].sort(), ["neuralPython.keepAdapterWarm", "neuralPython.model", "neuralPython.python"]);
});

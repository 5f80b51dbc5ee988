// A small test runner for inside the extension host (no mocha): tests run in order, each with a
// time limit; results are printed with an "[e2e-test]" prefix (the driver echoes those lines from
// the browser console) and written to results.txt beside the screenshot requests.
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface TestContext {
  /** Marks the test skipped, with the reason (e.g. a feature the adapter does not offer yet). */
  skip(reason: string): never;
}

interface TestCase {
  suite: string;
  name: string;
  fn: (t: TestContext) => Promise<void>;
  timeoutMs: number;
}

const cases: TestCase[] = [];
let currentSuite = "";

/** The folder the driver watches for screenshot requests. */
export const runFolder = process.env.NDBG_E2E_REQUESTS ?? join(__dirname, "..", "requests");
const resultsFile = join(runFolder, "..", "results.txt");

export function suite(name: string, body: () => void): void {
  currentSuite = name;
  body();
  currentSuite = "";
}

export function test(name: string, fn: (t: TestContext) => Promise<void>, timeoutMs = 60_000): void {
  cases.push({ suite: currentSuite, name, fn, timeoutMs });
}

export function log(...parts: unknown[]): void {
  const line = "[e2e-test] " + parts.map((p) => (typeof p === "string" ? p : JSON.stringify(p))).join(" ");
  console.log(line);
  try {
    appendFileSync(resultsFile, line + "\n");
  } catch {}
}

class Skip extends Error {}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until it returns a value other than undefined/false, or fails after `ms`. */
export async function until<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(100);
  }
}

/**
 * Whether a driver watches the page (scripts/e2e.mjs does: screenshots and probes). Under
 * @vscode/test-electron there is none: screenshots are left out and tests use the API instead.
 */
export const hasDriver = !process.env.NDBG_E2E_NO_DRIVER;

let shotCount = 0;
/** Asks the driver for a screenshot of the whole window and waits until it is taken. */
export async function screenshot(name: string): Promise<void> {
  if (!hasDriver) return;
  const id = `${String(++shotCount).padStart(2, "0")}-${name}`;
  if (!existsSync(runFolder)) mkdirSync(runFolder, { recursive: true });
  const done = join(runFolder, `${id}.done`);
  writeFileSync(join(runFolder, `${id}.req`), "");
  try {
    await until(`screenshot ${id}`, () => existsSync(done), 20_000);
    rmSync(done, { force: true });
  } catch {
    log(`warning: no screenshot ${id} (is the driver watching ${runFolder}?)`);
  }
}

export interface ProbedElement {
  text: string;
  className: string;
  color: string;
}

let requestCount = 0;
/** Sends the driver a request file (`kind`: probe) and reads its JSON answer. */
async function ask<T>(kind: string, body: string): Promise<T> {
  const id = `${kind}-${++requestCount}`;
  if (!existsSync(runFolder)) mkdirSync(runFolder, { recursive: true });
  const result = join(runFolder, `${id}.result`);
  writeFileSync(join(runFolder, `${id}.${kind}`), body);
  await until(`the driver to ${kind} ${body}`, () => existsSync(result), 20_000);
  const r = JSON.parse(readFileSync(result, "utf8")) as T | { error: string };
  rmSync(result, { force: true });
  if (r && typeof r === "object" && "error" in r) throw new Error(`${kind} ${body}: ${r.error}`);
  return r as T;
}

/** The page's elements matching a CSS selector, as the driver sees them (text, classes, colour). */
export const probe = (selector: string): Promise<ProbedElement[]> => ask<ProbedElement[]>("probe", selector);

/** Clicks, as a user does, the first element matching a CSS selector whose text holds `text` ("right": its context menu). */
export const click = (selector: string, text: string, button: "left" | "right" = "left"): Promise<unknown> => ask("click", JSON.stringify({ selector, text, button }));

/** Types text where the page's focus is, as a user does (an input box VS Code opened), then Enter. */
export const typeText = (text: string, enter = true): Promise<unknown> => ask("type", JSON.stringify({ text, enter }));

/** Runs every registered test whose "suite: name" matches `filter`; resolves to the failure count. */
export async function runAll(filter?: RegExp): Promise<number> {
  const selected = cases.filter((c) => !filter || filter.test(`${c.suite}: ${c.name}`));
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const t = { skip: (reason: string): never => { throw new Skip(reason); } };
  log(`running ${selected.length} tests`);
  for (const c of selected) {
    const title = `${c.suite}: ${c.name}`;
    const start = Date.now();
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        c.fn(t),
        new Promise((_, rej) => (timer = setTimeout(() => rej(new Error(`timed out after ${c.timeoutMs} ms`)), c.timeoutMs))),
      ]);
      passed++;
      log(`ok - ${title} (${Date.now() - start} ms)`);
    } catch (e) {
      if (e instanceof Skip) {
        skipped++;
        log(`skip - ${title}: ${e.message}`);
      } else {
        failed++;
        log(`not ok - ${title}: ${e instanceof Error ? e.stack ?? e.message : String(e)}`);
      }
    } finally {
      clearTimeout(timer);
    }
  }
  log(`# pass ${passed}`, `# fail ${failed}`, `# skip ${skipped}`);
  return failed;
}

// A reporter for node's test runner (a second one beside TAP, in scripts/test.sh): where the
// suite's time goes. It writes one JSON line per top-level test ({file, name, ms}) and, at the
// end, one per file ({file, ms}: the sum of its top-level tests), so a run can be read back as
// "the 20 slowest" of either (`node scripts/test-times.mjs FILE...`).
import { existsSync, readFileSync } from "node:fs";
import { relative } from "node:path";

export default async function* times(source) {
  const files = new Map();
  for await (const { type, data } of source) {
    if ((type !== "test:pass" && type !== "test:fail") || data.nesting !== 0 || !data.file) continue;
    const file = relative(process.cwd(), data.file);
    const ms = Math.round(data.details?.duration_ms ?? 0);
    files.set(file, (files.get(file) ?? 0) + ms);
    yield JSON.stringify({ file, name: data.name, ms }) + "\n";
  }
  for (const [file, ms] of files) yield JSON.stringify({ file, ms }) + "\n";
}

// Run as a script: the slowest files and tests of the given reports.
if (import.meta.url === `file://${process.argv[1]}`) {
  // (a phase whose runner never started, a file it could not find, wrote no report: its failure is told above)
  const rows = process.argv.slice(2).flatMap((f) => (existsSync(f) ? readFileSync(f, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []));
  const top = (xs, label) => {
    console.log(`${label}:`);
    for (const r of xs.sort((a, b) => b.ms - a.ms).slice(0, 20)) console.log(`${(r.ms / 1000).toFixed(1).padStart(7)} s  ${r.name ? `${r.file}: ${r.name.slice(0, 100)}` : r.file}`);
  };
  top(rows.filter((r) => r.name === undefined), "the 20 slowest files (their top-level tests' time)");
  top(rows.filter((r) => r.name !== undefined), "the 20 slowest tests");
}

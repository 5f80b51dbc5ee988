// Where the tests find the CRUXEval benchmark: $NDBG_CRUXEVAL (a relative path is the
// repository's), else ../shared/data/cruxeval.jsonl beside the checkout, as training/programs.py
// does. The data is not in the repository: without the variable, tests that read it are skipped
// where it is absent, saying how to point at it; a variable that names a missing file fails them.
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { ROOT } from "./dist.js";

export const CRUXEVAL = resolve(ROOT, process.env.NDBG_CRUXEVAL || join("..", "shared", "data", "cruxeval.jsonl"));

/** The `skip` option of a test that reads the data: false when it is there. */
export function cruxevalSkip(): string | false {
  if (existsSync(CRUXEVAL)) return false;
  if (process.env.NDBG_CRUXEVAL) throw new Error(`NDBG_CRUXEVAL names ${CRUXEVAL}, which is not there`);
  return `CRUXEval data not found at ${CRUXEVAL} (set NDBG_CRUXEVAL to the cruxeval.jsonl file)`;
}

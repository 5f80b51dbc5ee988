// The tiny random-weight model the model families share, written once per run.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { randomModel } from "../../support/models.js";

export function tinyModel(shared: string): string {
  const file = join(shared, "random.gguf");
  return existsSync(file) ? file : randomModel(file, 2);
}

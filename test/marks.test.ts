// What the user is told of a value's origin, as the adapter writes it into DAP bodies
// (adapter/session/marks.ts, and adapter/dap/marks.ts for DAP's bodies): predicted output labelled line by line in the console, never stdout;
// a value computed from a guess says so; a hole's value read from its docstring says where.
import { test } from "node:test";
import assert from "node:assert/strict";
import { DERIVED_OUTPUT_LABEL, OUTPUT_LABEL, REAL, markVariable, originOfGuess } from "../adapter/session/marks.js";
import { outputBody } from "../adapter/dap/marks.js";

test("predicted output goes to the console, each line labelled; the program's own is stdout", () => {
  const guess = originOfGuess({ hole: 0, confidence: 0.8 }, 0.5);
  assert.deepEqual(outputBody("y is 4\nz\n", guess), { category: "console", output: `${OUTPUT_LABEL}y is 4\n${OUTPUT_LABEL}z\n` });
  const derived = originOfGuess({ hole: 0, confidence: 0.8, derived: true }, 0.5);
  assert.deepEqual(outputBody("total 9", derived), { category: "console", output: `${DERIVED_OUTPUT_LABEL}total 9\n` });
  assert.deepEqual(outputBody("y is 4\n", REAL), { category: "stdout", output: "y is 4\n" });
});

test("a hole's value from its docstring is exact and says where it was read; one the user set is plainly real", () => {
  const doc = originOfGuess({ hole: 0, docstring: 4 }, 0.5);
  assert.deepEqual(doc, { predicted: false, docstring: 4 });
  assert.deepEqual(markVariable({ value: "212.0", type: "float" }, doc), { value: "212.0", type: "float · from the docstring (line 4)" });
  assert.deepEqual(originOfGuess({ hole: 0, docstring: 4, derived: true }, 0.5), REAL, "computed from an exact value: exact");
  assert.deepEqual(originOfGuess({ hole: 0, set: true }, 0.5), REAL);
  assert.deepEqual(markVariable({ value: "3", type: "int" }, originOfGuess({ hole: 0, confidence: 0.4 }, 0.5)), { value: "3  ⚠ low confidence", type: "int · predicted (40%)" });
});

// The status bar item's text (src/statusText.ts): it names the running configuration and its
// mode, whatever configuration the Run view has selected, and in predict mode the model.
import { test } from "node:test";
import assert from "node:assert/strict";
import { statusText, statusTooltip } from "../src/statusText.js";

test("the status item names the running session and its mode; the model, device and speed once known", () => {
  const record = { name: "Neural Python: record demo", mode: "record" };
  assert.equal(statusText(record), "$(debug-alt) Neural Python: record demo · record");
  assert.equal(statusTooltip(record), 'Neural Python: "Neural Python: record demo", record mode');
  const predict = { name: "Neural Python: predict demo", mode: "predict", model: { name: "ndbg-base-28m", device: "cpu", tokensPerSecond: 95.4, confidence: 0.843 } };
  assert.equal(statusText(predict), "$(hubot) Neural Python: predict demo · predict · ndbg-base-28m · CPU · 95 tok/s");
  assert.equal(statusTooltip(predict), 'Neural Python: "Neural Python: predict demo", predict mode; model ndbg-base-28m on CPU, 95.4 tokens/s; last predicted state: 84% confidence');
  assert.equal(statusText({ ...predict, model: { name: "m", device: "vulkan", tokensPerSecond: 4.25 } }), "$(hubot) Neural Python: predict demo · predict · m · Vulkan · 4.3 tok/s");
  assert.equal(statusText({ ...predict, model: { name: "m", device: "cuda" } }), "$(hubot) Neural Python: predict demo · predict · m · CUDA");
});

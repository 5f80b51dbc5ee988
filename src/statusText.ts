// The status bar item's text: the running configuration's name and mode, and in predict mode the
// model, where it runs and how fast. Pure functions, no `vscode`, so they are checked directly
// (test/statusText.test.ts). VS Code's own debug item shows the configuration selected in the
// Run view, which is not the running one when a session is started by name: this one names the
// session actually running.

import type { ModelEventBody } from "../adapter/protocol.js";

export interface SessionInfo {
  /** The debug configuration's name. */
  name: string;
  /** The launch mode: predict, record, compare or replay. */
  mode: string;
  /** From the adapter's `ndbg/model` event (predict and compare modes). */
  model?: Pick<ModelEventBody, "name" | "device" | "tokensPerSecond" | "confidence">;
}

const DEVICE_NAMES: Record<string, string> = { cpu: "CPU", cuda: "CUDA", metal: "Metal", vulkan: "Vulkan" };
export const deviceName = (d: string): string => DEVICE_NAMES[d.toLowerCase()] ?? d;

const speedOf = (m: NonNullable<SessionInfo["model"]>): number | undefined =>
  m.tokensPerSecond !== undefined && Number.isFinite(m.tokensPerSecond) ? m.tokensPerSecond : undefined;

export function statusText(s: SessionInfo): string {
  const m = s.model;
  if (!m) return `$(debug-alt) ${s.name} · ${s.mode}`;
  const speed = speedOf(m);
  return `$(hubot) ${s.name} · ${s.mode} · ${m.name} · ${deviceName(m.device)}` + (speed !== undefined ? ` · ${speed.toFixed(speed < 10 ? 1 : 0)} tok/s` : "");
}

export function statusTooltip(s: SessionInfo): string {
  const m = s.model;
  const head = `Neural Python: "${s.name}", ${s.mode} mode`;
  if (!m) return head;
  const speed = speedOf(m);
  return `${head}; model ${m.name} on ${deviceName(m.device)}` + (speed !== undefined ? `, ${speed.toFixed(1)} tokens/s` : "") +
    (m.confidence !== undefined ? `; last predicted state: ${Math.round(m.confidence * 100)}% confidence` : "");
}

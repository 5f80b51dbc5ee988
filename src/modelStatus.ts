// A status bar item with the loaded model, where it runs and how fast it generates, from the
// adapter's `ndbg/model` custom event: { name: string, device: string, tokensPerSecond?: number }.
import * as vscode from "vscode";
import { DEBUG_TYPE } from "./debugConfig.js";

export interface ModelInfo {
  name: string;
  device: string;
  tokensPerSecond?: number;
}

const DEVICE_NAMES: Record<string, string> = { cpu: "CPU", cuda: "CUDA", metal: "Metal", vulkan: "Vulkan" };
export const deviceName = (d: string): string => DEVICE_NAMES[d.toLowerCase()] ?? d;

export function statusText(m: ModelInfo): string {
  const speed = m.tokensPerSecond !== undefined && Number.isFinite(m.tokensPerSecond) ? ` · ${m.tokensPerSecond.toFixed(m.tokensPerSecond < 10 ? 1 : 0)} tok/s` : "";
  return `$(hubot) ${m.name} · ${deviceName(m.device)}${speed}`;
}

export class ModelStatus implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("neuralPython.model", vscode.StatusBarAlignment.Left, 50);
  private readonly subscriptions: vscode.Disposable[] = [];
  /** The latest model info per session, shown for the active one. */
  private readonly bySession = new Map<string, ModelInfo>();
  last: ModelInfo | undefined;

  constructor(log: vscode.LogOutputChannel) {
    this.item.name = "Neural Python model";
    this.item.command = "neuralPython.showLog";
    this.subscriptions.push(
      vscode.debug.onDidReceiveDebugSessionCustomEvent((e) => {
        if (e.session.type !== DEBUG_TYPE || e.event !== "ndbg/model") return;
        const b = e.body as Partial<ModelInfo> | undefined;
        if (!b || typeof b.name !== "string" || typeof b.device !== "string") return log.warn(`ndbg/model event without name and device: ${JSON.stringify(b)}`);
        const info: ModelInfo = { name: b.name, device: b.device, ...(typeof b.tokensPerSecond === "number" ? { tokensPerSecond: b.tokensPerSecond } : {}) };
        log.info(`model ${info.name} on ${deviceName(info.device)}${info.tokensPerSecond !== undefined ? `, ${info.tokensPerSecond.toFixed(1)} tokens/s` : ""}`);
        this.bySession.set(e.session.id, info);
        this.refresh();
      }),
      vscode.debug.onDidTerminateDebugSession((s) => {
        this.bySession.delete(s.id);
        this.refresh();
      }),
      vscode.debug.onDidChangeActiveDebugSession(() => this.refresh()),
    );
  }

  private refresh(): void {
    const active = vscode.debug.activeDebugSession;
    const info = (active && this.bySession.get(active.id)) ?? [...this.bySession.values()].pop();
    this.last = info;
    if (!info) return this.item.hide();
    this.item.text = statusText(info);
    this.item.tooltip = `Neural Python: model ${info.name}, running on ${deviceName(info.device)}` + (info.tokensPerSecond !== undefined ? `, ${info.tokensPerSecond.toFixed(1)} tokens/s` : "");
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
    for (const s of this.subscriptions) s.dispose();
  }
}

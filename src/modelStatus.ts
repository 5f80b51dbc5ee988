// A status bar item naming the running Neural Python session and its mode, and in predict mode
// the model, where it runs and how fast it generates (from the adapter's `ndbg/model` custom
// event: { name, device, tokensPerSecond?, confidence? }). Texts: src/statusText.ts.
import * as vscode from "vscode";
import { EVENTS } from "../adapter/protocol.js";
import { DEBUG_TYPE } from "./debugConfig.js";
import { deviceName, statusText, statusTooltip, type SessionInfo } from "./statusText.js";

export class ModelStatus implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("neuralPython.model", vscode.StatusBarAlignment.Left, 50);
  private readonly subscriptions: vscode.Disposable[] = [];
  /** Each running session's name, mode and model, shown for the active one. */
  private readonly bySession = new Map<string, SessionInfo>();
  last: SessionInfo | undefined;

  constructor(log: vscode.LogOutputChannel) {
    this.item.name = "Neural Python session";
    this.item.command = "neuralPython.showLog";
    const info = (s: vscode.DebugSession): SessionInfo => {
      let i = this.bySession.get(s.id);
      if (!i) this.bySession.set(s.id, (i = { name: s.name, mode: typeof s.configuration.mode === "string" ? s.configuration.mode : "predict" }));
      return i;
    };
    this.subscriptions.push(
      vscode.debug.onDidStartDebugSession((s) => {
        if (s.type !== DEBUG_TYPE) return;
        info(s);
        this.refresh();
      }),
      vscode.debug.onDidReceiveDebugSessionCustomEvent((e) => {
        if (e.session.type !== DEBUG_TYPE || e.event !== EVENTS.model) return;
        const b = e.body as Partial<NonNullable<SessionInfo["model"]>> | undefined;
        if (!b || typeof b.name !== "string" || typeof b.device !== "string") return log.warn(`${EVENTS.model} event without name and device: ${JSON.stringify(b)}`);
        const model: NonNullable<SessionInfo["model"]> = { name: b.name, device: b.device };
        if (typeof b.tokensPerSecond === "number") model.tokensPerSecond = b.tokensPerSecond;
        if (typeof b.confidence === "number") model.confidence = b.confidence;
        log.info(`model ${model.name} on ${deviceName(model.device)}${model.tokensPerSecond !== undefined ? `, ${model.tokensPerSecond.toFixed(1)} tokens/s` : ""}`);
        info(e.session).model = model;
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
    this.item.tooltip = statusTooltip(info);
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
    for (const s of this.subscriptions) s.dispose();
  }
}

// A status bar item naming the running Neural Python session and its mode, and in predict mode
// the model, the backend it runs on and how fast it generates (from the adapter's `ndbg/model`
// custom event: { name, device, skipped?, tokensPerSecond?, confidence? }), with the backends
// passed over and why in its tooltip. Texts: src/statusText.ts.
import * as vscode from "vscode";
import { EVENTS, type ModelEventBody } from "../adapter/protocol.js";
import { DEBUG_TYPE } from "./debugConfig.js";
import { deviceName, statusText, statusTooltip, type SessionInfo } from "./statusText.js";

/** A backend the session's model does not run on, and why. */
interface Skipped {
  backend: string;
  reason: string;
}

export class ModelStatus implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("neuralPython.model", vscode.StatusBarAlignment.Left, 50);
  private readonly subscriptions: vscode.Disposable[] = [];
  /** Each running session's name, mode and model, shown for the active one. */
  private readonly bySession = new Map<string, SessionInfo>();
  /** Per session: the backends its model does not run on, each with why (its probe's error line). */
  private readonly skipped = new Map<string, Skipped[]>();
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
        const b = e.body as { [K in keyof ModelEventBody]?: unknown } & { skipped?: { backend?: unknown; reason?: unknown }[] } | undefined;
        if (!b || typeof b.name !== "string" || typeof b.device !== "string") return log.warn(`${EVENTS.model} event without name and device: ${JSON.stringify(b)}`);
        const model: NonNullable<SessionInfo["model"]> = { name: b.name, device: b.device };
        if (typeof b.tokensPerSecond === "number") model.tokensPerSecond = b.tokensPerSecond;
        if (typeof b.confidence === "number") model.confidence = b.confidence;
        log.info(`model ${model.name} on ${deviceName(model.device)}${model.tokensPerSecond !== undefined ? `, ${model.tokensPerSecond.toFixed(1)} tokens/s` : ""}`);
        if (!info(e.session).model) {
          const skipped = (Array.isArray(b.skipped) ? b.skipped : []).filter((k): k is Skipped => typeof k?.backend === "string" && typeof k.reason === "string");
          for (const k of skipped) log.info(`not on ${deviceName(k.backend)}: ${k.reason}`);
          this.skipped.set(e.session.id, skipped);
        }
        info(e.session).model = model;
        this.refresh();
      }),
      vscode.debug.onDidTerminateDebugSession((s) => {
        this.bySession.delete(s.id);
        this.skipped.delete(s.id);
        this.refresh();
      }),
      vscode.debug.onDidChangeActiveDebugSession(() => this.refresh()),
    );
  }

  private refresh(): void {
    const active = vscode.debug.activeDebugSession;
    const id = active && this.bySession.has(active.id) ? active.id : [...this.bySession.keys()].pop();
    const info = id === undefined ? undefined : this.bySession.get(id);
    this.last = info;
    if (!info || id === undefined) return this.item.hide();
    this.item.text = statusText(info);
    const skipped = this.skipped.get(id) ?? [];
    this.item.tooltip = [statusTooltip(info), ...skipped.map((k) => `Not on ${deviceName(k.backend)}: ${k.reason}`)].join("\n");
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
    for (const s of this.subscriptions) s.dispose();
  }
}

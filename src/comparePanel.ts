// "Neural Python: Show Comparison": a webview beside the editor with the predicted and real
// states of a compare-mode session (the adapter's `ndbg/compare` snapshot), its history with the
// agreement per step, and the first divergence; "Resync" sends `ndbg/resync`. It follows the
// active neural-python session, fetches again after every stop (a tracker sees the protocol's
// stopped / invalidated / exited events and setVariable responses), and keeps the last snapshot
// when the session ends. The HTML comes from the pure functions in compareView.ts.
import * as vscode from "vscode";
import { randomBytes } from "node:crypto";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { REQUESTS, type CompareSnapshot } from "../adapter/protocol.js";
import { DEBUG_TYPE } from "./debugConfig.js";
import { pageHtml, renderParts, type PanelModel, type RenderReport } from "./compareView.js";

const REQUEST_TIMEOUT_MS = 15_000;

/** What the command returns: the panel as a test (or another extension) can drive it. */
export interface ComparePanelHandle {
  readonly model: Readonly<PanelModel>;
  /** The page's report of the latest update it applied at or after `seq` (default: the latest sent). */
  rendered(seq?: number, ms?: number): Promise<RenderReport>;
  /** Number of the latest update sent to the page. */
  readonly seq: number;
  /** Sends the page a message: `{type: "key", key}` (handled as that key pressed in the history) or `{type: "click", selector}`. */
  send(message: { type: "key"; key: string } | { type: "click"; selector: string }): Thenable<boolean>;
  /** Fetches the snapshot again. */
  refresh(): Promise<void>;
}

function withTimeout<T>(p: Thenable<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    Promise.resolve(p).finally(() => clearTimeout(timer)),
    new Promise<never>((_, rej) => (timer = setTimeout(() => rej(new Error(`${what} timed out after ${REQUEST_TIMEOUT_MS / 1000} s`)), REQUEST_TIMEOUT_MS))),
  ]);
}

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));

class ComparePanel implements ComparePanelHandle, vscode.DebugAdapterTrackerFactory, vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private session: vscode.DebugSession | undefined;
  model: PanelModel = { status: "none" };
  seq = 0;
  private last: RenderReport | undefined;
  private waiters: (() => void)[] = [];
  /** Fetches are numbered; an answer older than the one applied is dropped. */
  private asked = 0;
  private applied = 0;

  constructor(private readonly log: vscode.LogOutputChannel) {}

  /** Opens the panel (or brings it forward); `preserveFocus` keeps the editor focused, as when a compare session opens it. */
  show(preserveFocus = false, session?: vscode.DebugSession): ComparePanelHandle {
    if (this.panel) this.panel.reveal(vscode.ViewColumn.Beside, preserveFocus);
    else {
      const panel = vscode.window.createWebviewPanel("neuralPython.comparison", "Neural Python: Comparison", { viewColumn: vscode.ViewColumn.Beside, preserveFocus }, { enableScripts: true, localResourceRoots: [] });
      this.panel = panel;
      panel.webview.html = pageHtml(randomBytes(16).toString("base64"));
      panel.webview.onDidReceiveMessage((m: unknown) => this.onMessage(m));
      panel.onDidDispose(() => {
        this.panel = undefined;
        this.last = undefined;
      });
    }
    const active = session ?? vscode.debug.activeDebugSession;
    if (active?.type === DEBUG_TYPE) this.follow(active);
    else if (!this.session) this.setModel({ status: "none" });
    return this;
  }

  // ---- sessions ----

  private follow(session: vscode.DebugSession): void {
    const same = this.session?.id === session.id;
    this.session = session;
    if (!same) this.setModel({ status: "waiting", sessionName: session.name });
    void this.refresh();
  }

  async refresh(): Promise<void> {
    const session = this.session;
    if (!session || !this.panel) return;
    const mode = typeof session.configuration.mode === "string" ? session.configuration.mode : "predict";
    if (mode !== "compare") return this.setModel({ status: "not-compare", sessionName: session.name, mode });
    const n = ++this.asked;
    try {
      const snapshot = (await withTimeout(session.customRequest(REQUESTS.compare, {}), REQUESTS.compare)) as CompareSnapshot;
      if (n < this.applied || this.session !== session) return;
      this.applied = n;
      this.took(snapshot);
    } catch (e) {
      if (this.session !== session || this.model.status === "ended") return;
      const msg = messageOf(e);
      // Before the launch has gone through the adapter has nothing to compare yet.
      if (/not been launched|nothing to compare|no state/i.test(msg)) return this.setModel({ ...this.model, status: "waiting" });
      this.log.warn(`compare panel: ${REQUESTS.compare} failed: ${msg}`);
      if (this.model.snapshot) this.setModel({ ...this.model, message: `(could not refresh: ${msg})` });
      else this.setModel({ status: "error", sessionName: session.name, message: msg });
    }
  }

  /** A new snapshot: the selection follows the latest step unless an earlier one was chosen. */
  private took(snapshot: CompareSnapshot): void {
    const before = this.model.snapshot;
    const followsLatest = !before || this.model.selected === undefined || this.model.selected >= before.history.length - 1;
    const selected = followsLatest ? snapshot.history.length - 1 : Math.min(this.model.selected!, snapshot.history.length - 1);
    const status = this.model.status === "ended" ? "ended" : "live";
    this.setModel({ status, sessionName: this.session?.name, snapshot, selected });
  }

  private ended(session: vscode.DebugSession): void {
    if (session.id !== this.session?.id) return;
    this.setModel(this.model.snapshot ? { ...this.model, status: "ended", message: undefined } : { status: "none", sessionName: session.name });
  }

  /** The tracker: refreshes after every stop of the followed session (or of a new one). */
  createDebugAdapterTracker(session: vscode.DebugSession): vscode.DebugAdapterTracker {
    return {
      onDidSendMessage: (m: DebugProtocol.ProtocolMessage) => {
        if (!this.panel) return;
        const ev = m.type === "event" ? (m as DebugProtocol.Event).event : undefined;
        const res = m.type === "response" ? (m as DebugProtocol.Response) : undefined;
        const mine = this.session?.id === session.id;
        if (ev === "stopped") {
          // A session that stops while none is followed, or the followed one has ended, is taken up.
          if (mine) void this.refresh();
          else if (!this.session || this.model.status === "ended" || this.model.status === "none") this.follow(session);
        } else if (mine && (ev === "invalidated" || ev === "exited" || ev === "terminated")) void this.refresh();
        else if (mine && res?.success && (res.command === "setVariable" || res.command === "setExpression")) void this.refresh();
      },
    };
  }

  activeChanged(session: vscode.DebugSession | undefined): void {
    if (this.panel && session?.type === DEBUG_TYPE && session.id !== this.session?.id) this.follow(session);
  }

  terminated(session: vscode.DebugSession): void {
    this.ended(session);
  }

  // ---- the page ----

  private setModel(m: PanelModel): void {
    this.model = m;
    this.post();
  }

  private post(): void {
    if (!this.panel) return;
    const seq = ++this.seq;
    void this.panel.webview.postMessage({ type: "update", seq, parts: renderParts(this.model) });
  }

  private onMessage(m: unknown): void {
    const msg = m as { type?: string; step?: unknown; report?: RenderReport };
    switch (msg?.type) {
      case "ready":
        return this.post();
      case "select": {
        const history = this.model.snapshot?.history ?? [];
        const i = history.findIndex((p) => p.index === msg.step);
        if (i >= 0) this.setModel({ ...this.model, selected: i });
        return;
      }
      case "resync":
        return void this.resync();
      case "rendered":
        if (msg.report && typeof msg.report.seq === "number") {
          this.last = msg.report;
          for (const w of this.waiters.splice(0)) w();
        }
        return;
    }
  }

  private async resync(): Promise<void> {
    const session = this.session;
    if (!session || this.model.status !== "live") return;
    try {
      const snapshot = (await withTimeout(session.customRequest(REQUESTS.resync, {}), REQUESTS.resync)) as CompareSnapshot;
      this.applied = ++this.asked;
      this.model.message = undefined;
      this.took(snapshot);
    } catch (e) {
      const msg = `Neural Python: resync failed: ${messageOf(e)}`;
      this.log.warn(msg);
      void vscode.window.showErrorMessage(msg);
    }
  }

  rendered(seq = this.seq, ms = 15_000): Promise<RenderReport> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== check);
        reject(new Error(`the compare panel did not render update ${seq} within ${ms} ms (last: ${this.last?.seq ?? "none"})`));
      }, ms);
      const check = (): void => {
        if (this.last && this.last.seq >= seq) {
          clearTimeout(timer);
          resolve(this.last);
        } else this.waiters.push(check);
      };
      check();
    });
  }

  send(message: { type: "key"; key: string } | { type: "click"; selector: string }): Thenable<boolean> {
    return this.panel ? this.panel.webview.postMessage(message) : Promise.resolve(false);
  }

  dispose(): void {
    this.panel?.dispose();
  }
}

/** The context key that shows the panel's button in the debug toolbar while a compare session is the active one. */
const COMPARE_ACTIVE = "neuralPython.compareSession";

const isCompare = (s: vscode.DebugSession | undefined): boolean => s?.type === DEBUG_TYPE && s.configuration.mode === "compare";

/** The command, its toolbar button, opening with each compare session, and what keeps the panel up to date; one line in activate. */
export function registerComparePanel(log: vscode.LogOutputChannel): vscode.Disposable {
  const panel = new ComparePanel(log);
  const button = (s: vscode.DebugSession | undefined): void => void vscode.commands.executeCommand("setContext", COMPARE_ACTIVE, isCompare(s));
  return vscode.Disposable.from(
    panel,
    vscode.commands.registerCommand("neuralPython.showComparison", (): ComparePanelHandle => panel.show()),
    vscode.debug.registerDebugAdapterTrackerFactory(DEBUG_TYPE, panel),
    // A compare session opens its panel beside the editor, which keeps the focus.
    vscode.debug.onDidStartDebugSession((s) => {
      if (isCompare(s)) panel.show(true, s);
      button(vscode.debug.activeDebugSession ?? s);
    }),
    vscode.debug.onDidTerminateDebugSession((s) => {
      panel.terminated(s);
      button(vscode.debug.activeDebugSession);
    }),
    vscode.debug.onDidChangeActiveDebugSession((s) => {
      panel.activeChanged(s);
      button(s);
    }),
  );
}

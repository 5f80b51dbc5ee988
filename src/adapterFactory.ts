// Runs the debug adapter out of the extension host, as its own Node process: a model that aborts
// the process that loads it (a bad GGUF can) then ends that process's sessions, not the editor's
// extensions. One adapter process is kept warm and serves every session over a named pipe
// (neuralPython.keepAdapterWarm): it starts when the extension activates (when debugging or
// the Run view's configurations are first asked for) and loads the configured model at once, so
// the first stop does not wait for llama.cpp and the model. When it is off, or the warm process
// cannot start, each session gets its own process on stdio.
import * as vscode from "vscode";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { randomBytes } from "node:crypto";
import { DEBUG_TYPE } from "./debugConfig.js";
import { removeStale } from "../adapter/system/stale.js";

/** How long the warm process may take to listen. */
const LISTEN_TIMEOUT_MS = 15_000;
/** A warm adapter's socket (Unix): `ndbg-PID-HEX.sock` in the temp folder, PID the extension host's. */
const SOCKET = /^ndbg-(\d+)-[0-9a-f]{8}\.sock$/;

export class NeuralAdapterFactory implements vscode.DebugAdapterDescriptorFactory, vscode.Disposable {
  private warm?: WarmAdapter;
  /** The settings changed since the warm process started. */
  private stale = false;
  /** Neural Python sessions now running. */
  private readonly running = new Set<string>();

  constructor(private readonly context: vscode.ExtensionContext, private readonly log: vscode.LogOutputChannel) {
    context.subscriptions.push(
      this,
      // Another model or device: the warm process would keep the old model loaded beside the new
      // one. It is replaced once no session uses it (now, or when the next session starts).
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (!["model", "gpu", "keepAdapterWarm"].some((k) => e.affectsConfiguration(`neuralPython.${k}`))) return;
        this.stale = true;
        this.replaceIfIdle();
      }),
      vscode.debug.onDidStartDebugSession((s) => s.type === DEBUG_TYPE && this.running.add(s.id)),
      vscode.debug.onDidTerminateDebugSession((s) => {
        this.running.delete(s.id);
        this.replaceIfIdle();
      }),
    );
    if (keepWarm()) this.warmAdapter().ready.catch(() => undefined);
  }

  private replaceIfIdle(): void {
    if (!this.stale || this.running.size) return;
    this.stale = false;
    this.warm?.stop();
    this.warm = undefined;
    if (keepWarm()) this.warmAdapter().ready.catch(() => undefined);
  }

  private adapterPath(): string {
    const adapter = this.context.asAbsolutePath("dist/adapter.js");
    if (!existsSync(adapter)) throw new Error(`Neural Python: the debug adapter is missing (${adapter}); build the extension first.`);
    return adapter;
  }

  /** The warm process, started again when the last one is gone. */
  private warmAdapter(): WarmAdapter {
    if (!this.warm || this.warm.exited) {
      const settings = vscode.workspace.getConfiguration("neuralPython");
      this.warm = new WarmAdapter(this.adapterPath(), settings.get<string>("model") ?? "", settings.get<string>("gpu") ?? "auto", this.log);
    }
    return this.warm;
  }

  async createDebugAdapterDescriptor(session: vscode.DebugSession): Promise<vscode.DebugAdapterDescriptor> {
    const adapter = this.adapterPath();
    this.replaceIfIdle();
    if (keepWarm()) {
      try {
        const pipe = await this.warmAdapter().ready;
        this.log.info(`"${session.name}": warm adapter on ${pipe}`);
        return new vscode.DebugAdapterNamedPipeServer(pipe);
      } catch (e) {
        this.log.warn(`the warm adapter is not available (${(e as Error).message}); starting one for this session`);
      }
    }
    const cwd = session.workspaceFolder?.uri.scheme === "file" ? session.workspaceFolder.uri.fsPath : undefined;
    this.log.info(`starting adapter for "${session.name}": ${process.execPath} ${adapter}`);
    return new vscode.DebugAdapterExecutable(process.execPath, [adapter], { env: nodeEnv(), ...(cwd ? { cwd } : {}) });
  }

  dispose(): void {
    this.warm?.stop();
  }
}

const keepWarm = (): boolean => vscode.workspace.getConfiguration("neuralPython").get<boolean>("keepAdapterWarm") !== false;

/**
 * The adapter's environment. The extension host's executable is Electron in desktop VS Code: it
 * runs as plain Node with ELECTRON_RUN_AS_NODE. Compare mode needs debugpy: where VS Code's Python
 * Debugger extension is installed, the adapter is told where its own copy is (NDBG_DEBUGPY_PATH,
 * for a Python that has none; adapter/real/debugpy.ts also looks in the usual extension folders).
 * A model server's API key goes the same way (NDBG_API_KEY, read by adapter/model/endpoint.ts).
 */
export function nodeEnv(): Record<string, string> {
  const env: Record<string, string> = process.versions.electron ? { ELECTRON_RUN_AS_NODE: "1" } : {};
  const debugpy = vscode.extensions.getExtension("ms-python.debugpy");
  if (debugpy) env.NDBG_DEBUGPY_PATH = [join(debugpy.extensionPath, "bundled", "libs"), process.env.NDBG_DEBUGPY_PATH].filter(Boolean).join(delimiter);
  // A model server's key: a machine setting (restricted: never a workspace's in Restricted Mode), else the environment's NDBG_API_KEY.
  const apiKey = vscode.workspace.getConfiguration("neuralPython").get<string>("apiKey")?.trim();
  if (apiKey) env.NDBG_API_KEY = apiKey;
  return env;
}

/** `node dist/adapter.js --listen=PIPE --preload=MODEL`: resolves `ready` with the pipe once it listens. */
class WarmAdapter {
  readonly ready: Promise<string>;
  exited = false;
  private readonly proc: ChildProcess;

  constructor(adapter: string, model: string, gpu: string, log: vscode.LogOutputChannel) {
    // Named with our pid: the socket of a warm adapter killed with its editor is removed by the next one.
    removeStale(SOCKET);
    const id = `ndbg-${process.pid}-${randomBytes(4).toString("hex")}`;
    const pipe = process.platform === "win32" ? `\\\\.\\pipe\\${id}` : join(tmpdir(), `${id}.sock`);
    const args = [adapter, `--listen=${pipe}`, `--preload=${model}`, `--gpu=${gpu}`];
    log.info(`starting the warm adapter: ${process.execPath} ${args.join(" ")}`);
    this.proc = spawn(process.execPath, args, { env: { ...process.env, ...nodeEnv() }, stdio: ["pipe", "pipe", "pipe"] });
    this.proc.stderr!.setEncoding("utf8").on("data", (d: string) => {
      for (const line of d.split("\n")) if (line.trim()) log.info(`adapter: ${line}`);
    });
    this.ready = new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`it did not listen within ${LISTEN_TIMEOUT_MS / 1000} s`)), LISTEN_TIMEOUT_MS);
      let out = "";
      this.proc.stdout!.setEncoding("utf8").on("data", (d: string) => {
        out += d;
        if (out.includes(`listening ${pipe}`)) {
          clearTimeout(timer);
          resolve(pipe);
        }
      });
      this.proc.on("error", (e) => {
        clearTimeout(timer);
        reject(e);
      });
      this.proc.on("exit", (code, signal) => {
        this.exited = true;
        clearTimeout(timer);
        reject(new Error(`it exited (${signal ?? `code ${code}`})`));
        if (code || signal) log.warn(`the warm adapter exited (${signal ?? `code ${code}`}); the next session starts a new one`);
      });
    });
  }

  stop(): void {
    // Closing its stdin ends it (see adapter/dap/serve.ts); a kill makes sure.
    this.proc.stdin?.end();
    setTimeout(() => this.exited || this.proc.kill(), 2000).unref();
  }
}

/** Logs every session's protocol traffic (trace level) and how its adapter ended. */
export class NeuralTrackerFactory implements vscode.DebugAdapterTrackerFactory {
  constructor(private readonly log: vscode.LogOutputChannel) {}

  createDebugAdapterTracker(session: vscode.DebugSession): vscode.DebugAdapterTracker {
    const log = this.log;
    const name = session.name;
    return {
      onWillReceiveMessage: (m) => log.trace(`${name} ▶ ${JSON.stringify(m)}`),
      onDidSendMessage: (m) => log.trace(`${name} ◀ ${JSON.stringify(m)}`),
      // A stream error also arrives when an adapter exits at the end of a session: how it ended is in onExit.
      onError: (e) => log.debug(`${name}: adapter stream: ${e.message}`),
      onExit: (code, signal) => {
        if (code) log.error(`${name}: adapter exited with code ${code}${signal ? ` (${signal})` : ""}`);
        else log.info(`${name}: adapter exited${signal ? ` (${signal})` : ""}`);
      },
    };
  }
}

// The extension host side of the Neural Python Debugger: the `neural-python` debug type (launch
// defaults, the adapter as a separate process), the model status, trace files (save, replay,
// language server), the inference backend check, forgetting answered holes and the "Neural Python" log. All states come
// from the adapter over DAP.
import * as vscode from "vscode";
import { NeuralAdapterFactory, NeuralTrackerFactory } from "./adapterFactory.js";
import { registerBackendCheck } from "./backendCheck.js";
import { registerComparePanel } from "./comparePanel.js";
import { DEBUG_TYPE, NeuralConfigurationProvider, NeuralDynamicConfigurations } from "./debugConfig.js";
import { startTraceLanguageClient } from "./languageClient.js";
import { ModelStatus } from "./modelStatus.js";
import { offerReplay, replayTrace, saveSessionAsTrace } from "./traceCommands.js";
import { registerValueOrigin } from "./valueOrigin.js";
import { registerForgetHoleAnswers } from "./holeAnswers.js";

/** What the extension exposes to other extensions and to its end-to-end tests. */
export interface NeuralPythonApi {
  log: vscode.LogOutputChannel;
  status: ModelStatus;
}

export function activate(context: vscode.ExtensionContext): NeuralPythonApi {
  const log = vscode.window.createOutputChannel("Neural Python", { log: true });
  const status = new ModelStatus(log);
  context.subscriptions.push(
    log,
    status,
    vscode.debug.registerDebugConfigurationProvider(DEBUG_TYPE, new NeuralConfigurationProvider(log)),
    vscode.debug.registerDebugConfigurationProvider(DEBUG_TYPE, new NeuralDynamicConfigurations(), vscode.DebugConfigurationProviderTriggerKind.Dynamic),
    vscode.debug.registerDebugAdapterDescriptorFactory(DEBUG_TYPE, new NeuralAdapterFactory(context, log)),
    vscode.debug.registerDebugAdapterTrackerFactory(DEBUG_TYPE, new NeuralTrackerFactory(log)),
    vscode.debug.onDidStartDebugSession((s) => s.type === DEBUG_TYPE && log.info(`session "${s.name}" started`)),
    vscode.debug.onDidTerminateDebugSession((s) => s.type === DEBUG_TYPE && log.info(`session "${s.name}" ended`)),
    vscode.commands.registerCommand("neuralPython.saveTrace", (target?: vscode.Uri) => saveSessionAsTrace(log, target instanceof vscode.Uri ? target : undefined)),
    vscode.commands.registerCommand("neuralPython.replayTrace", (uri?: vscode.Uri) => replayTrace(uri instanceof vscode.Uri ? uri : undefined)),
    vscode.commands.registerCommand("neuralPython.showLog", () => log.show(true)),
    registerComparePanel(log),
    registerValueOrigin(log),
    registerForgetHoleAnswers(log),
    registerBackendCheck(context, log),
    startTraceLanguageClient(context, log),
    offerReplay(),
  );
  log.info(`activated (${vscode.env.appName} ${vscode.version}, extension host Node ${process.versions.node})`);
  return { log, status };
}

export function deactivate(): void {}

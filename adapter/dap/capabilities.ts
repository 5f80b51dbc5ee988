// What this debugger tells a client it can do (the initialize response): each capability on is a
// request the session answers; each one off is refused by adapter/dap/requests.ts too.
import type { DebugProtocol } from "@vscode/debugprotocol";
import { EXCEPTION_FILTERS } from "../engine/breakpoints.js";

export const CAPABILITIES: DebugProtocol.Capabilities = {
  supportsConfigurationDoneRequest: true,
  supportsStepBack: true,
  supportsSteppingGranularity: true,
  supportsConditionalBreakpoints: true,
  supportsSetVariable: true,
  supportsEvaluateForHovers: true,
  supportsRestartRequest: true,
  supportsExceptionInfoRequest: true,
  supportsTerminateRequest: true,
  supportsCancelRequest: true,
  supportsHitConditionalBreakpoints: true,
  supportsLogPoints: true,
  supportsFunctionBreakpoints: false,
  supportsDataBreakpoints: true,
  supportsClipboardContext: true,
  supportsSetExpression: false,
  supportsGotoTargetsRequest: false,
  supportsStepInTargetsRequest: false,
  supportsCompletionsRequest: false,
  supportsModulesRequest: false,
  supportsLoadedSourcesRequest: false,
  exceptionBreakpointFilters: EXCEPTION_FILTERS,
};

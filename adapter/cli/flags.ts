// Every flag of ndbg, declared once: its type, the name of its value, what it does. A command names
// the flags it takes (`command`), and its parser's options, its one-line usage and its --help all
// come from that list, so no flag is read without being in the help.
import { GPU_SETTINGS } from "../model/backend.js";
import { LAYOUTS } from "../pyread/layout.js";

interface Flag {
  type: "string" | "boolean";
  /** The value's name in the help ("N", "PATH"); none for a boolean. */
  value?: string;
  help: string;
}


const FLAGS = {
  // The program and its run.
  call: { type: "string", value: "EXPR", help: 'a call to make once the file has run, e.g. "main(3)"' },
  python: { type: "string", value: "P", help: "the Python that runs the program for real (default: python3 on PATH)" },
  "max-events": { type: "string", value: "N", help: "events a run may have before it is ended" },
  timeout: { type: "string", value: "S", help: "seconds a run may take" },
  actions: { type: "string", value: "ACTION,...", help: "the moves, in order: step_into, step_over, step_return, continue, breakpoint:L, step_back, reverse_continue" },
  breakpoints: { type: "string", value: "L,L", help: "the lines with a breakpoint" },
  json: { type: "boolean", help: "JSON instead of text (one object a line, or one report last on stdout)" },
  verbose: { type: "boolean", help: "say what happens, on stderr" },
  // The model.
  model: { type: "string", value: "PATH|URI", help: "the GGUF model, a URI node-llama-cpp resolves, or a model server's URL ending in /v1 (default: the bundled model)" },
  threads: { type: "string", value: "T", help: "CPU threads of the model (default: one for a small model, else every core)" },
  gpu: { type: "string", value: GPU_SETTINGS.join("|"), help: "where the model runs (default auto: the first that passes its probe)" },
  context: { type: "string", value: "N", help: "the model's context, in tokens (at least 256; default: the model's own)" },
  "max-tokens": { type: "string", value: "N", help: "tokens the model may write for one state (at least 8)" },
  layout: { type: "string", value: LAYOUTS.join("|"), help: "how the program's source is shown to the model (default canonical)" },
  dialect: { type: "string", value: "auto|native|instruct", help: "how a model server is spoken to (default auto)" },
  "no-compute": { type: "boolean", help: "the model alone: every state predicted, nothing computed by Python" },
  "no-sealed": { type: "boolean", help: "no sealed run: the rules' Python on this machine decides what the model does not" },
  "python-version": { type: "string", value: "3.N", help: "the Python version the model predicts for (default: the sealed run's)" },
  // Evaluation and data.
  data: { type: "string", value: "FILE.jsonl|DIR[:LIMIT]", help: "the programs (a JSONL file or a folder of scripts), the first LIMIT of them" },
  limit: { type: "string", value: "N", help: "the first N programs only" },
  seed: { type: "string", value: "S", help: "the seed of the sampled sessions (default 0)" },
  "actions-per-program": { type: "string", value: "K", help: "sampled actions per program (default 1)" },
  concurrency: { type: "string", value: "N", help: "programs sent at once to a model server (default 1)" },
  task: { type: "string", value: "output|input", help: "predict each function's output from its input, or an input from its output" },
  "max-steps": { type: "string", value: "N", help: "moves a run may take to reach its end" },
  "return-line": { type: "string", value: "code|trace", help: "input task: where the return state stands, read from the code (default) or the real run" },
  "check-timeout": { type: "string", value: "S", help: "seconds each assert may run (default 3)" },
  sealed: { type: "boolean", help: "the program runs sealed (predict mode as users get it), not on this machine" },
  "hole-model": { type: "string", value: "http://HOST:PORT/v1", help: "a model server's chat model that answers the holes" },
  set: { type: "string", value: "NAME=PATH[:LIMIT]", help: "an evaluation set and its name" },
  cruxeval: { type: "string", value: "FILE", help: "CRUXEval's items, for its output and input tasks" },
  "cruxeval-limit": { type: "string", value: "N", help: "the first N CRUXEval items only" },
  report: { type: "string", value: "EVAL.json", help: "the items of an `ndbg eval steps --no-compute --json` run" },
  out: { type: "string", value: "FILE", help: "where to write" },
  programs: { type: "string", value: "FILE.jsonl", help: "CRUXEval-shaped programs (code, input), traced for real" },
  "samples-per-program": { type: "string", value: "K", help: "examples sampled from each program's run (default 2)" },
  "max-chars": { type: "string", value: "N", help: "the longest example, in characters (at least 200; default 2400)" },
  mix: { type: "string", value: "step_into=0.4,...", help: "weights of the actions sampled (the others 0)" },
  "inverse-call": { type: "string", value: "P", help: "the chance that an example is an inverse call (0 to 1; default 0.15)" },
  check: { type: "boolean", help: "check every example against its run (slower)" },
  predict: { type: "string", value: "NAME,NAME", help: "functions the model predicts although they are written" },
  stats: { type: "boolean", help: "the model's figures per step (tokens, time), as JSON on stderr" },
  compare: { type: "boolean", help: "also run the program for real and print each real state below the predicted one" },
  // Benchmarks.
  steps: { type: "string", value: "N", help: "samples per action and side (default 20)" },
  long: { type: "string", value: "N", help: "moves of the long session (default 500)" },
  runs: { type: "string", value: "N,N,...", help: "instead: runs of N line events each, continued, stepped over and back beside debugpy" },
  adapter: { type: "string", value: "PATH", help: "the built debug adapter (default: dist/adapter.js)" },
  // The MCP server.
  "allow-run": { type: "boolean", help: "allow the modes that run the program on this machine (record, hybrid)" },
  "max-sessions": { type: "string", value: "N", help: "sessions open at once (1 to 64; default 8)" },
  "start-timeout": { type: "string", value: "S", help: "seconds a session may take to reach its first stop (default 300)" },
  "step-timeout": { type: "string", value: "S", help: "seconds a move may take (default 120)" },
  cwd: { type: "string", value: "DIR", help: "the folder relative paths are read from (default: this one)" },
} as const satisfies Record<string, Flag>;

export type FlagName = keyof typeof FLAGS;

/** How a command takes a flag where it differs from the table: required, repeatable, another value name or meaning. */
interface Take {
  required?: true;
  multiple?: true;
  value?: string;
  help?: string;
}
export type Use = FlagName | readonly [FlagName, Take];

type NameOf<U> = U extends readonly [infer N, Take] ? N : U;
/** The names of the flags these uses require. */
export type RequiredOf<U extends readonly Use[]> = U[number] extends infer E ? (E extends readonly [infer N, { required: true }] ? N : never) : never;
type Repeated<U, N> = [Extract<U, readonly [N, { multiple: true }]>] extends [never] ? false : true;
/** The parser's options for these uses, typed so that each command's values are. */
export type OptionsOf<U extends readonly Use[]> = {
  [N in NameOf<U[number]> & FlagName]: { type: (typeof FLAGS)[N]["type"]; multiple: Repeated<U[number], N> };
};

export interface CommandSpec<U extends readonly Use[]> {
  /** One line: the command, its arguments and its flags. */
  usage: string;
  /** The usage line, then each flag with what it does. */
  help: string;
  options: OptionsOf<U>;
  /** The flags it cannot run without. */
  required: readonly FlagName[];
  /** It takes one FILE (else no positional argument at all). */
  file: boolean;
}

/** A command's flags from the table: `args` is its one positional argument as the usage shows it ("FILE"), or "" for none. */
export function command<const U extends readonly Use[]>(name: string, args: string, uses: U): CommandSpec<U> {
  const taken = uses.map((u) => {
    const [flag, take]: readonly [FlagName, Take] = typeof u === "string" ? [u, {}] : u;
    const f: Flag = FLAGS[flag];
    const value = take.value ?? f.value;
    const shown = `--${flag}${value ? ` ${value}` : ""}`;
    return { flag, f, take, shown };
  });
  const usage = [name, args, ...taken.map(({ take, shown }) => (take.required ? shown : `[${shown}]`))].filter(Boolean).join(" ");
  const width = Math.max(...taken.map((t) => t.shown.length));
  const lines = taken.map(({ take, f, shown }) => `  ${shown.padEnd(width)}  ${take.help ?? f.help}${take.multiple ? " (repeatable)" : ""}${take.required ? " (required)" : ""}`);
  const options = Object.fromEntries(taken.map(({ flag, f, take }) => [flag, { type: f.type, multiple: take.multiple === true }]));
  return {
    usage,
    help: `Usage: ndbg ${usage}\n\nOptions:\n${lines.join("\n")}\n`,
    options: options as OptionsOf<U>,
    required: taken.filter((t) => t.take.required).map((t) => t.flag),
    file: args !== "",
  };
}

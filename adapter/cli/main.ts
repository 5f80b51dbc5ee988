// ndbg: the command line. Each command lives in adapter/cli/commands/<name>.ts, exports
// `run(argv): Promise<exit code>`, its one-line `usage` and its `help` (both from its flags: flags.ts),
// and is registered by one line below.

export interface Command {
  run(argv: string[]): Promise<number>;
  /** One line: the command's arguments, e.g. "trace FILE [--call EXPR] [--json]". */
  usage: string;
  /** Its --help: the usage, then each flag (flags.ts). */
  help: string;
  /** A command of subcommands: the help of the one its arguments name (`eval steps --help`), else its own. */
  helpOf?(argv: string[]): string;
}

const COMMANDS: Record<string, () => Promise<Command>> = {
  trace: () => import("./commands/trace.js"),
  steps: () => import("./commands/steps.js"),
  data: () => import("./commands/data.js"),
  predict: () => import("./commands/predict.js"),
  hybrid: () => import("./commands/hybrid.js"),
  bench: () => import("./commands/bench.js"),
  eval: () => import("./commands/eval.js"),
  calibrate: () => import("./commands/calibrate.js"),
  doctor: () => import("./commands/doctor.js"),
  mcp: () => import("./commands/mcp.js"),
};

async function help(): Promise<string> {
  const lines = await Promise.all(Object.values(COMMANDS).map(async (load) => "  ndbg " + (await load()).usage));
  return ["Usage: ndbg <command> [options]    (ndbg <command> --help for one command)", "", "Commands:", ...lines].join("\n") + "\n";
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(await help());
    return 0;
  }
  if (name === undefined) {
    process.stderr.write(await help());
    return 2;
  }
  const load = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!load) {
    process.stderr.write(`ndbg: unknown command "${name}" (commands: ${Object.keys(COMMANDS).join(", ")}; see ndbg --help)\n`);
    return 2;
  }
  const cmd = await load();
  if (rest.includes("--help") || rest.includes("-h")) {
    process.stdout.write(cmd.helpOf?.(rest) ?? cmd.help);
    return 0;
  }
  return cmd.run(rest);
}

// A reader that goes away (ndbg trace ... | head) is not an error.
process.stdout.on("error", (e: NodeJS.ErrnoException) => {
  if (e.code === "EPIPE") process.exit(0);
  throw e;
});

/** Exits once what was written has been flushed: a stray timer or handle must not keep a finished command alive. */
function exit(code: number): void {
  process.stdout.write("", () => process.stderr.write("", () => process.exit(code)));
}

main(process.argv.slice(2)).then(exit, (e: unknown) => {
  process.stderr.write(`ndbg: ${e instanceof Error ? e.message : String(e)}\n`);
  exit(1);
});

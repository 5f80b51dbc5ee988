// Which file is which between the client and the states: the Python file the states stand in, a
// frame's file on disk (or the program's text from a trace), and where a client's file with
// breakpoints stands in the run (the program itself, another .py file of the project, or none).
import { realpathSync } from "node:fs";
import { dirname, relative, resolve, sep } from "node:path";
import type { Frame } from "../format/trajectory.js";
import { projectRoot } from "../real/workspace.js";
import type { LaunchConfig } from "../session/launch.js";
import type { Session } from "../session/session.js";
import { under } from "../system/paths.js";

/** A path with its symlinks resolved, where it exists. */
function real(p: string): string {
  try {
    return realpathSync.native(p);
  } catch {
    return resolve(p);
  }
}

export class SessionFiles {
  constructor(
    private readonly config: () => LaunchConfig | undefined,
    private readonly core: () => Session | undefined,
  ) {}

  /**
   * The Python file the states stand in: the program, or in replay mode the trace's program
   * where it is still there unchanged; undefined: its text is shown from the trace itself.
   */
  program(): string | undefined {
    const config = this.config();
    if (config?.mode !== "replay") return config?.program;
    return this.core()?.predictor.sourceFile;
  }

  /** A frame's file on disk; undefined where the states' program is only in the trace. */
  of(frame: Frame): string | undefined {
    const program = this.program();
    if (frame.file !== undefined) return resolve(dirname(program ?? this.config()!.program), frame.file);
    return program;
  }

  isProgram(path: string): boolean {
    const program = this.program();
    return this.config() !== undefined && program !== undefined && real(path) === real(program);
  }

  /**
   * Where breakpoints in a file other than the program stop: a .py file of the project (the
   * launch's cwd, else the program's package), named as the run's frames name it, where the
   * states come from a run (not from the model, which predicts the program's own file); else why not.
   */
  userFile(path: string): { file: string } | { refused: string } {
    const config = this.config()!;
    if (config.mode === "compare" || this.core()?.predicts) return { refused: "breakpoints stop in the debugged program only: the model predicts its own file" };
    const program = this.program() ?? config.program;
    const root = real(projectRoot(program, config.cwd));
    const file = real(path);
    if (!file.endsWith(".py") || !under(file, root)) return { refused: `breakpoints stop in the project's Python files only (${root})` };
    return { file: relative(dirname(real(program)), file).split(sep).join("/") };
  }

  /** Where a file's breakpoints stand in the states (BreakpointTable's Place): undefined the program, a file of the project, null nowhere. */
  place(path: string): string | undefined | null {
    if (!this.config()) return null;
    if (this.isProgram(path)) return undefined;
    const other = this.userFile(path);
    return "file" in other ? other.file : null;
  }
}

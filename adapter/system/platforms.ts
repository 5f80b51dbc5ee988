// What differs between the platforms VS Code runs on (Linux, macOS, Windows), each as a function of
// the platform, so that every branch is tested on any machine: how a process tree is ended, which
// Pythons are tried when the user names none, whether paths compare without case, and which of
// node-llama-cpp's builds runs a backend.

/** The platforms VS Code runs on (Node's names). */
export type Platform = "linux" | "darwin" | "win32";

const current = (): Platform => (process.platform === "win32" || process.platform === "darwin" ? process.platform : "linux");

/**
 * The command that ends a process and every process it started, where a command does it: on
 * Windows, which has no process groups, `taskkill /T /F` walks the tree; elsewhere there is none,
 * and signals to the process's group and its descendants do it (processes.ts, killTree).
 */
export function treeKillCommand(pid: number, platform: Platform = current()): { command: string; args: string[] } | undefined {
  return platform === "win32" ? { command: "taskkill", args: ["/pid", String(pid), "/T", "/F"] } : undefined;
}

/**
 * Where the live processes' parents are read: Linux's /proc (none: processes.ts reads it), macOS's
 * `ps` (no /proc there); Windows needs none (taskkill walks the tree).
 */
export function processTableCommand(platform: Platform = current()): { command: string; args: string[] } | undefined {
  return platform === "darwin" ? { command: "ps", args: ["-A", "-o", "pid=", "-o", "ppid="] } : undefined;
}

/**
 * The interpreters tried, in order, when the user names none, as the Python extension finds them:
 * on Windows the `py` launcher (its default Python 3) and then PATH's `python`; on macOS PATH's,
 * then Homebrew's (Apple silicon, Intel), never /usr/bin/python3 (the command-line tools' stub,
 * which offers to install them where they are not); on Linux PATH's, then the system's.
 */
export function pythonCandidates(platform: Platform = current()): readonly string[] {
  switch (platform) {
    case "win32":
      return ["py", "python", "python3"];
    case "darwin":
      return ["python3", "/opt/homebrew/bin/python3", "/usr/local/bin/python3", "python"];
    default:
      return ["python3", "python", "/usr/bin/python3"];
  }
}

/** Whether the platform's usual file systems compare names without case (NTFS, APFS), and its path separator. */
export function pathRules(platform: Platform = current()): { caseless: boolean; sep: "/" | "\\" } {
  return { caseless: platform !== "linux", sep: platform === "win32" ? "\\" : "/" };
}

/**
 * What node-llama-cpp is asked for to run a backend: its `gpu` option (the build), and `gpuLayers`
 * 0 where that build must keep the model off the GPU. On Apple silicon node-llama-cpp ships only
 * its Metal build, which also runs on the CPU: the CPU there is that build with no layer offloaded
 * (asked for `gpu: false`, it finds no build and, never building, fails).
 */
export function llamaBinding(
  backend: "cuda" | "vulkan" | "metal" | "cpu",
  platform: Platform = current(),
  arch: string = process.arch,
): { gpu: false | "cuda" | "vulkan" | "metal"; gpuLayers?: 0 } {
  if (backend !== "cpu") return { gpu: backend };
  return platform === "darwin" && arch === "arm64" ? { gpu: "metal", gpuLayers: 0 } : { gpu: false };
}

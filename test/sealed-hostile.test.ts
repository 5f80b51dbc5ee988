// The sealed executor against hostile programs: each attack runs sealed (adapter/real/sealed.ts) and
// must fail inside the sandbox, as an error in the program or a limit, with the executor still
// serving the next run. Every attack is also checked from outside: a secret file on this machine
// is never read, files it tries to write never appear, a TCP server on 127.0.0.1 gets no
// connection, the sandbox's process has no child, and the test's own process is untouched. A few
// attacks also run on the host tracer, as controls: there they succeed, so the checks can see an
// escape when there is one.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runSealed, SEALED_PYTHONS, SealedChild } from "../adapter/real/sealed.js";
import { type TraceResult } from "../adapter/real/run.js";
import { runTrace } from "../adapter/real/hostRun.js";

const SECRET = `ndbg-secret-${process.pid}-${Date.now()}`;
const CANARY = `ndbg-canary-${process.pid}`;
let dir = "";
let secretFile = "";
let outDir = "";
let server: Server;
let port = 0;
let connections = 0;
// Every sealed CPython carried (SEALED_PYTHONS) meets every attack: each has its own Pyodide.
const executors = Object.keys(SEALED_PYTHONS).map((version) => new SealedChild(version));
const executor = executors[0];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "ndbg-hostile-"));
  secretFile = join(dir, "secret.txt");
  writeFileSync(secretFile, SECRET);
  outDir = join(dir, "written");
  mkdirSync(outDir);
  process.env.NDBG_HOSTILE_CANARY = CANARY;
  server = createServer((s) => {
    connections++;
    s.end("HTTP/1.0 200 OK\r\n\r\n" + SECRET);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as { port: number }).port;
  for (const e of executors) await e.warm();
});

after(() => {
  for (const e of executors) e.close();
  server.close();
  rmSync(dir, { recursive: true, force: true });
  delete process.env.NDBG_HOSTILE_CANARY;
});

/** The attack's program: names the targets, then tries; it prints ESCAPED only if it got through. */
function program(name: string, code: string): string {
  const folder = join(dir, name);
  mkdirSync(folder, { recursive: true });
  const file = join(folder, "attack.py");
  const prelude = `SECRET_FILE = ${JSON.stringify(secretFile)}\nSECRET = ${JSON.stringify(SECRET)}\nPORT = ${port}\nOUT = ${JSON.stringify(outDir)}\nHOME = ${JSON.stringify(process.env.HOME ?? "/root")}\n`;
  writeFileSync(file, prelude + code);
  return file;
}

const output = (r: TraceResult): string => [...r.frames.map((f) => f.stdout ?? ""), r.exit.stdout ?? "", r.exit.value ?? "", r.stderr ?? ""].join("");

/** Children of a process, read from /proc. */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "latin1");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid) out.push(Number(name));
    } catch {
      // gone
    }
  }
  return out;
}

/** Runs an attack sealed and checks, from inside and outside, that nothing got through. */
async function contained(name: string, code: string, opts: { timeout?: number; maxOutput?: number } = {}, executor = executors[0]): Promise<TraceResult> {
  const before = connections;
  const r = await runSealed(program(name, code), { timeout: opts.timeout ?? 5, ...(opts.maxOutput ? { maxOutput: opts.maxOutput } : {}) }, executor);
  const text = output(r);
  assert.ok(["normal", "error", "limit"].includes(r.exit.status), `${name}: the run ended (${r.exit.status})`);
  assert.doesNotMatch(text, /ESCAPED/, `${name}: the program says it got out: ${text.slice(0, 300)}`);
  assert.ok(!text.includes(SECRET), `${name}: the secret reached the program`);
  assert.ok(!text.includes(CANARY), `${name}: this process's environment reached the program`);
  assert.equal(connections, before, `${name}: the server on 127.0.0.1 was reached`);
  assert.deepEqual(readdirSync(outDir), [], `${name}: a file was written on this machine`);
  assert.equal(readFileSync(secretFile, "utf8"), SECRET, `${name}: the secret file changed`);
  const pid = executor.pid;
  if (pid !== undefined) assert.deepEqual(childrenOf(pid), [], `${name}: the sandbox started a process`);
  return r;
}

// Each: [name, code]. The code prints ESCAPED where the attack worked.
const ATTACKS: [string, string][] = [
  // ---- files on this machine ----
  ["read /etc/passwd", `print("ESCAPED" if "root:" in open("/etc/passwd").read() else "no")`],
  ["read a secret file", `print("ESCAPED", open(SECRET_FILE).read())`],
  ["read the home folder", `import os\nprint("ESCAPED", os.listdir(HOME))`],
  ["pathlib read", `import pathlib\nprint("ESCAPED", pathlib.Path(SECRET_FILE).read_text())`],
  ["os.open read", `import os\nfd = os.open(SECRET_FILE, os.O_RDONLY)\nprint("ESCAPED", os.read(fd, 100))`],
  ["list the machine's root", `import os\nnames = os.listdir("/")\nprint("ESCAPED" if "proc" in names and ("usr" in names or "work" in names) else "no", names)`],
  ["/proc of the host", `print("ESCAPED", open("/proc/self/environ").read())`],
  ["write a file", `open(OUT + "/x.txt", "w").write("x")\nimport os\nprint("ESCAPED" if os.path.exists(OUT + "/x.txt") else "no")`],
  ["make a folder", `import os\nos.makedirs(OUT + "/d/e")\nprint("wrote in the sandbox only")`],
  ["copy the secret out", `import shutil\nshutil.copy(SECRET_FILE, OUT + "/s.txt")\nprint("ESCAPED")`],
  // ---- processes ----
  ["subprocess.run", `import subprocess\nprint("ESCAPED", subprocess.run(["id"], capture_output=True).stdout)`],
  ["os.system", `import os\nrc = os.system("touch " + OUT + "/sys.txt")\nprint("ESCAPED" if rc == 0 else "no")`],
  ["C's system() found through gc", `import gc\nfor f in gc.get_objects():\n    if type(f).__name__ == "builtin_function_or_method" and f.__name__ == "system":\n        print("ESCAPED" if f("touch " + OUT + "/c") == 0 else "no")`],
  ["os.fork", `import os\npid = os.fork()\nprint("ESCAPED", pid)`],
  ["os.posix_spawn", `import os\nprint("ESCAPED", os.posix_spawn("/bin/sh", ["sh", "-c", "touch " + OUT + "/sp"], {}))`],
  ["os.execv", `import os\nos.execv("/bin/sh", ["sh", "-c", "touch " + OUT + "/ex"])\nprint("ESCAPED")`],
  ["multiprocessing", `import multiprocessing\np = multiprocessing.Process(target=print)\np.start()\nprint("ESCAPED")`],
  ["kill the parent", `import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nprint("ESCAPED")`],
  ["a thread", `import threading\nt = threading.Thread(target=print, args=("hi",))\nt.start()\nprint("started a thread (in WebAssembly this fails)")`],
  // ---- network ----
  ["socket to 127.0.0.1", `import socket\ns = socket.create_connection(("127.0.0.1", PORT), timeout=2)\nprint("ESCAPED", s.recv(100))`],
  ["urllib to 127.0.0.1", `import urllib.request\nprint("ESCAPED", urllib.request.urlopen("http://127.0.0.1:%d/" % PORT, timeout=2).read())`],
  ["http.client", `import http.client\nc = http.client.HTTPConnection("127.0.0.1", PORT, timeout=2)\nc.request("GET", "/")\nprint("ESCAPED", c.getresponse().read())`],
  ["asyncio connection", `import asyncio\nasync def go():\n    r, w = await asyncio.open_connection("127.0.0.1", PORT)\n    print("ESCAPED", await r.read(100))\nasyncio.run(go())`],
  ["udp", `import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ns.sendto(b"x", ("127.0.0.1", PORT))\nprint("ESCAPED")`],
  // ---- JavaScript ----
  ["import js", `import js\nprint("ESCAPED", js.process)`],
  ["importlib js", `import importlib\nprint("ESCAPED", importlib.import_module("js"))`],
  ["__import__ js", `print("ESCAPED", __import__("js"))`],
  ["import pyodide.ffi", `import pyodide.ffi\nprint("ESCAPED", pyodide.ffi)`],
  ["import pyodide_js", `import pyodide_js\nprint("ESCAPED", pyodide_js)`],
  ["import _pyodide_core", `import _pyodide_core\nprint("ESCAPED", _pyodide_core)`],
  ["import ctypes", `import ctypes\nprint("ESCAPED", ctypes.CDLL(None))`],
  ["sys.modules", `import sys\nfound = [m for m in sys.modules if m == "js" or "pyodide" in m or "ctypes" in m]\nprint("ESCAPED" if found else "no", found)`],
  ["meta_path cleared", `import sys, importlib\nsys.meta_path[:] = [f for f in sys.meta_path if "Refuse" not in repr(f)]\nimportlib.invalidate_caches()\nimport pyodide\nprint("ESCAPED", pyodide)`],
  ["_imp.create_builtin", `import _imp, importlib.machinery\nm = _imp.create_builtin(importlib.machinery.ModuleSpec("_pyodide_core", None))\nprint("ESCAPED", m)`],
  ["BuiltinImporter", `import importlib.machinery as m\nspec = m.BuiltinImporter.find_spec("_pyodide_core")\nprint("ESCAPED" if spec else "no", spec)\nif spec: print("ESCAPED", m.BuiltinImporter.create_module(spec))`],
  ["the zip's bytes still hold pyodide", `import sys\nraw = b"".join(open(p, "rb").read() for p in sys.path if p.endswith(".zip"))\nprint("ESCAPED" if b"pyodide/" in raw or b"ctypes/" in raw else "no", len(raw))`],
  ["standard input, the debugger's pause line", `import os\ndata = b"".join(os.read(0, 64) for _ in range(200))\nprint("ESCAPED" if data else "no", data[:40])`],
  ["a held stop's answers forged on standard output", `import os\nos.write(1, b'{"results": [{"value": "forged"}]}\\n')\ndata = b"".join(os.read(0, 64) for _ in range(200))\nprint("ESCAPED" if data.strip(b"{}\\n") else "no", data[:40])`],
  ["the zip still has pyodide", `import zipfile, sys\nz = [p for p in sys.path if p.endswith(".zip")]\nnames = [n for p in z for n in zipfile.ZipFile(p).namelist() if n.startswith(("pyodide", "_pyodide", "ctypes"))]\nprint("ESCAPED" if names else "no", names[:3])`],
  [
    "a JS proxy through gc",
    `import gc
hits = [o for o in gc.get_objects() if "JsProxy" in type(o).__name__ or "pyodide" in type(o).__module__]
print("proxies found:", len(hits))
for o in hits:
    for attempt in (
        lambda: o.process.mainModule.require("child_process").execSync("touch " + OUT + "/gc"),
        lambda: o.require("child_process").execSync("touch " + OUT + "/gc2"),
        lambda: o.process.getBuiltinModule("fs").readFileSync(SECRET_FILE, "utf8"),
        lambda: o.fetch("http://127.0.0.1:%d/" % PORT),
        lambda: o.constructor.constructor("return process")(),
        lambda: o.eval("1"),
        lambda: o.process._linkedBinding("electron_common_shell"),
        lambda: o.process.binding("fs"),
        lambda: o.process.dlopen({}, "/lib/x86_64-linux-gnu/libc.so.6"),
        lambda: o.globalThis.process.binding("spawn_sync"),
    ):
        try:
            r = attempt()
            if r is not None and (SECRET in str(r) or "JsProxy" in type(r).__name__):
                print("ESCAPED", r)
        except BaseException:
            pass`,
  ],
  [
    "frames and globals",
    `import sys
f = sys._getframe()
seen = []
while f is not None:
    seen += [k for k in f.f_globals if k in ("js", "pyodide", "pyodide_js")]
    f = f.f_back
print("ESCAPED" if seen else "no", seen)`,
  ],
  ["subclasses", `names = [c.__name__ for c in object.__subclasses__() if "JsProxy" in c.__name__]\nprint("JsProxy classes:", names)\nfor c in object.__subclasses__():\n    if "JsProxy" in c.__name__:\n        try: print("ESCAPED", c())\n        except BaseException: pass`],
  ["environment", `import os\nprint("ESCAPED" if any("NDBG" in k for k in os.environ) else "no", sorted(os.environ))`],
  // ---- resources ----
  ["a loop forever", `while True:\n    pass`],
  ["recursion without end", `def f(n):\n    return f(n + 1)\nf(0)`],
  ["a huge allocation", `x = bytearray(2 ** 30)\nprint(len(x))`],
  ["memory without end", `xs = []\nwhile True:\n    xs.append(bytearray(50 * 2 ** 20))`],
  ["megabytes of output", `for i in range(200000):\n    print("x" * 100)`],
  ["a loop in C", `import itertools\nsum(itertools.count())`],
  ["tracing turned off", `import sys\nsys.settrace(None)\nprint("after")`],
  ["exit with a code", `import sys\nsys.exit(3)`],
  ["raise", `raise RuntimeError("boom")`],
];

for (const [executor, [name, code]] of executors.flatMap((e) => ATTACKS.map((a) => [e, a] as const))) {
  test(`sealed ${executor.version}: ${name} is contained`, async () => {
    const r = await contained(name.replace(/\W+/g, "_"), code, name === "a loop in C" || name === "a loop forever" ? { timeout: 1 } : name === "megabytes of output" ? { maxOutput: 100_000 } : {}, executor);
    // The sandbox answers the next run, whatever this one did.
    const next = await runSealed(program("next", `print(6 * 7)`), {}, executor);
    assert.equal(next.exit.status, "normal", `after ${name}: ${next.exit.value}`);
    assert.equal(next.frames.at(-1)?.stdout, "42\n");
    if (name === "a loop forever") assert.equal(r.exit.status, "limit");
    if (name === "megabytes of output") assert.equal(r.exit.status, "limit");
    if (name === "a huge allocation" || name === "memory without end") assert.match(r.exit.value ?? "", /MemoryError/);
    if (name === "recursion without end") assert.match(r.exit.value ?? "", /RecursionError|the sealed interpreter failed/);
  });
}

// The project's files in the sandbox (adapter/real/workspace.ts answers each path the child asks
// for): each attack gets its project folder ready (`setup`), then runs there, checked as above.
const FILE_ATTACKS: [string, string, (folder: string) => void][] = [
  ["../ out of the project", `print("ESCAPED", open("../secret.txt").read())`, () => undefined],
  ["an absolute path", `print("ESCAPED", open(SECRET_FILE).read())`, () => undefined],
  ["~ (the home folder)", `import os\nprint("ESCAPED", os.listdir(os.path.expanduser("~")), open(os.path.expanduser("~/.bashrc")).read())`, () => undefined],
  ["a symlink in the project to a file outside", `import os\nprint(os.listdir("."))\nprint("ESCAPED", open("link.txt").read())`, (f) => symlinkSync(secretFile, join(f, "link.txt"))],
  ["a symlinked folder to /etc", `import os\nprint("ESCAPED", os.listdir("etc"), open("etc/passwd").read())`, (f) => symlinkSync("/etc", join(f, "etc"))],
  ["a symlink to /proc/self", `print("ESCAPED", open("me/environ").read())`, (f) => symlinkSync("/proc/self", join(f, "me"))],
  ["a FIFO in the project", `import os\nprint(os.listdir("."))\nprint("ESCAPED", open("pipe").read())`, (f) => spawnSync("mkfifo", [join(f, "pipe")])],
  ["a device behind a symlink", `print("ESCAPED", len(open("zero", "rb").read(10)))`, (f) => symlinkSync("/dev/zero", join(f, "zero"))],
  ["a 2 GB file", `import os\nprint(os.path.getsize("big.bin"))\ntry:\n    open("big.bin", "rb").read(10)\n    print("ESCAPED: read past the bound")\nexcept OSError as e:\n    print("refused:", e)`, (f) => {
    writeFileSync(join(f, "big.bin"), "");
    truncateSync(join(f, "big.bin"), 2 * 1024 ** 3);
  }],
  ["100,000 small files", `import os, pathlib\nprint(len(os.listdir("many")))\nprint(sum(map(len, map(pathlib.Path.read_text, pathlib.Path("many").iterdir()))))`, (f) => {
    mkdirSync(join(f, "many"));
    for (let i = 0; i < 100_000; i++) writeFileSync(join(f, "many", `f${i}.txt`), "x");
  }],
  ["gigabytes written to the in-memory files", `chunk = b"x" * (1 << 20)\nwritten = 0\ntry:\n    with open("huge.bin", "wb") as f:\n        for _ in range(4096):\n            f.write(chunk)\n            written += 1\nexcept OSError as e:\n    print("stopped at", written, "MiB:", e)`, () => undefined],
  ["the project's .git and .venv", `import os\nprint("ESCAPED" if {".git", ".venv"} & set(os.listdir(".")) else "no", open(".git/config").read())`, (f) => {
    mkdirSync(join(f, ".git"));
    writeFileSync(join(f, ".git", "config"), SECRET);
    mkdirSync(join(f, ".venv"));
  }],
  ["a package that attacks as it is imported", `import evil\nprint("imported")`, (f) => {
    mkdirSync(join(f, "evil"));
    writeFileSync(join(f, "evil", "__init__.py"), `import os\ntry:\n    open(${JSON.stringify(outDir)} + "/evil.txt", "w").write("x")\nexcept OSError:\n    pass\nprint("ESCAPED" if os.path.exists(${JSON.stringify(outDir)} + "/evil.txt") else "no")\ntry:\n    print("ESCAPED", open(${JSON.stringify(secretFile)}).read())\nexcept OSError as e:\n    print("no:", e)\n`);
  }],
];

for (const [executor, [name, code, setup]] of executors.flatMap((e) => FILE_ATTACKS.map((a) => [e, a] as const))) {
  test(`sealed ${executor.version}: ${name} is contained`, async () => {
    const folder = join(dir, `${executor.version}_${name.replace(/\W+/g, "_")}`);
    mkdirSync(folder, { recursive: true });
    setup(folder);
    // (writing 256 MiB into the in-memory files, or reading 10,000 files over the channel, takes
    // seconds on a loaded machine: 2.5-3.4 s idle, past 5 s under the CI's Node 24 run once; the
    // time limit is not what these attacks test)
    const slow = name.startsWith("gigabytes") || name === "100,000 small files";
    const r = await contained(`${executor.version}_${name.replace(/\W+/g, "_")}`, code, slow ? { timeout: 30 } : {}, executor);
    const text = output(r);
    if (name === "a 2 GB file") assert.match(text, /^2147483648\nrefused: \[Errno \d+\] File too large/m);
    if (name === "100,000 small files") assert.match(text, /^10000\n10000\n/);
    if (name === "gigabytes written to the in-memory files") assert.match(text, /stopped at 2\d\d MiB: \[Errno \d+\] No space left on device/);
    if (name === "a symlink in the project to a file outside" || name === "a FIFO in the project") assert.match(text, /^\['attack\.py'\]$/m);
    if (name === "a package that attacks as it is imported") assert.match(text, /^no\nno: .*\nimported$/m);
    const next = await runSealed(program("next", `print(6 * 7)`), {}, executor);
    assert.equal(next.frames.at(-1)?.stdout, "42\n", `after ${name}`);
  });
}

test("the host tracer is no sandbox: the same attacks get through there, so the checks above can see an escape", async () => {
  const read = await runTrace(program("control_read", `print("ESCAPED", open(SECRET_FILE).read())`));
  assert.ok(output(read).includes(SECRET));
  const before = connections;
  const net = await runTrace(program("control_net", `import socket\ns = socket.create_connection(("127.0.0.1", PORT), timeout=2)\nprint("ESCAPED", s.recv(200))`));
  assert.match(output(net), /ESCAPED/);
  assert.equal(connections, before + 1);
  const env = await runTrace(program("control_env", `import os\nprint(os.environ.get("NDBG_HOSTILE_CANARY"))`));
  assert.ok(output(env).includes(CANARY));
});

for (const executor of executors) {
  test(`a sealed run (${executor.version}) is a pure function of its program: clocks, random numbers and hashes are the same every run`, async () => {
    const code = `import time, random, os, uuid, datetime\nprint(time.time(), time.perf_counter(), random.random(), os.urandom(4).hex(), uuid.uuid4(), hash("abc"), datetime.datetime.now())\ntime.sleep(30)\nprint(time.monotonic())`;
    const a = await runSealed(program("pure", code), { timeout: 5 }, executor);
    const b = await runSealed(program("pure", code), { timeout: 5 }, executor);
    assert.equal(a.exit.status, "normal", a.exit.value);
    assert.equal(output(a), output(b));
    // time.sleep(30) took no real time (the run's limit is 5 s) and moved the program's clock on.
    const [first, second] = a.frames.map((f) => f.stdout).filter(Boolean) as string[];
    assert.ok(Number(second.trim()) - Number(first.split(" ")[1]) >= 30, `${first} / ${second}`);
  });
}

test("the executor outlives a run it had to kill, and its process is gone", async () => {
  const pid = executor.pid;
  assert.ok(pid !== undefined);
  const r = await runSealed(program("c_loop", `import itertools\nsum(itertools.count())`), { timeout: 1 }, executor);
  assert.equal(r.exit.status, "limit");
  // SIGKILL was sent; the kernel takes it down (a loaded machine may take a moment).
  const gone = (): boolean => !existsSync(`/proc/${pid}/stat`) || readFileSync(`/proc/${pid}/stat`, "latin1").includes(") Z");
  for (let i = 0; i < 50 && !gone(); i++) await new Promise((r) => setTimeout(r, 100));
  assert.ok(gone(), "the killed process is gone");
  const next = await runSealed(program("after_kill", `print("alive")`), {}, executor);
  assert.equal(next.frames.at(-1)?.stdout, "alive\n");
  assert.notEqual(executor.pid, pid);
});

test("the worker refuses to run where a native binding cannot be cut off (process.binding, _linkedBinding, dlopen, each frozen before it starts)", () => {
  const root = join(import.meta.dirname, "..");
  const permission = process.allowedNodeEnvironmentFlags.has("--permission") ? "--permission" : "--experimental-permission";
  for (const name of ["binding", "_linkedBinding", "dlopen"]) {
    const preload = join(dir, `freeze-${name}.mjs`);
    writeFileSync(preload, `Object.defineProperty(process, ${JSON.stringify(name)}, { value: process[${JSON.stringify(name)}], configurable: false, writable: false });\n`);
    const r = spawnSync(
      process.execPath,
      [permission, `--allow-fs-read=${root}/*`, `--allow-fs-read=${preload}`, "--disallow-code-generation-from-strings", "--no-warnings", "--import", preload, join(root, "dist/sealed.mjs"), join(root, "node_modules/pyodide"), join(root, "adapter/python")],
      { stdio: ["ignore", "ignore", "pipe", "ignore", "pipe"], timeout: 30_000, env: {} },
    );
    assert.equal(r.status, 1, `${name}: ${String(r.stderr)}`);
    assert.match(String(r.output[4]), new RegExp(`"event":"failed".*process\\.${name} cannot be cut off`));
  }
});

test("the child runs with Electron's ASAR reading off (ELECTRON_NO_ASAR) and nothing else of this process's environment", async () => {
  await executor.warm();
  const pid = executor.pid;
  assert.ok(pid !== undefined);
  const env = readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").filter(Boolean);
  assert.deepEqual(env, ["ELECTRON_NO_ASAR=1"]);
});

test("the worker refuses to run anything when its process is not locked down (no permission model, code generation allowed)", () => {
  const root = join(import.meta.dirname, "..");
  const r = spawnSync(process.execPath, [join(root, "dist/sealed.mjs"), join(root, "node_modules/pyodide"), join(root, "adapter/python")], {
    stdio: ["ignore", "ignore", "pipe", "ignore", "pipe"],
    timeout: 30_000,
  });
  assert.equal(r.status, 1);
  assert.match(String(r.output[4]), /"event":"failed".*cannot be locked down: this Node has no permission model/);
});

test("the worker refuses to run where any one of its lock-down flags is loosened: each probe of its self-check, broken on purpose", () => {
  const root = join(import.meta.dirname, "..");
  const pyodide = join(root, "node_modules/pyodide");
  const python = join(root, "adapter/python");
  const worker = join(root, "dist/sealed.mjs");
  const permission = process.allowedNodeEnvironmentFlags.has("--permission") ? "--permission" : "--experimental-permission";
  // The parent's flags (real/sealed.ts), but for the one loosened.
  const locked = [permission, `--allow-fs-read=${pyodide}/*`, `--allow-fs-read=${python}/*`, `--allow-fs-read=${worker}`, "--disallow-code-generation-from-strings"];
  const loosened: [string, string[], RegExp][] = [
    ["code generation from strings", locked.filter((f) => f !== "--disallow-code-generation-from-strings"), /code generation from strings is allowed/],
    ["writing files", [...locked, "--allow-fs-write=*"], /the permission model allows fs\.write/],
    ["child processes", [...locked, "--allow-child-process"], /the permission model allows child/],
    ["workers", [...locked, "--allow-worker"], /the permission model allows worker/],
    ["reading any file", [...locked, "--allow-fs-read=*"], /the permission model allows fs\.read \/etc\/passwd/],
  ];
  for (const [what, flags, why] of loosened) {
    const r = spawnSync(process.execPath, [...flags, "--no-warnings", worker, pyodide, python, "256", "none"], {
      stdio: ["ignore", "ignore", "pipe", "ignore", "pipe"],
      env: { ELECTRON_NO_ASAR: "1" },
      timeout: 30_000,
    });
    assert.equal(r.status, 1, `${what}: ${String(r.stderr)}`);
    assert.match(String(r.output[4]), /"event":"failed".*the sandbox cannot be locked down/, what);
    assert.match(String(r.output[4]), why, what);
  }
  // And with the flags as given, loosened in nothing, the self-check passes: Pyodide loads and the
  // worker says it is ready (then ends: its request channel is closed).
  const ok = spawnSync(process.execPath, [...locked, "--no-warnings", worker, pyodide, python, "256", "none"], {
    stdio: ["ignore", "ignore", "pipe", "ignore", "pipe"],
    env: { ELECTRON_NO_ASAR: "1" },
    timeout: 30_000,
  });
  assert.match(String(ok.output[4]), /^\{"event":"ready"/, String(ok.stderr));
});

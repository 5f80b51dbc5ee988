// ndbg doctor: what inference can run on here and how fast. The platform, the CPU, the installed
// node-llama-cpp binaries, the GPUs and their driver, then every backend probed afresh (a child
// process loads the model and decodes: adapter/model/probe.ts) with its verdict, its reason and,
// where it works, a timed decode. The verdicts replace the cached ones sessions use. With an
// endpoint for --model, the server is probed instead, as a session would open it (served.ts).
import { availableParallelism, cpus, release } from "node:os";
import { readFile, stat } from "node:fs/promises";
import { basename } from "node:path";
import { threadsForSize } from "../../model/backend.js";
import { checkModelFile } from "../../model/gguf.js";
import { resolveModel } from "../../model/resolve.js";
import { isEndpoint, timeServer, type ServerInfo } from "../../model/endpoint.js";
import { openServed } from "../../model/served.js";
import { BACKENDS, gpuDevices, installedBinaries, verdictFile, verdictFor, type GpuDevice, type InstalledBinary, type Verdict } from "../../model/probe.js";
import { InputError, flags, guarded, positive } from "../args.js";
import { command } from "../flags.js";

const SPEC = command("doctor", "", [
  ["model", { value: "PATH|URI|http://HOST:PORT/v1", help: "the model each backend is probed with, or a model server to probe (default: the bundled model)" }],
  ["threads", { help: "CPU threads of the timed decode" }], ["timeout", { help: "seconds each probe may take" }],
  "json",
]);
export const { usage, help } = SPEC;
/** Its flags (flags.ts), for the check that its help lists each one it parses. */
export const specs = [SPEC];

export interface DoctorReport {
  platform: { os: string; arch: string; release: string; node: string };
  cpu: { model: string; cores: number; features?: string[] };
  binaries: (InstalledBinary & { fitsHere: boolean })[];
  gpus: GpuDevice[];
  /** The model the backends were probed with, and the CPU threads they decoded with. */
  model: string;
  threads: number;
  backends: Verdict[];
  /** Where sessions find these verdicts. */
  cache: string;
  /** With an endpoint for the model: the server, probed as a session opens it (no backend is probed). */
  server?: ServerVerdict;
}

export interface ServerVerdict {
  endpoint: string;
  ok: boolean;
  reason?: string;
  info?: ServerInfo;
  /** The dialects a session can use there; native only where the served GGUF's vocabulary is here. */
  dialects?: { native: true } | { native: false; why: string };
  timing?: { msPerToken: number; promptTokensPerSecond?: number; generated: number };
}

/** Opens the endpoint as a session would, then times a generation. */
async function probeServer(spec: string, timeoutMs: number): Promise<ServerVerdict> {
  try {
    const s = await openServed(spec, { apiKey: process.env.NDBG_API_KEY });
    const timing = await timeServer(s.endpoint, s.info, TIMED_TOKENS, timeoutMs);
    return { endpoint: s.endpoint.url, ok: true, info: s.info, dialects: s.vocab ? { native: true } : { native: false, why: s.noVocab ?? "" }, timing };
  } catch (e) {
    return { endpoint: spec, ok: false, reason: (e as Error).message };
  }
}

/** Tokens each backend generates for its timing: more than a session's probe, for a steadier figure. */
const TIMED_TOKENS = 64;

/** The CPU features llama.cpp's kernels are chosen by (x86 flags, Arm features), where /proc says. */
const FEATURES = ["sse4_2", "avx", "avx2", "fma", "f16c", "avx_vnni", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16", "amx_tile", "neon", "asimd", "asimddp", "i8mm", "sve", "sve2"];

async function cpuFeatures(): Promise<string[] | undefined> {
  const info = await readFile("/proc/cpuinfo", "utf8").catch(() => undefined);
  const line = info?.split("\n").find((l) => /^(flags|features)\s*:/i.test(l));
  if (!line) return undefined;
  const have = new Set(line.slice(line.indexOf(":") + 1).trim().split(/\s+/));
  return FEATURES.filter((f) => have.has(f));
}

/** The report; `threads` defaults to what a session on the CPU would use with this model. */
export async function doctor(opts: { model?: string; threads?: number; timeoutMs?: number; onBackend?: (v: Verdict) => void }): Promise<DoctorReport> {
  if (opts.model && isEndpoint(opts.model)) return doctorServer(opts.model, opts.timeoutMs ?? 60_000);
  const model = await resolveModel(opts.model).catch((e: Error) => {
    throw new InputError(e.message);
  });
  // A model llama.cpp cannot read would fail every probe and blame each backend for it.
  await checkModelFile(model).catch((e: Error) => {
    throw new InputError(e.message);
  });
  const threads = opts.threads ?? threadsForSize("cpu", (await stat(model)).size);
  const here = `${process.platform}-${process.arch}`;
  const features = await cpuFeatures();
  const report: DoctorReport = {
    platform: { os: process.platform, arch: process.arch, release: release(), node: process.version },
    cpu: { model: cpus()[0]?.model ?? "unknown", cores: availableParallelism(), ...(features ? { features } : {}) },
    binaries: (await installedBinaries()).map((b) => ({ ...b, fitsHere: b.name === here || b.name.startsWith(`${here}-`) })),
    gpus: await gpuDevices(),
    model,
    threads,
    backends: [],
    cache: verdictFile(),
  };
  // One at a time: probes on the same device would slow each other's timings.
  for (const backend of BACKENDS) {
    const v = await verdictFor(backend, model, { fresh: true, threads, tokens: TIMED_TOKENS, ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}) });
    opts.onBackend?.(v);
    report.backends.push(v);
  }
  return report;
}

async function doctorServer(spec: string, timeoutMs: number): Promise<DoctorReport> {
  const features = await cpuFeatures();
  return {
    platform: { os: process.platform, arch: process.arch, release: release(), node: process.version },
    cpu: { model: cpus()[0]?.model ?? "unknown", cores: availableParallelism(), ...(features ? { features } : {}) },
    binaries: [],
    gpus: [],
    model: spec,
    threads: 0,
    backends: [],
    cache: verdictFile(),
    server: await probeServer(spec, timeoutMs),
  };
}

export function serverLines(v: ServerVerdict): string[] {
  if (!v.ok || !v.info || !v.timing) return [`server    ${v.endpoint} fails: ${v.reason}`];
  const i = v.info;
  const t = v.timing;
  return [
    `server    ${v.endpoint}: ${i.kind}${i.build ? ` ${i.build}` : ""}, model ${i.model}${i.contextSize ? `, ${i.contextSize}-token context per session` : ""}${i.slots ? `, ${i.slots} slot${i.slots === 1 ? "" : "s"}` : ""}`,
    `  works: ${t.msPerToken.toFixed(2)} ms/token${t.promptTokensPerSecond ? `, ${Math.round(t.promptTokensPerSecond)} prompt tokens/s` : ""} (${t.generated} tokens timed)`,
    `  dialects: instruct${v.dialects?.native ? ", native" : `; not native: ${v.dialects && !v.dialects.native ? v.dialects.why : ""}`}`,
  ];
}

const pad = (s: string, n: number): string => s + " ".repeat(Math.max(1, n - s.length));

export function verdictLine(v: Verdict): string {
  const t = v.timing;
  const speed = t ? `${t.msPerToken.toFixed(2)} ms/token, ${Math.round(t.promptTokensPerSecond)} prompt tokens/s` : "";
  const on = v.devices?.length ? ` on ${v.devices.join(", ")}` : "";
  return `${pad(v.backend, 8)}${v.ok ? `works${on}: ${speed}` : `fails: ${v.reason}`}`;
}

export function formatReport(r: DoctorReport): string {
  if (r.server)
    return [
      `platform  ${r.platform.os} ${r.platform.arch} (${r.platform.release}), Node ${r.platform.node}`,
      ...serverLines(r.server),
      "",
    ].join("\n");
  const bins = r.binaries.map((b) => `${b.name} ${b.version}${b.llamaCpp ? ` (llama.cpp ${b.llamaCpp})` : ""}${b.fitsHere ? "" : " [other platform]"}`);
  const gpus = r.gpus.length ? r.gpus.map((g) => `${g.name}, driver ${g.driver}${g.memoryMiB ? `, ${Math.round(g.memoryMiB / 1024)} GiB` : ""}`) : ["none found (no NVIDIA driver tools here)"];
  return [
    `platform  ${r.platform.os} ${r.platform.arch} (${r.platform.release}), Node ${r.platform.node}`,
    `cpu       ${r.cpu.model}, ${r.cpu.cores} core${r.cpu.cores === 1 ? "" : "s"}${r.cpu.features ? `; ${r.cpu.features.join(" ") || "no SIMD features listed"}` : ""}`,
    `binaries  ${bins.join("\n          ") || "none installed"}`,
    `gpus      ${gpus.join("\n          ")}`,
    `backends  (probed with ${basename(r.model)}, ${r.threads} thread${r.threads === 1 ? "" : "s"})`,
    ...r.backends.map((v) => "  " + verdictLine(v)),
    `verdicts saved for sessions in ${r.cache}`,
    "",
  ].join("\n");
}

export function run(argv: string[]): Promise<number> {
  return guarded("doctor", usage, async () => {
    const { values } = flags(argv, SPEC);
    const threads = values.threads === undefined ? undefined : positive("--threads", values.threads, true);
    const timeout = values.timeout === undefined ? undefined : positive("--timeout", values.timeout, false) * 1000;
    const report = await doctor({
      ...(values.model !== undefined ? { model: values.model } : {}),
      ...(threads ? { threads } : {}),
      ...(timeout ? { timeoutMs: timeout } : {}),
      onBackend: (v: Verdict) => process.stderr.write(`ndbg doctor: ${v.backend} ${v.ok ? "works" : "fails"}\n`),
    });
    process.stdout.write(values.json ? JSON.stringify(report) + "\n" : formatReport(report));
    // Success when something can run the model.
    return report.server ? (report.server.ok ? 0 : 1) : report.backends.some((v) => v.ok) ? 0 : 1;
  });
}

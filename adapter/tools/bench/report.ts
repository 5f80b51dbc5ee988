// The bench result as a readable table (the JSON object carries the same figures).
import type { BenchResult } from "./run.js";

const f = (x: number | undefined, d = 1): string => (x === undefined || !Number.isFinite(x) ? "-" : x.toFixed(d));
const pad = (s: string, n: number): string => s.padStart(n);

export function formatReport(r: BenchResult): string {
  const m = r.model;
  const out: string[] = [];
  out.push(
    m
      ? `model ${m.name} (${m.dialect}) on ${m.device}, ${m.threads} thread${m.threads === 1 ? "" : "s"}, ${(m.params / 1e6).toFixed(2)}M params, ` +
          `${(m.fileBytes / 1e6).toFixed(1)} MB, context ${m.contextSize}; debugpy with ${r.settings.python}`
      : `no model call (predict mode's sealed run); debugpy with ${r.settings.python}`,
  );
  out.push(`machine: ${r.machine.cpus} CPUs (${r.machine.cpuModel}), load average ${r.machine.loadavg.join(" ")} before, ${r.machine.loadavgAfter.join(" ")} after`);
  out.push("");
  out.push("DAP round trips, ms: request -> response, request -> stopped event (median, p90); ok: moves that gave a state");
  const cols: [string, number][] = [
    ["n", 5], ["resp", 7], ["stop", 9], ["p90", 9], ["ok stop", 9], ["tok/step", 9], ["tok/s", 7], ["fail", 5], ["|", 2],
    ["n", 5], ["resp", 7], ["stop", 9], ["p90", 9], ["|", 2], ["ratio", 7], ["p90", 7],
  ];
  out.push("".padEnd(9) + pad("neural (predict)", 60) + pad("debugpy", 32) + pad("neural/debugpy", 16));
  out.push("action".padEnd(9) + cols.map(([h, w]) => pad(h, w)).join(""));
  const row = (name: string, a: BenchResult["all"]): string => {
    const n = a.neural;
    const d = a.debugpy;
    const cells = [
      String(n.n), f(n.response.median), f(n.stop.median), f(n.stop.p90), f(n.ok?.median), f(n.tokensPerStep), f(n.tokensPerSecond, 0), String(n.failed), "|",
      String(d.n), f(d.response.median), f(d.stop.median), f(d.stop.p90), "|", f(a.ratio, 2), f(a.ratioP90, 2),
    ];
    return name.padEnd(9) + cells.map((c, i) => pad(c, cols[i][1])).join("");
  };
  for (const [name, a] of Object.entries(r.actions)) out.push(row(name, a));
  out.push(row("all", r.all));
  if (r.all.cpuRatio !== undefined) {
    out.push("CPU time per move, ms (median): " + [...Object.entries(r.actions), ["all", r.all] as const]
      .map(([name, a]) => `${name} ${f(a.neural.cpu?.median)} vs ${f(a.debugpy.cpu?.median)} (${f(a.cpuRatio, 2)})`).join(", "));
  }
  out.push("");
  out.push(`inspect (stackTrace+scopes+variables): neural ${f(r.inspect.neural.median)} ms, debugpy ${f(r.inspect.debugpy.median)} ms (median)`);
  out.push(`tokens: ${f(r.tokens.perStep)} generated per step (${f(r.tokens.perCall)} per model call), ${f(r.tokens.evaluatedPerStep)} prompt tokens evaluated per step, ${f(r.tokens.perSecond, 0)} tokens/s while generating` +
    (r.tokens.drafts.validated + r.tokens.drafts.refuted ? `; speculative drafts ${r.tokens.drafts.validated} accepted, ${r.tokens.drafts.refuted} rejected` : ""));
  out.push(
    `first stop after launch: neural ${f(r.launch.neural.cold.median, 0)} ms with ${m ? "model load" : "the sealed CPython's load"} (spawn to stop ${f(r.launch.neural.cold.spawnToStop, 0)}), ` +
      `${f(r.launch.neural.warm.median, 0)} ms warm (restart in the same adapter); debugpy ${f(r.launch.debugpy.cold.median, 0)} ms (spawn to stop ${f(r.launch.debugpy.cold.spawnToStop, 0)})`,
  );
  out.push(`peak memory (VmHWM): neural adapter ${f(r.memory.neural.adapter)} MB; debugpy adapter ${f(r.memory.debugpy.adapter)} MB + program ${f(r.memory.debugpy.program)} MB`);
  out.push("");
  out.push(`growth with session length (next, median of the moves around each position), ms:`);
  const g = r.growth;
  out.push("position".padEnd(10) + g.positions.map((p) => pad(String(p), 10)).join("") + pad("last/first", 12));
  const gline = (name: string, pts: BenchResult["growth"]["neural"], ratio: number): string =>
    name.padEnd(10) + g.positions.map((p) => pad(f(pts.find((x) => x.position === p)?.stop), 10)).join("") + pad(f(ratio, 2), 12);
  out.push(gline("neural", g.neural, g.ratio.neural));
  out.push(gline("debugpy", g.debugpy, g.ratio.debugpy));
  if (g.cpuRatio) {
    out.push("cpu neural".padEnd(10) + g.positions.map((p) => pad(f(g.neural.find((x) => x.position === p)?.cpu), 10)).join("") + pad(f(g.cpuRatio.neural, 2), 12));
    out.push("cpu dbgpy".padEnd(10) + g.positions.map((p) => pad(f(g.debugpy.find((x) => x.position === p)?.cpu), 10)).join("") + pad(f(g.cpuRatio.debugpy, 2), 12));
  }
  for (const side of ["neural", "debugpy"] as const) {
    const sp = g.spans[side];
    out.push(
      `${side} over stretches: moves ${sp.first.from}-${sp.first.to} ${f(sp.first.stop.median)} ms (cpu ${f(sp.first.cpu?.median)}), ` +
        `moves ${sp.last.from}-${sp.last.to} ${f(sp.last.stop.median)} ms (cpu ${f(sp.last.cpu?.median)}, p90 ${f(sp.last.cpu?.p90)})`,
    );
  }
  out.push("model ms".padEnd(10) + g.positions.map((p) => pad(f(g.neural.find((x) => x.position === p)?.modelMs), 10)).join(""));
  out.push("prompt".padEnd(10) + g.positions.map((p) => pad(f(g.neural.find((x) => x.position === p)?.promptTokens, 0), 10)).join("") + "   tokens in the prompt");
  out.push("evaluated".padEnd(10) + g.positions.map((p) => pad(f(g.neural.find((x) => x.position === p)?.evaluatedTokens, 0), 10)).join("") + "   prompt tokens evaluated");
  out.push("");
  const l = r.limit;
  if (l) {
    out.push(
      `physical limit: ${(l.weightBytesPerToken / 1e6).toFixed(2)} MB of weights per token x ${f(l.tokensPerFrame)} tokens per frame / ${f(l.bandwidthGBs)} GB/s = ${f(l.stepMs, 2)} ms ` +
        `(${f(l.stepMsWithKv, 2)} ms with the KV cache; ${f(l.stepMsAtCacheBandwidth, 2)} ms at the ${f(l.cacheBandwidthGBs)} GB/s the caches give at the model's size)`,
    );
    out.push(`measured: model ${f(l.measuredModelMs)} ms per call, next ${f(l.measuredStepMs)} ms over DAP = ${f(l.ratio)}x the limit`);
  }
  for (const n of r.notes) out.push(`note: ${n}`);
  return out.join("\n") + "\n";
}

"""The whole training route in one command, for a GPU machine's short window (or a CPU rehearsal):
programs on every core, sessions, tokens, training for a time budget, an f16 GGUF in parts.

  python3 -m training.pipeline --out DIR --node NODE --python PY [--python-home HOME]
      [--init MODEL.gguf | --config base] --minutes M [--sets 14 --programs 40000]
      [--realcode training/data/realcode.jsonl --realcode-samples 40] [--exclude CORPUS ...]
      [--sessions SESSIONS.jsonl.xz ...] [--second-python python3 --second-sets 4]

Stages, each timed into DIR/timings.json (written after every stage, so a cut run still tells):
1. programs: `--sets` sets of `--programs` generated programs (training/programs.py, seeds
   seed+1 .., `--style`, up to `--raising` of them calls that end in an exception), all at once on
   every core, each run by the traced Python, excluding the held-out programs and every `--exclude` corpus;
   with each set, `--scripts` user-style scripts (training/scripts.py: classes, methods, dataclasses,
   module-level code, exceptions across calls, prints; a folder of its own, run whole), and 100
   held-out scripts of a seed no set uses, for the evaluation loss.
2. realcode: the real-code corpus (`--realcode`, training/realcode.py: functions and, run whole,
   scripts made of docstrings) re-printed in the layout the adapter shows the model
   (adapter/python/canonical.py), so training sees what users' code becomes at inference.
3. sessions: `ndbg data` on each set (and `--realcode-samples` sessions per real program), in
   parallel; also the held-out sessions the trainer's evaluation loss reads (generated, real code,
   real scripts `e-realscripts`, user-style scripts).
   With `--second-python`, sessions of the first `--second-sets` sets and of the real code (half
   as many) traced by that interpreter too, where it is another minor version. With `--hidden K`
   (default 6), hidden-callee sessions of every set and of the real code (training/hidden.py: the
   entry's call of a helper whose body reads `...`, stepped over; K samples a program, those that
   never leave the entry's frame kept), and of the real-code held-out for the evaluation loss
   (`e-hidden`).
4. train: `training.train` on all of it, and on `--sessions` files made elsewhere (`--init`
   continues a model), `--minutes` of training; with more than one GPU, one process on each under
   torchrun (`--nproc`; each takes `--batch-tokens` of every step's global batch).
5. export: an f16 (or `--export-type q8_0`) GGUF cut into parts of at most `--part-mib` MiB with a manifest
   (`python3 -m training.gguf --join DIR/export/model.f16.json --type q8_0 --card` puts it together
   again where the model ships); beside it, where the trainer's best weights (the lowest held-out
   real-code loss, training.train --best-on) are of an earlier step than the last, best.f16.gguf the
   same way. timings.json says which step each is and the held-out losses at each evaluation.

The traced Python (`--python`) is the one whose traces the model learns: its minor version goes
into every session's header (`#ndbg 2 python3.12`, docs/TRAJECTORY.md) and the timings. Traces
differ between versions (3.12 runs list comprehensions in no frame of their own), so a model
learns each version it is to predict: `--second-python` traces part of the data with another
interpreter on the same machine, `--sessions` adds sessions made elsewhere (`ndbg data --python
python3.12 ...`), and the model is written
knowing every version its data names (ndbg.train.python_versions; the bundled model: 3.11
only). `--python-home` sets PYTHONHOME and LD_LIBRARY_PATH for it and its children only (a
relocated copy of an interpreter), never for this process. Node needs `dist/ndbg.js` (npm run build) and
node_modules/web-tree-sitter beside it.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from training.gguf import split_file  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
INVERSE_CALL = "0.2"
MIX = ("step_into=0.26,step_over=0.20,step_return=0.12,breakpoint=0.14,continue=0.02,"
       "inv_step_into=0.06,inv_step_over=0.07,inv_step_return=0.07,inv_breakpoint=0.06")


HELDOUT_SCRIPTS_SEED = 999_983  # the held-out scripts' seed: no set's (seed + i)
STAGES = ("check", "programs", "realcode", "sessions", "train", "export")


class PipelineError(Exception):
    pass


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="python3 -m training.pipeline", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--node", default="node", help="Node binary that runs dist/ndbg.js")
    ap.add_argument("--python", default=sys.executable, help="the Python whose traces the model learns")
    ap.add_argument("--python-home", help="PYTHONHOME of --python (a relocated interpreter); its lib/ goes on LD_LIBRARY_PATH")
    ap.add_argument("--config", default="base")
    ap.add_argument("--init", metavar="GGUF", help="continue this model (its architecture and tokenizer)")
    ap.add_argument("--minutes", type=float, help="training time")
    ap.add_argument("--steps", type=int, help="training steps (the rehearsal)")
    ap.add_argument("--lr", type=float)
    ap.add_argument("--warmup", type=int)
    ap.add_argument("--batch-tokens", type=int)
    ap.add_argument("--eval-every", type=int, help="steps between held-out evaluations (default: the config's)")
    ap.add_argument("--best-on", default="auto", help="training.train --best-on: the held-out set whose loss picks the best weights")
    ap.add_argument("--sets", type=int, default=14)
    ap.add_argument("--programs", type=int, default=40000, help="programs per set")
    ap.add_argument("--raising", type=float, default=0.1,
                    help="share of generated lines that may end in an exception (programs.py --raising)")
    ap.add_argument("--scripts", type=int, default=1500,
                    help="user-style scripts with each set (training/scripts.py), run whole; 0: none")
    ap.add_argument("--style", choices=("real", "classic"), default="real",
                    help="the generator's mix (programs.py --style): classic made the bundled model's data")
    ap.add_argument("--seed", type=int, default=100, help="sets use seed+1, seed+2, ...")
    ap.add_argument("--heldout", default=str(REPO / "training/data/heldout.jsonl"), help="held-out generated programs")
    ap.add_argument("--heldout-programs", type=int, default=200, help="of them, sampled for the evaluation loss")
    ap.add_argument("--exclude", action="append", default=[], help="corpus never to generate (CRUXEval); repeatable")
    ap.add_argument("--no-exclude", action="store_true", help="the rehearsal only: generate without an excluded corpus")
    ap.add_argument("--realcode", help="real-code training corpus (training/realcode.py)")
    ap.add_argument("--realcode-heldout", default=str(REPO / "training/heldout/realcode.jsonl"))
    ap.add_argument("--realcode-heldout-scripts", default=str(REPO / "training/heldout/realcode-scripts.jsonl"),
                    help="held-out real scripts (training/realcode.py --out-heldout-scripts): the e-realscripts loss")
    ap.add_argument("--realcode-samples", type=int, default=40, help="sessions per real program")
    ap.add_argument("--sessions", action="append", default=[],
                    help="sessions made elsewhere (`ndbg data`, e.g. by another Python version) to train on too; repeatable")
    ap.add_argument("--second-python", help="an interpreter of another minor version (the machine's own, run without --python-home)")
    ap.add_argument("--second-sets", type=int, default=4, help="of the sets, those it traces too (and the real code, half as often)")
    ap.add_argument("--samples-per-program", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=6,
                    help="hidden-callee sessions (training/hidden.py): samples per program with a helper; 0: none")
    ap.add_argument("--mix", default=MIX)
    ap.add_argument("--inverse-call", default=INVERSE_CALL)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--threads", type=int, default=4, help="training's CPU threads, shared among its processes")
    ap.add_argument("--nproc", type=int, help="training processes, one per GPU (torchrun, DistributedDataParallel; "
                    "--batch-tokens is each one's): default every CUDA GPU found, 1 with --device cpu")
    ap.add_argument("--attention", default="segments")
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--name", help="model name")
    ap.add_argument("--part-mib", type=float, default=15)
    ap.add_argument("--export-type", choices=("f16", "q8_0"), default="f16",
                    help="q8_0 where the parts must be small (a lease returns at most 8 files of 16 MiB)")
    ap.add_argument("--stages", default=",".join(STAGES),
                    help=f"the stages to run, of {','.join(STAGES)} (later ones read what earlier runs left in --out)")
    return ap.parse_args(argv)


class Run:
    def __init__(self, a):
        self.a = a
        self.out = Path(a.out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.timings: dict = {"stages": {}}
        self.traced_env = dict(os.environ)
        if a.python_home:
            home = str(Path(a.python_home).resolve())
            self.traced_env["PYTHONHOME"] = home
            self.traced_env["LD_LIBRARY_PATH"] = ":".join(x for x in (home + "/lib", os.environ.get("LD_LIBRARY_PATH")) if x)

    def stage(self, name: str, fn):
        t0 = time.time()
        print(f"== {name}", flush=True)
        info = fn() or {}
        self.timings["stages"][name] = {"seconds": round(time.time() - t0, 1), **info}
        (self.out / "timings.json").write_text(json.dumps(self.timings, indent=1))
        print(f"== {name}: {self.timings['stages'][name]}", flush=True)

    def sh(self, cmd: list[str], env=None, log: Path | None = None) -> None:
        with open(log, "w") if log else open(os.devnull, "w") as f:
            r = subprocess.run(cmd, env=env, stdout=f, stderr=subprocess.STDOUT if log else None, cwd=REPO)
        if r.returncode:
            tail = log.read_text()[-800:] if log else ""
            raise PipelineError(f"{' '.join(map(str, cmd[:4]))} ... exited {r.returncode}\n{tail}")

    def parallel(self, jobs: list[tuple[list[str], dict | None, Path]]) -> None:
        with ThreadPoolExecutor(max(1, min(self.a.workers, len(jobs)))) as pool:
            for f in [pool.submit(self.sh, cmd, env, log) for cmd, env, log in jobs]:
                f.result()

    # -- stages --

    def check(self):
        v = subprocess.run([self.a.python, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
                           env=self.traced_env, capture_output=True, text=True)
        if v.returncode:
            raise PipelineError(f"the traced Python does not run: {v.stderr.strip()[-300:]}")
        n = subprocess.run([self.a.node, "--version"], capture_output=True, text=True)
        if n.returncode:
            raise PipelineError(f"node does not run: {n.stderr.strip()[-300:]}")
        if not (REPO / "dist/ndbg.js").exists():
            raise PipelineError("dist/ndbg.js is missing: npm run build")
        missing = [s for s in self.a.sessions if not Path(s).is_file()]
        if missing:
            raise PipelineError(f"--sessions {missing[0]} is missing")
        return {"traced_python": v.stdout.strip(), "node": n.stdout.strip(), "cores": os.cpu_count(),
                **({"second_python": self.second_version(v.stdout.strip())} if self.a.second_python else {})}

    def second_version(self, traced: str) -> str | None:
        """--second-python's version when it runs and is another minor version than the traced Python's, else None."""
        v = subprocess.run([self.a.second_python, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
                           capture_output=True, text=True)
        if v.returncode or v.stdout.strip().rsplit(".", 1)[0] == traced.rsplit(".", 1)[0]:
            print(f"no second version: {self.a.second_python} is {v.stdout.strip() or 'not runnable'}", flush=True)
            return None
        return v.stdout.strip()

    def programs(self):
        a = self.a
        excl = [x for e in a.exclude for x in ("--exclude", e)]
        if not excl and not a.no_exclude:
            raise PipelineError("give --exclude CORPUS (the evaluation benchmark) or, for a rehearsal, --no-exclude")
        if Path(a.heldout).exists():
            excl += ["--exclude", a.heldout]
        elif not a.no_exclude:
            raise PipelineError(f"{a.heldout} is missing: the held-out programs must be excluded from generation")
        jobs = []
        for i in range(1, a.sets + 1):
            out = self.out / f"p{i}.jsonl"
            jobs.append(([a.python, "training/programs.py", "--count", str(a.programs), "--seed", str(a.seed + i), "--style", a.style, "--raising", str(a.raising),
                          "--python", a.python, "--out", str(out), "--quiet", *(excl or ["--no-exclude"])],
                         self.traced_env, self.out / f"p{i}.log"))
        if a.scripts:
            for i in range(1, a.sets + 1):
                jobs.append(([a.python, "-m", "training.scripts", "--count", str(a.scripts), "--seed", str(a.seed + i),
                              "--raising", str(a.raising), "--out", str(self.out / f"sc{i}")], self.traced_env, self.out / f"sc{i}.log"))
            # held out: a seed no set uses (sets take seed+1 ..)
            jobs.append(([a.python, "-m", "training.scripts", "--count", "100", "--seed", str(HELDOUT_SCRIPTS_SEED),
                          "--raising", str(a.raising), "--out", str(self.out / "sc-heldout")], self.traced_env, self.out / "sc-heldout.log"))
        self.parallel(jobs)
        return {"sets": a.sets, "programs": a.sets * a.programs, **({"scripts": a.sets * a.scripts} if a.scripts else {})}

    def realcode(self):
        src = Path(self.a.realcode)
        if not src.exists():
            raise PipelineError(f"{src} is missing (training/realcode.py builds it; training/DATA.md)")
        n = 0
        for name, path in (("rc", src), ("rc-heldout", Path(self.a.realcode_heldout)),
                           ("rc-scripts-heldout", Path(self.a.realcode_heldout_scripts))):
            if not path.exists():
                continue
            self.sh([self.a.python, str(REPO / "training/canonical_programs.py"), str(path), str(self.out / f"{name}.jsonl")],
                    self.traced_env, self.out / f"{name}.log")
            n += sum(1 for _ in open(self.out / f"{name}.jsonl"))
        return {"programs": n}

    def sessions(self):
        a = self.a
        data = ["data", "--mix", a.mix, "--inverse-call", a.inverse_call]
        node = [a.node, str(REPO / "dist/ndbg.js"), *data, "--python", a.python]
        jobs, train, ev = [], [], []
        # (output name, programs, sessions per program, the command's head, its environment)
        sets = [(f"p{i}", f"p{i}.jsonl", a.samples_per_program, node, self.traced_env) for i in range(1, a.sets + 1)]
        scripts = [i for i in range(1, a.sets + 1) if (self.out / f"sc{i}").is_dir()]
        sets += [(f"sc{i}", f"sc{i}", a.samples_per_program, node, self.traced_env) for i in scripts]
        if a.realcode:
            sets.append(("rc", "rc.jsonl", a.realcode_samples, node, self.traced_env))
        second = self.timings["stages"].get("check", {}).get("second_python") if a.second_python else None
        if second:
            # The machine's own interpreter: its own environment, not the relocated one's.
            node2 = [a.node, str(REPO / "dist/ndbg.js"), *data, "--python", a.second_python]
            sets += [(f"s2-p{i}", f"p{i}.jsonl", a.samples_per_program, node2, None) for i in range(1, min(a.second_sets, a.sets) + 1)]
            sets += [(f"s2-sc{i}", f"sc{i}", a.samples_per_program, node2, None) for i in scripts if i <= a.second_sets]
            if a.realcode:
                sets.append(("s2-rc", "rc.jsonl", max(1, a.realcode_samples // 2), node2, None))
        for i, (name, programs, k, head, env) in enumerate(sets):
            out = self.out / f"d-{name}.jsonl"
            jobs.append((head + ["--programs", str(self.out / programs), "--out", str(out),
                                 "--samples-per-program", str(k), "--seed", str(a.seed * 10 + i)], env, self.out / f"d-{name}.log"))
            train.append(out)
        if a.hidden:
            hid = [(f"hid-p{i}", self.out / f"p{i}.jsonl") for i in range(1, a.sets + 1)]
            if a.realcode:
                hid.append(("hid-rc", self.out / "rc.jsonl"))
            if (self.out / "rc-heldout.jsonl").exists():
                hid.append(("e-hidden", self.out / "rc-heldout.jsonl"))
            for i, (name, src) in enumerate(hid):
                out = self.out / (f"{name}.jsonl" if name.startswith("e-") else f"d-{name}.jsonl")
                jobs.append(([a.python, "-m", "training.hidden", "--programs", str(src), "--out", str(out), "--node", a.node,
                              "--python", a.python, "--samples-per-program", str(a.hidden), "--seed", str(a.seed * 10 + 500 + i)],
                             self.traced_env, self.out / f"{name}.log"))
                (ev if name.startswith("e-") else train).append(out)
        held = [(Path(a.heldout), "e-generated", a.heldout_programs)]
        if (self.out / "rc-heldout.jsonl").exists():
            held.append((self.out / "rc-heldout.jsonl", "e-realcode", 10**9))
        if (self.out / "rc-scripts-heldout.jsonl").exists():
            held.append((self.out / "rc-scripts-heldout.jsonl", "e-realscripts", 10**9))
        if (self.out / "sc-heldout").is_dir():
            held.append((self.out / "sc-heldout", "e-scripts", 10**9))
        for src, name, limit in held:
            if src.exists():
                out = self.out / f"{name}.jsonl"
                jobs.append((node + ["--programs", str(src), "--out", str(out), "--samples-per-program", "1", "--seed", "7",
                                     "--limit", str(limit)], self.traced_env, self.out / f"{name}.log"))
                ev.append(out)
        self.parallel(jobs)
        empty = [p.name for p in train + ev if not p.stat().st_size]  # hidden-callee sessions of a set with no helper
        train, ev = [p for p in train if p.stat().st_size], [p for p in ev if p.stat().st_size]
        if empty:
            print(f"no sessions in {', '.join(empty)}: left out", flush=True)
        self.train_files, self.eval_files = train, ev
        return {"sessions": {p.name: sum(1 for _ in open(p)) for p in train + ev}}

    def train(self):
        a = self.a
        if not hasattr(self, "train_files"):  # sessions made by an earlier run into the same folder
            self.train_files = [p for p in sorted(self.out.glob("d-*.jsonl")) if p.stat().st_size]
            self.eval_files = [p for p in sorted(self.out.glob("e-*.jsonl")) if p.stat().st_size]
            if not self.train_files:
                raise PipelineError(f"no sessions in {self.out}: run the sessions stage first")
        nproc = a.nproc or gpus(a.device)
        cmd = [*trainer(nproc), "--out", str(self.out / "run"), "--config", a.config,
               "--device", a.device, "--threads", str(max(1, a.threads // nproc)), "--attention", a.attention]
        for p in [*self.train_files, *self.a.sessions]:
            cmd += ["--data", str(p)]
        for p in self.eval_files:
            cmd += ["--eval", str(p)]
        for flag, v in (("--init", a.init), ("--minutes", a.minutes), ("--steps", a.steps), ("--lr", a.lr),
                        ("--warmup", a.warmup), ("--batch-tokens", a.batch_tokens), ("--name", a.name),
                        ("--eval-every", a.eval_every), ("--best-on", a.best_on)):
            if v is not None:
                cmd += [flag, str(v)]
        if a.compile:
            cmd.append("--compile")
        self.sh(cmd, None, self.out / "train.log")
        log = [json.loads(l) for l in open(self.out / "run/log.jsonl")]
        done = [r for r in log if r.get("event") == "done"][-1]
        # the held-out curve of this run (the log may hold earlier runs' lines before its last start)
        start = max(i for i, r in enumerate(log) if r.get("event") == "start")
        curve = [{"step": r["step"], "eval_loss": r["eval_loss"], **({"eval_losses": r["eval_losses"]} if "eval_losses" in r else {})}
                 for r in log[start:] if "eval_loss" in r and "step" in r]
        best = [r for r in log[start:] if r.get("event") == "best"]
        return {"processes": nproc, **{k: done[k] for k in ("steps", "tokens_seen", "train_minutes", "eval_loss", "eval_losses", "device", "format_version",
                                        "python_versions", "best_step", "best_run_step", "best_on", "best_loss") if k in done},
                "run_steps": max((r["step"] for r in log[start:] if isinstance(r.get("step"), int)), default=0), "curve": curve,
                **({"best_at": [{"step": r["step"], "loss": r["loss"]} for r in best]} if best else {})}

    def export(self):
        """The last weights as model.TYPE.gguf in parts; the best ones (best.json) as best.TYPE.gguf where they are of
        an earlier step. Each model's step is in its GGUF's stats and in what this stage returns."""
        run = self.out / "run"
        (self.out / "export").mkdir(exist_ok=True)
        for old in (self.out / "export").glob("*"):
            old.unlink()
        weights = [("model", "last")]
        last = json.loads((run / "model.json").read_text())["meta"].get("stats", {})
        best = json.loads((run / "best.json").read_text())["meta"].get("stats", {}) if (run / "best.json").exists() else None
        info: dict = {"last": {k: last[k] for k in ("steps", "eval_loss") if k in last}}
        if best is not None:
            info["best"] = {k: best[k] for k in ("steps", "best_run_step", "best_on", "best_loss") if k in best}
            if best.get("steps") != last.get("steps"):
                weights.append(("best", "best"))
            else:
                info["best"]["same_as_last"] = True
        parts = []
        for name, _ in weights:
            gguf = self.out / f"export/{name}.{self.a.export_type}.gguf"
            self.sh([sys.executable, "-m", "training.gguf", "--weights", str(run), "--name", name, "--type", self.a.export_type,
                     "--out", str(gguf)], None, self.out / f"export-{name}.log")
            parts += split_file(gguf, int(self.a.part_mib * 2**20))
            gguf.unlink()
        return {"parts": [p.name for p in parts], **info}


def gpus(device: str) -> int:
    """The CUDA GPUs training can use (1 where there is none, or with --device cpu): asked of PyTorch in a
    process of its own, as this one never imports it."""
    if device == "cpu":
        return 1
    r = subprocess.run([sys.executable, "-c", "import torch; print(torch.cuda.device_count())"], capture_output=True, text=True)
    return max(1, int(r.stdout.strip())) if r.returncode == 0 and r.stdout.strip().isdigit() else 1


def trainer(nproc: int) -> list[str]:
    """The command that starts training: one process, or one per GPU under torchrun (--standalone: the
    rendezvous of this machine alone)."""
    if nproc <= 1:
        return [sys.executable, "-m", "training.train"]
    return [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(nproc), "-m", "training.train"]


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv if argv is not None else sys.argv[1:])
    stages = [x.strip() for x in a.stages.split(",") if x.strip()]
    unknown = [x for x in stages if x not in STAGES]
    if unknown:
        print(f"error: unknown stages {unknown} (stages: {', '.join(STAGES)})", file=sys.stderr)
        return 2
    if "train" in stages and not a.minutes and not a.steps:
        print("error: give --minutes (or --steps)", file=sys.stderr)
        return 2
    run = Run(a)
    previous = run.out / "timings.json"
    if previous.exists():  # a run in parts: keep the earlier stages' timings
        run.timings = json.loads(previous.read_text())
    try:
        for name in stages:
            if name == "realcode" and not a.realcode:
                continue
            run.stage(name, getattr(run, name))
            if name == "check":
                run.timings["traced_python"] = run.timings["stages"]["check"]["traced_python"]
    except PipelineError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    finally:
        run.timings["total_seconds"] = round(sum(st["seconds"] for st in run.timings["stages"].values()), 1)
        (run.out / "timings.json").write_text(json.dumps(run.timings, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

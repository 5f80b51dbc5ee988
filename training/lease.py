"""A GPU lease in one call: what to send, and what to run there so that the lease ends with a model.

  python3 -m training.lease pack [--out .lease/bundle.tar.xz] [--python PY] [--node NODE]
      [--realcode training/data/realcode.jsonl] [--heldout training/data/heldout.jsonl]
      [--exclude ../shared/data/cruxeval.jsonl]
  python3 -m training.lease run --bundle .lease/bundle.tar.xz --out "$OUT" --total-minutes 8.8 --seed 300
      [--init models/ndbg-base-28m.q8_0.gguf] [--sets 10 --programs 10000 --scripts 1000 --hidden 6] [--second-python python3]

A lease is short (device time is counted from the machine's start, and one command runs at most
10 minutes), the machine has no Node, no network and another Python than the one whose traces the
model learns, and only the repository's tracked files travel with a command. `pack` runs here and
puts everything else the route needs into one .tar.xz (about 35 MB): this machine's Node, a
relocated copy of the traced Python (binary, libpython, the stdlib without its tests and
site-packages), dist/, node_modules/web-tree-sitter, the real-code corpus, the generated held-out
programs and the evaluation benchmark (for exclusion only). `run` runs there, in the command that
carries the bundle: it unpacks it, makes the data on every core (training.pipeline's programs,
realcode and sessions stages; with `--second-python`, the pipeline's sessions of some sets traced by the machine's
own interpreter too, so the model learns a second Python version), gives training what is left of
`--total-minutes` after the data and a reserve for tokenizing and export (on every GPU it finds: the
pipeline starts one training process per GPU under torchrun), and leaves the model in
`--out` as parts of at most 15 MiB with their manifest, beside timings.json and the logs' tails: what
comes back from the machine (at most 8 files of 16 MiB). Two models come back: the last weights
(model.q8_0.*) and, where it is of an earlier step, the best (best.q8_0.*: the lowest held-out
real-code loss of any evaluation, training.train --best-on); timings.json and lease.log name each
one's step and hold the held-out curve. Here, `python3 -m training.gguf --join OUT/model.q8_0.json
--type q8_0 --out models/NAME.q8_0.gguf --card` (and OUT/best.q8_0.json) checks and joins the parts.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# stdlib folders that tracing programs never imports: the biggest part of an installed Python
STDLIB_SKIP = {"test", "site-packages", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3", "__pycache__"}
CARRY_MIB = 64          # one command carries at most 64 MiB: the working tree and the paths it names
FILES_BACK = 8          # the machine returns at most 8 files from $OUT ...
PART_MIB = 15           # ... of at most 16 MiB each
LOG_TAIL = 20000        # characters of each log that come back


class LeaseError(Exception):
    pass


# ---- pack (here) ----

def relocatable_python(py: str) -> tuple[str, list[tuple[Path, str]]]:
    """The files of `py`'s installation that run it elsewhere with PYTHONHOME and LD_LIBRARY_PATH set: (X.Y, [(file,
    name in the bundle)]). Refuses a shared build whose libpython is not where its configuration says."""
    q = subprocess.run([py, "-c", "import sys, sysconfig, json; print(json.dumps([sys.base_prefix, sys.executable, "
                        "'%d.%d' % sys.version_info[:2], sysconfig.get_config_var('Py_ENABLE_SHARED') and sysconfig.get_config_var('INSTSONAME') or '', "
                        "sysconfig.get_config_var('LIBDIR') or '', sysconfig.get_paths()['stdlib']]))"],
                       capture_output=True, text=True)
    if q.returncode:
        raise LeaseError(f"--python {py} does not run: {q.stderr.strip()[-300:]}")
    _, exe, ver, soname, libdir, stdlib = json.loads(q.stdout)
    exe, stdlib = Path(exe).resolve(), Path(stdlib)
    files = [(exe, f"python/bin/python{ver}")]
    if soname:
        lib = Path(libdir) / soname
        if not lib.exists():
            raise LeaseError(f"{py}'s {soname} is not in {libdir}")
        files.append((lib.resolve(), f"python/lib/{soname}"))
    for root, dirs, names in os.walk(stdlib):
        rel = Path(root).relative_to(stdlib)
        dirs[:] = sorted(d for d in dirs if d not in STDLIB_SKIP and not d.startswith("config-"))
        files += [(Path(root) / n, f"python/lib/python{ver}/{rel / n}") for n in sorted(names)
                  if not n.endswith((".pyc", ".pyo"))]
    return ver, files


def without_debug_info(path: Path, stage: Path) -> Path:
    """A copy of a Python binary or extension without its debug sections (libpython: 23 MB -> 6.5 MB), so the bundle
    fits beside the tree in what one command carries; the file itself where `strip` is missing or fails. Node keeps
    its own: stripping it saves 3%."""
    binary = path.name.startswith("python") or ".so" in path.name
    if not binary or not shutil.which("strip"):
        return path
    out = stage / f"{len(list(stage.iterdir()))}-{path.name}"
    r = subprocess.run(["strip", "--strip-debug", "-o", str(out), str(path)], capture_output=True)
    return out if r.returncode == 0 else path


def pack(a) -> dict:
    def need(path: str, what: str) -> Path:
        p = Path(path)
        if not p.is_file():
            raise LeaseError(f"{path} is missing: {what}")
        return p

    realcode = need(a.realcode, "the real-code corpus (training/DATA.md builds it)")
    heldout = need(a.heldout, "the generated held-out programs (training/README.md, Programs)")
    bench = need(a.exclude, "the evaluation benchmark, which generation must exclude")
    if not (REPO / "dist/ndbg.js").is_file():
        raise LeaseError("dist/ndbg.js is missing: npm run build")
    node = Path(shutil.which(a.node) or a.node).resolve()
    if not node.is_file():
        raise LeaseError(f"--node {a.node} is not a file")
    ver, py_files = relocatable_python(a.python)
    wts = REPO / "node_modules/web-tree-sitter"
    files = [(node, "node/bin/node"), *py_files,
             # dist/'s bundles, not the platforms' packages `npm run package:all` leaves in dist/vsix/
             *[(p, f"repo/{p.relative_to(REPO)}") for p in sorted((REPO / "dist").rglob("*"))
               if p.is_file() and p.suffix != ".map" and p.relative_to(REPO / "dist").parts[0] != "vsix"],
             *[(p, f"repo/{p.relative_to(REPO)}") for p in sorted(wts.iterdir())
               if p.is_file() and (p.suffix in (".js", ".cjs", ".wasm") or p.name == "package.json")],
             (realcode, "data/realcode.jsonl"), (heldout, "data/heldout.jsonl"), (bench, "data/exclude/" + bench.name)]
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    manifest = {"python": ver, "node": subprocess.run([str(node), "--version"], capture_output=True, text=True).stdout.strip(),
                "commit": head, "exclude": bench.name, "files": len(files)}
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    try:
        with tempfile.TemporaryDirectory() as stage, tarfile.open(tmp, "w:xz", preset=a.preset, dereference=True) as tar:
            for src, name in files:
                tar.add(without_debug_info(src, Path(stage)), arcname=name, recursive=False)
            raw = json.dumps(manifest, indent=1).encode()
            info = tarfile.TarInfo("manifest.json")
            info.size = len(raw)
            tar.addfile(info, io.BytesIO(raw))
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    tmp.replace(out)
    manifest["bytes"] = out.stat().st_size
    # what one command carries: the tracked and untracked-not-ignored files, and the bundle
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, text=True).stdout.split("\0")
    tree = sum((REPO / f).stat().st_size for f in listed if f and (REPO / f).is_file())
    manifest["carried_mib"] = round((tree + manifest["bytes"]) / 2**20, 1)
    if manifest["carried_mib"] > CARRY_MIB:
        print(f"warning: the tree and the bundle are {manifest['carried_mib']} MiB, more than the {CARRY_MIB} MiB one command "
              "carries", file=sys.stderr)
    return manifest


# ---- run (on the GPU machine) ----

def unpack(bundle: Path, work: Path) -> dict:
    """The bundle's repo/ (build outputs: dist/, web-tree-sitter) into the repository, the rest (the runtimes, the
    data) into `work`, so that a rehearsal never writes over a corpus of this checkout."""
    with tarfile.open(bundle) as tar:
        members = tar.getmembers()
        bad = [m.name for m in members if m.name.startswith("/") or ".." in Path(m.name).parts]
        if bad:
            raise LeaseError(f"the bundle holds a path outside it: {bad[0]}")
        for m in (m for m in members if m.isfile()):
            dest = REPO if m.name.startswith("repo/") else work
            name = m.name[len("repo/"):] if m.name.startswith("repo/") else m.name
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            # Written beside, then renamed over: a process reading the file meanwhile (an adapter
            # loading dist/'s bundles or web-tree-sitter's wasm) sees the old file or the new, never half.
            part = target.with_name(target.name + ".unpacking")
            with tar.extractfile(m) as src, open(part, "wb") as f:
                shutil.copyfileobj(src, f)
            os.chmod(part, m.mode | 0o200)
            os.replace(part, target)
        manifest = json.loads(tar.extractfile("manifest.json").read())
    py = work / f"python/bin/python{manifest['python']}"
    if not py.is_file():
        raise LeaseError(f"the bundle has no python{manifest['python']}")
    return manifest


def curve_of(log: Path) -> list[str]:
    """The trainer's held-out curve (every evaluation, each set's loss) and its best steps: the lines of its log
    that the log's tail may have cut."""
    if not log.exists():
        return []
    keep = [line for line in log.read_text(errors="replace").splitlines()
            if '"eval_loss"' in line and '"event"' not in line or '"event": "best"' in line or '"event": "start"' in line]
    return ["== held-out curve (run/log.jsonl: evaluations and best weights)", *keep]


class Lease:
    def __init__(self, a):
        self.a = a
        self.t0 = time.time()
        self.out = Path(a.out)
        self.work = Path(a.work)
        self.log = []

    def say(self, msg: str) -> None:
        line = f"[{time.time() - self.t0:6.1f}s] {msg}"
        print(line, flush=True)
        self.log.append(line)

    def left_minutes(self) -> float:
        return self.a.total_minutes - (time.time() - self.t0) / 60

    def pipeline(self, stages: str, extra: list[str]) -> None:
        a = self.a
        cmd = [sys.executable, "-m", "training.pipeline", "--out", str(self.work / "p"), "--stages", stages,
               "--node", str(self.work / "node/bin/node"), "--python", str(self.py), "--python-home", str(self.work / "python"),
               "--config", a.config, "--lr", str(a.lr), "--warmup", str(a.warmup), "--sets", str(a.sets), "--programs", str(a.programs), "--seed", str(a.seed),
               "--exclude", str(self.work / "data/exclude" / self.manifest["exclude"]), "--heldout", str(self.work / "data/heldout.jsonl"),
               "--realcode", str(self.work / "data/realcode.jsonl"), "--realcode-samples", str(a.realcode_samples),
               "--scripts", str(a.scripts), "--hidden", str(a.hidden),
               "--workers", str(a.workers), "--device", a.device, "--threads", str(a.threads), "--export-type", "q8_0",
               "--part-mib", str(PART_MIB), *(["--init", a.init] if a.init else []), *(["--compile"] if a.compile else []),
               *a.pipeline_arg, *extra]
        self.say(" ".join(cmd[1:]))
        r = subprocess.run(cmd, cwd=REPO)
        if r.returncode:
            raise LeaseError(f"training.pipeline --stages {stages} exited {r.returncode}")

    def bring_back(self) -> None:
        """The model's parts and manifest, timings.json and the logs' tails into --out: what the machine returns."""
        self.out.mkdir(parents=True, exist_ok=True)
        p = self.work / "p"
        export = sorted((p / "export").glob("*")) if (p / "export").is_dir() else []
        for f in export:
            shutil.copyfile(f, self.out / f.name)
        if (p / "timings.json").exists():
            shutil.copyfile(p / "timings.json", self.out / "timings.json")
        tails = [f"== {f.name}\n{f.read_text(errors='replace')[-LOG_TAIL:]}" for f in (p / "train.log", p / "run/log.jsonl") if f.exists()]
        (self.out / "lease.log").write_text("\n".join(self.log) + "\n" + "\n".join([*curve_of(p / "run/log.jsonl"), *tails]))
        n = len(list(self.out.iterdir()))
        if n > FILES_BACK:
            self.say(f"warning: {n} files in {self.out}, more than the {FILES_BACK} that come back")

    def run(self) -> None:
        a = self.a
        try:
            shutil.rmtree(self.work / "p", ignore_errors=True)  # a run before this one on the same machine
            self.work.mkdir(parents=True, exist_ok=True)
            self.manifest = unpack(Path(a.bundle), self.work)
            self.py = self.work / f"python/bin/python{self.manifest['python']}"
            head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
            if head and self.manifest.get("commit") and head != self.manifest["commit"]:
                self.say(f"note: the bundle was packed at {self.manifest['commit'][:12]}, this tree is {head[:12]}")
            self.say(f"unpacked: Python {self.manifest['python']}, Node {self.manifest['node']}")
            second = ["--second-python", a.second_python, "--second-sets", str(a.second_sets)] if a.second_python else []
            self.pipeline("check,programs,realcode,sessions", second)
            minutes = round(self.left_minutes() - a.reserve_minutes, 2)
            if minutes < a.min_train_minutes:
                raise LeaseError(f"{minutes} minutes left to train after the data (--total-minutes {a.total_minutes}, "
                                 f"--reserve-minutes {a.reserve_minutes}): make less data (--sets, --programs)")
            self.say(f"training for {minutes} minutes")
            self.pipeline("train,export", ["--minutes", str(minutes)])
            self.say("done")
        finally:
            self.bring_back()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m training.lease", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pack", help="here: the bundle a lease needs")
    p.add_argument("--out", default=str(REPO / ".lease/bundle.tar.xz"))
    p.add_argument("--python", default=sys.executable, help="the Python whose traces the model learns")
    p.add_argument("--node", default="node")
    p.add_argument("--realcode", default=str(REPO / "training/data/realcode.jsonl"))
    p.add_argument("--heldout", default=str(REPO / "training/data/heldout.jsonl"))
    p.add_argument("--exclude", default=str(REPO.parent / "shared/data/cruxeval.jsonl"))
    p.add_argument("--preset", type=int, default=6, help="xz preset (0 is fast, for rehearsals)")
    r = sub.add_parser("run", help="on the GPU machine: data, training and export within --total-minutes")
    r.add_argument("--bundle", required=True)
    r.add_argument("--out", required=True, help="what comes back ($OUT)")
    r.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "lease"))
    r.add_argument("--total-minutes", type=float, required=True, help="the whole command's time, data and export included")
    r.add_argument("--reserve-minutes", type=float, default=2.0, help="of it, kept for tokenizing, compiling and export")
    r.add_argument("--min-train-minutes", type=float, default=1.0)
    r.add_argument("--config", default="base")
    r.add_argument("--init", help="continue this model (e.g. models/ndbg-base-28m.q8_0.gguf)")
    r.add_argument("--lr", type=float, default=0.0006, help="run 4's, continuing the bundled model")
    r.add_argument("--warmup", type=int, default=100)
    r.add_argument("--sets", type=int, default=10, help="sets of generated programs (r5 had 15; the scripts and hidden-callee "
                   "sessions of each set take a share of the data stage's time)")
    r.add_argument("--programs", type=int, default=10000)
    r.add_argument("--seed", type=int, required=True, help="sets use seed+1, seed+2, ...: a new one for every lease, or it "
                   "trains on programs an earlier lease made (seeds 101-114: run 4; 201-215: r5, and run 6 again; next: 300)")
    r.add_argument("--scripts", type=int, default=1000, help="user-style scripts with each set (training/scripts.py)")
    r.add_argument("--hidden", type=int, default=6, help="hidden-callee sessions per program with a helper (training/hidden.py)")
    r.add_argument("--realcode-samples", type=int, default=4,
                   help="sessions per real call: run 4's 40 and r5's 10 both passed their best held-out real-code loss early")
    r.add_argument("--second-python", help="an interpreter of another version on that machine (its own python3)")
    r.add_argument("--second-sets", type=int, default=4)
    r.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    r.add_argument("--threads", type=int, default=8, help="training's CPU threads, shared among its processes (one per GPU)")
    r.add_argument("--device", default="cuda")
    r.add_argument("--compile", action="store_true")
    r.add_argument("--pipeline-arg", action="append", default=[], help="one more argument for training.pipeline (repeatable)")
    a = ap.parse_args(argv)
    try:
        if a.cmd == "pack":
            print(json.dumps(pack(a)))
        else:
            Lease(a).run()
    except LeaseError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

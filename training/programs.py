#!/usr/bin/env python3
"""Generates small Python functions `def f(...)` with inputs, one CRUXEval-shaped JSON line each.

    python3 training/programs.py --count N --seed S --out FILE.jsonl [--add-dir DIR] ...
    python3 -m training.programs ...  (the same)

Programs are composed from a grammar of statements over typed variables (str, list, dict, set,
tuple, int, bool), so they are valid and terminate by construction: loops run over finite
containers or strictly decreasing counters, and a container is never grown while it is iterated.
Each candidate is then executed once, per input, in a separate worker process under
`sys.settrace`, with an event budget, a wall-clock timeout and a memory limit; only those that
return normally (or, up to --raising of the lines, end in an exception) within MIN..MAX trace
events, with short and reproducible reprs (no addresses, no hash-ordered sets of strings) are
kept. Lines are deduplicated by normalized source (its AST) plus input, and any function of an
excluded corpus (by default the CRUXEval file, which must never leak into training) is refused;
a missing excluded corpus is an error unless --no-exclude says so.

Output lines: {"code", "input", "output", "id"[, "entry"]}: `f(<input>)` returns the value whose
repr is `output` (a call that raises has "raises", the exception's repr, instead); a line with
"entry" names its function so instead of `f` (--entry-names, the share of generated functions
renamed; CRUXEval's are all `f`). --count counts generated lines.
--add-dir DIR adds each NAME.py of DIR that defines `f`, with its inputs in NAME.inputs beside
it (one argument text a line, e.g. `[1, 2], 'x'`; blank and `#` lines skipped). --style picks the
generator's mix (real, the default, or classic: the bundled model's data); --layout real writes
each function as people do (docstring with examples, annotations, comments), which
canonical_programs.py maps back to the canonical layout exactly. Standard library only;
deterministic for a seed. See training/README.md ("Programs", "Toward real code").

This file is the command line; the parts are modules of their own: training/grammar.py (the
program generator and inputs), simplify.py (dead code and input-ignoring functions),
runner.py with runner_worker.py (running candidates under the tracer), dedupe.py (program
identity and excluded corpora), constructs.py (what a program uses), layout.py (--layout real).
"""
from __future__ import annotations

import argparse
import ast
import json
import random
import sys
import time
from collections import Counter
from pathlib import Path

if __package__ in (None, ""):  # run as a script, or imported with training/ on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from training.constructs import constructs  # noqa: E402
from training.dedupe import CRUXEVAL, code_key, input_key, load_excluded, normalize_ws, rename_entry  # noqa: E402
from training.grammar import STYLES, FuncGen, entry_name, gen_input  # noqa: E402
from training.layout import real_layout  # noqa: E402
from training.runner import Runner, line_result  # noqa: E402
from training.simplify import simplify  # noqa: E402


def added_programs(folder: Path) -> list[tuple[str, str, str]]:
    """(id, code, input) for every NAME.py in folder with inputs in NAME.inputs (one argument text a line)."""
    out = []
    for py in sorted(folder.glob("*.py")):
        code = py.read_text(encoding="utf-8")
        try:
            tree = ast.parse(code)
        except SyntaxError as e:
            print(f"skipping {py}: syntax error: {e}", file=sys.stderr)
            continue
        if not any(isinstance(n, ast.FunctionDef) and n.name == "f" for n in tree.body):
            print(f"skipping {py}: no top-level function f", file=sys.stderr)
            continue
        inputs_file = py.with_suffix(".inputs")
        if not inputs_file.exists():
            print(f"skipping {py}: no {inputs_file.name} next to it", file=sys.stderr)
            continue
        inputs = [ln.strip() for ln in inputs_file.read_text(encoding="utf-8").splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
        for k, inp in enumerate(inputs):
            out.append((f"{py.stem}_{k}", code, inp))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Generate small Python functions with inputs (CRUXEval-shaped JSONL).")
    ap.add_argument("--count", type=int, required=True, help="generated lines (function + input) to write")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", required=True, help="output JSONL file ('-' for stdout)")
    ap.add_argument("--add-dir", action="append", default=[], help="add NAME.py files of this folder, inputs from NAME.inputs")
    ap.add_argument("--inputs", type=int, default=2, help="at most this many inputs per generated function")
    ap.add_argument("--min-events", type=int, default=5)
    ap.add_argument("--max-events", type=int, default=300)
    ap.add_argument("--max-repr", type=int, default=120, help="longest repr of any value along the run")
    ap.add_argument("--max-lines", type=int, default=30, help="longest generated program, in lines of the canonical layout")
    ap.add_argument("--timeout", type=float, default=2.0, help="seconds per candidate run")
    ap.add_argument("--exclude", action="append", default=None,
                    help="JSONL corpus whose functions must not appear (default: the CRUXEval file; it must be there)")
    ap.add_argument("--no-exclude", action="store_true", help="run without any excluded corpus (never for training data)")
    ap.add_argument("--entry-names", type=float, default=0.5,
                    help="share of generated functions given a name of their own instead of f (the line then has an \"entry\")")
    ap.add_argument("--style", choices=STYLES, default="real",
                    help="mix of constructs: real (toward code people write, the default) or classic (the bundled model's data)")
    ap.add_argument("--layout", choices=("canonical", "real"), default="canonical",
                    help="how programs are written: canonical (as the model is shown code) or real (docstrings with examples, "
                         "annotations, comments, blank lines; canonical_programs.py maps it back to the canonical text)")
    ap.add_argument("--raising", type=float, default=0.0,
                    help="share of the lines that may be calls ending in an exception the program raises (an uncaught "
                         "IndexError, a ValueError it raises itself): what users debug most, and a trace's error exit")
    ap.add_argument("--python", default=sys.executable, help="interpreter that runs candidates")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)
    if a.count < 0:
        ap.error("--count must be >= 0")
    if not 0 <= a.entry_names <= 1:
        ap.error("--entry-names must be between 0 and 1")
    if not 0 <= a.raising < 1:
        ap.error("--raising must be from 0 to under 1")
    for d in a.add_dir:
        if not Path(d).is_dir():
            ap.error(f"--add-dir {d}: not a folder")
    if a.no_exclude and a.exclude:
        ap.error("--exclude and --no-exclude contradict each other")
    # A missing benchmark file must stop the run, not silently let its functions in.
    excl_paths = [] if a.no_exclude else [Path(p) for p in a.exclude] if a.exclude is not None else [CRUXEVAL]
    for p in excl_paths:
        if not p.is_file():
            ap.error(f"--exclude {p}: no such file (give the corpus, or say --no-exclude)")
    excl_ws, excl_keys = load_excluded(excl_paths)

    t0 = time.monotonic()
    r = random.Random(a.seed)
    runner = Runner(a.python, a.timeout, a.max_events, a.max_repr)
    seen: set[str] = set()
    why: Counter = Counter()
    rows: list[dict] = []
    events: list[int] = []
    cons: Counter = Counter()
    tried = funcs = 0
    layout_kept: Counter = Counter()  # functions written in the real layout, or left canonical
    raising = [0]  # lines kept whose call raises

    def accept(code: str, inp: str, ident: str, entry: str = "f") -> bool:
        """Checks and runs the program as `f`; keeps it under `entry`."""
        key = code_key(code) + "\0" + input_key(inp)
        if key in seen:
            why["duplicate"] += 1
            return False
        if normalize_ws(code) in excl_ws or code_key(code) in excl_keys:
            why["excluded"] += 1
            return False
        res = runner.run(code, inp, raises=a.raising > 0)
        if not res["ok"]:
            why[res["why"] + (":" + res["exc"] if res.get("exc") else "")] += 1
            return False
        if res["events"] < a.min_events:
            why["few-events"] += 1
            return False
        if "raised" in res:
            if raising[0] + 1 > a.raising * (len(rows) + 1):
                why["raises:" + res["exc"]] += 1
                return False
            raising[0] += 1
        seen.add(key)
        row = {"code": code, "input": inp, **line_result(res), "id": ident}
        if entry != "f":
            row.update(code=rename_entry(code, entry), entry=entry)
        rows.append(row)
        events.append(res["events"])
        return True

    def written_as_people_do(mine: list[dict], lr: random.Random, entry: str, g: FuncGen) -> None:
        """One function's lines with its code in the real layout (its own generator, so the programs stay
        those of the canonical layout), kept when it runs every input to the same output under the tracer;
        otherwise the canonical code stays and the summary counts it."""
        text = real_layout(mine[0]["code"], lr, entry, g.ps, g.defaults, g.helpers, [(row["input"], row["output"]) for row in mine if "output" in row])
        for row in mine if text else []:
            res = runner.run(text, row["input"], entry, raises="raises" in row)
            if not res["ok"] or line_result(res) != {k: row[k] for k in ("output", "raises") if k in row}:
                text = None
                break
        if text is None:
            layout_kept["canonical"] += 1
            return
        layout_kept["real"] += 1
        for row in mine:
            row["code"] = text

    try:
        for d in a.add_dir:
            for ident, code, inp in added_programs(Path(d)):
                tried += 1
                accept(code, inp, f"add_{ident}")
        n_added = len(rows)
        while len(rows) - n_added < a.count:
            g = FuncGen(random.Random(r.getrandbits(64)), a.style)
            code = simplify(g.program())
            tried += 1
            if code is None:
                why["ignores-input"] += 1
                continue
            if code.count("\n") > a.max_lines:
                why["long"] += 1
                continue
            try:
                compile(code, "<program>", "exec")
            except SyntaxError:
                why["syntax"] += 1
                continue
            types = [t for _, t in g.ps]
            ok = 0
            # its own generator, so the functions and inputs of a seed stay the same at any --entry-names
            nr = random.Random(a.seed * 1_000_003 + tried)
            entry = entry_name(nr, code) if nr.random() < a.entry_names else "f"
            for k in range(a.inputs):
                if len(rows) - n_added >= a.count:
                    break
                inp = gen_input(g.r, types, g.defaults)
                if accept(code, inp, f"g{a.seed}_{funcs}_{ok}", entry):
                    ok += 1
            if ok:
                funcs += 1
                cons.update(constructs(code))
                if a.layout == "real":
                    written_as_people_do(rows[-ok:], random.Random(a.seed * 2_000_003 + tried), entry, g)
    finally:
        runner.close()
    elapsed = time.monotonic() - t0

    out = sys.stdout if a.out == "-" else open(a.out, "w", encoding="utf-8")
    try:
        for row in rows:
            out.write(json.dumps(row) + "\n")
    finally:
        if out is not sys.stdout:
            out.close()
    if not a.quiet:
        ev = sorted(events) or [0]
        summary = {
            "lines": len(rows), "raising": raising[0], "functions": funcs, "candidates": tried, "seconds": round(elapsed, 2),
            "lines_per_s": round(len(rows) / elapsed, 1) if elapsed else None,
            "events": {"mean": round(sum(ev) / len(ev), 1), "p10": ev[len(ev) // 10], "median": ev[len(ev) // 2],
                       "p90": ev[len(ev) * 9 // 10], "max": ev[-1]},
            "excluded_corpora": [str(p) for p in excl_paths] or "none (--no-exclude)",
            "excluded_lines": why["excluded"],
            "rejected": dict(why.most_common()),
            **({"layout": {"style": a.style, "real": layout_kept["real"], "kept_canonical": layout_kept["canonical"]}}
               if a.layout == "real" else {"style": a.style}),
            "constructs_per_100_functions": {k: round(100 * v / max(funcs, 1), 1) for k, v in sorted(cons.items(), key=lambda kv: -kv[1])},
        }
        print(json.dumps(summary, indent=1), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

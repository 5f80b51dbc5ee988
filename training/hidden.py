"""Sessions that teach what a hole needs: a call whose callee's body is hidden. Python 3, standard library only.

  python3 -m training.hidden --programs P.jsonl --out OUT.jsonl [--node node] [--python PY]
      [--samples-per-program 6] [--seed S] [--limit N]

Hybrid and predict mode ask the model for what no run can know: the value of an unfinished function
(a body that reads `...`). Nothing in the rest of the data shows a callee without its body. Here, for
each program whose entry function calls a helper of its own (a top-level function, not the entry,
that nothing at module level reads), the helper is moved below everything else (which changes no
call: names are looked up when a call runs) and `ndbg data` samples sessions of the program so
moved. A session is kept when every state it shows is in the entry's own frame (depth 0: it never
enters a callee) and one of its actions is a step_over from a line of the entry that calls the
helper. Its program text is then replaced by the same text with the helper's body hidden (its
`def` line, signature and docstring kept, the body read as `...`), so the target after that step
is the state after the call with its true value, which the model must infer from the helper's
name, signature and docstring and from what the entry does with it. The helper is last, so no
line number the session shows changes. Written lines: `ndbg data`'s, with the text and target
spans shifted by the hidden text's length; their ids end in `#hidden:NAME`.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FRAME = re.compile(r"<\|(call|line|return|exception)_sep\|>(\d+) (\d+) ([^<\n]*)")


def helper_calls(code: str, entry: str) -> tuple[str, list[int]] | None:
    """(helper, [lines of the entry that call it]) for the first helper the entry calls that can move below
    everything, or None."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    main = funcs.get(entry)
    if main is None:
        return None
    module_reads = {n.id for s in tree.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                    for n in ast.walk(s) if isinstance(n, ast.Name)}
    for s in tree.body:  # decorators, defaults and class bodies run when the module does
        if isinstance(s, (ast.FunctionDef, ast.ClassDef)):
            for d in s.decorator_list:
                module_reads |= {n.id for n in ast.walk(d) if isinstance(n, ast.Name)}
        if isinstance(s, ast.FunctionDef):
            for d in [*s.args.defaults, *s.args.kw_defaults]:
                if d is not None:
                    module_reads |= {n.id for n in ast.walk(d) if isinstance(n, ast.Name)}
        if isinstance(s, ast.ClassDef):
            for b in s.body:
                if not isinstance(b, ast.FunctionDef):
                    module_reads |= {n.id for n in ast.walk(b) if isinstance(n, ast.Name)}
    names = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    for call in ast.walk(main):
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name):
            h = call.func.id
            if h in funcs and h != entry and h not in module_reads and names.count(h) == 1 and not funcs[h].decorator_list:
                lines = sorted({c.lineno for c in ast.walk(main) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == h})
                return h, lines
    return None


def moved_and_hidden(code: str, helper: str) -> tuple[str, str, dict[int, int]] | None:
    """(the code with `helper` moved to the end, the same with its body hidden, {old line: new line} of the
    lines that stay)."""
    tree = ast.parse(code)
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == helper)
    lines = code.splitlines()
    a, b = node.lineno - 1, node.end_lineno  # [a, b) the helper's lines
    # the blank lines right after it go with it
    while b < len(lines) and not lines[b].strip():
        b += 1
    part = lines[a:node.end_lineno]
    rest = lines[:a] + lines[b:]
    while rest and not rest[-1].strip():
        rest.pop()
    keep = {}
    for old in range(1, len(lines) + 1):
        if old <= a:
            keep[old] = old
        elif old > b:
            keep[old] = old - (b - a)
    body0 = node.body[0]
    head = lines[a:body0.lineno - 1]  # the def line(s), up to the first statement of the body
    if not head:  # `def h(x): return x` on one line
        return None
    indent = " " * body0.col_offset
    hidden_part = list(head)
    if isinstance(body0, ast.Expr) and isinstance(body0.value, ast.Constant) and isinstance(body0.value.value, str):
        hidden_part += lines[body0.lineno - 1:body0.end_lineno]
    hidden_part.append(indent + "...")
    moved = "\n".join(rest + ["", ""] + part) + "\n"
    hidden = "\n".join(rest + ["", ""] + hidden_part) + "\n"
    return moved, hidden, keep


def keep_session(text: str, entry: str, call_lines: set[int]) -> bool:
    """Every state in the entry's frame, and a step_over from one of the lines that call the helper."""
    frames = FRAME.findall(text)
    if not frames or any(d != "0" or fn != entry for _, _, d, fn in frames):
        return False
    for m in re.finditer(r"<\|line_sep\|>(\d+) 0 [^\n]*\n<\|action_sep\|><\|step_over\|>", text):
        if int(m.group(1)) in call_lines:
            return True
    return False


def build(programs: list[dict], node: str, python: str | None, samples: int, seed: int, work: Path) -> tuple[list[dict], dict]:
    moved_lines, info = [], {}
    for p in programs:
        if p.get("script"):
            continue  # a script runs whole: no entry whose frame the session could stay in
        entry = p.get("entry", "f")
        hc = helper_calls(p["code"], entry)
        if not hc:
            continue
        helper, calls = hc
        mh = moved_and_hidden(p["code"], helper)
        if not mh:
            continue
        moved, hidden, keep = mh
        call_lines = {keep[c] for c in calls if c in keep}
        if not call_lines:
            continue
        q = {k: v for k, v in p.items() if k in ("code", "input", "output", "entry", "id")}
        q["code"] = moved
        moved_lines.append(q)
        info[p["id"]] = (helper, moved, hidden, call_lines, entry)
    src, out = work / "moved.jsonl", work / "sessions.jsonl"
    src.write_text("".join(json.dumps(q) + "\n" for q in moved_lines))
    summary = {"programs": len(programs), "with_helper": len(moved_lines)}
    if not moved_lines:
        return [], {**summary, "sessions": 0, "kept": 0}
    mix = "step_into=0.12,step_over=0.5,step_return=0.04,breakpoint=0.14,continue=0.02,inv_step_into=0.04,inv_step_over=0.1,inv_step_return=0.0,inv_breakpoint=0.04"
    cmd = [node, str(REPO / "dist/ndbg.js"), "data", "--programs", str(src), "--out", str(out), "--samples-per-program", str(samples),
           "--seed", str(seed), "--mix", mix, "--inverse-call", "0", *(["--python", python] if python else [])]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    if r.returncode:
        raise RuntimeError(f"ndbg data exited {r.returncode}: {r.stderr[-800:]}")
    kept, n = [], 0
    for line in out.read_text().splitlines():
        rec = json.loads(line)
        n += 1
        pid = rec["id"].split("#")[0]
        if pid not in info:
            continue
        helper, moved, hidden, call_lines, entry = info[pid]
        text = rec["text"]
        at = text.find(moved)
        if at < 0 or not keep_session(text, entry, call_lines):
            continue
        shift = len(hidden) - len(moved)
        rec["text"] = text[:at] + hidden + text[at + len(moved):]
        rec["targets"] = [[s + shift, e + shift] if s >= at + len(moved) else [s, e] for s, e in rec["targets"]]
        rec["id"] = f"{rec['id']}#hidden:{helper}"
        kept.append(rec)
    return kept, {**summary, "sessions": n, "kept": len(kept)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m training.hidden", description=__doc__.split("\n\n")[0])
    ap.add_argument("--programs", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--node", default="node")
    ap.add_argument("--python", help="the traced Python (ndbg data --python)")
    ap.add_argument("--samples-per-program", type=int, default=6)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit", type=int)
    a = ap.parse_args(argv)
    programs = [json.loads(l) for l in open(a.programs) if l.strip()][:a.limit]
    with tempfile.TemporaryDirectory() as d:
        kept, summary = build(programs, a.node, a.python, a.samples_per_program, a.seed, Path(d))
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        for rec in kept:
            f.write(json.dumps(rec) + "\n")
    os.replace(tmp, a.out)
    print(json.dumps(summary), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

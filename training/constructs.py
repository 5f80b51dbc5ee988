#!/usr/bin/env python3
"""Which constructs and which layout a program uses, and how often a corpus uses each.

    python3 -m training.constructs REFERENCE.jsonl OTHER.jsonl [OTHER.jsonl ...] [--json]

Each file is a programs file (JSONL lines with "code" and, for a named entry, "entry"); every
distinct program counts once, whatever its number of inputs. The table gives, per construct, the
share of a file's programs that use it (%), one column per file, and under each group the distance
of every other file from the first one: the mean absolute difference of the shares, in points.
The first file is the reference (the real-code corpus, say); the groups are the constructs
(`constructs()`, also counted in programs.py's summary) and the layout (`layout()`: docstrings,
comments, blank lines, annotations, imports, decorators, the entry's place, multi-line statements),
which the canonical layout the model is shown drops. Standard library only.
"""
from __future__ import annotations

import argparse
import ast
import io
import json
import sys
import tokenize
from collections import Counter
from pathlib import Path

STR_METHODS = ("split", "join", "replace", "find", "rfind", "strip", "lstrip", "rstrip", "upper", "lower", "capitalize",
               "title", "swapcase", "startswith", "endswith", "isdigit", "isalpha", "isupper", "islower", "isspace", "isalnum",
               "partition", "rsplit", "center", "ljust", "rjust", "zfill", "removeprefix", "removesuffix", "casefold", "format",
               "splitlines", "encode", "translate", "expandtabs", "isdecimal", "isnumeric", "isidentifier", "istitle")
METHODS = ("split", "join", "replace", "find", "rfind", "strip", "lstrip", "rstrip", "upper", "lower", "capitalize",
           "title", "swapcase", "startswith", "endswith", "count", "index", "isdigit", "isalpha", "isupper", "islower",
           "partition", "rsplit", "center", "ljust", "rjust", "zfill", "removeprefix", "removesuffix", "casefold",
           "append", "pop", "insert", "sort", "reverse", "extend", "remove", "clear", "copy", "get", "items", "keys",
           "values", "setdefault", "update", "add", "discard", "fromkeys", "format", "splitlines", "isspace", "isalnum")
KINDS = {ast.For: "for", ast.While: "while", ast.If: "if", ast.Try: "try", ast.Raise: "raise", ast.ListComp: "listcomp",
         ast.DictComp: "dictcomp", ast.SetComp: "setcomp", ast.GeneratorExp: "genexp", ast.Lambda: "lambda",
         ast.ClassDef: "class", ast.Break: "break", ast.Continue: "continue", ast.Slice: "slice", ast.AugAssign: "augassign",
         ast.JoinedStr: "fstring", ast.IfExp: "ifexp", ast.Tuple: "tuple", ast.Set: "set", ast.Dict: "dict", ast.Delete: "del",
         ast.Starred: "starred", ast.Assert: "assert", ast.With: "with", ast.Yield: "yield", ast.BoolOp: "and/or"}
CONTAINERS = (ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)
FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _calls(node: ast.AST) -> set[str]:
    return {n.func.id for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


def _early_return(fn: ast.AST) -> bool:
    """A return inside a branch or loop of the function (not only its last statement)."""
    for st in fn.body:
        if not isinstance(st, (ast.Return, *FUNCS, ast.ClassDef)):
            if any(isinstance(n, ast.Return) for n in ast.walk(st)):
                return True
    return False


def constructs(code: str) -> Counter:
    """Which constructs a program uses (each counted once per program)."""
    tree = ast.parse(code)
    found: set[str] = set()
    funcs = [n for n in tree.body if isinstance(n, FUNCS)]
    names = {f.name for f in funcs}
    if len(funcs) > 1:
        found.add("helper")
    if any(_calls(f) & (names - {f.name}) for f in funcs):
        found.add("calls between user functions")
    for node in ast.walk(tree):
        kind = KINDS.get(type(node))
        if kind:
            found.add(kind)
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute) and node.func.attr in ("append", "insert", "add", "setdefault", "extend") \
                    and any(isinstance(a, CONTAINERS) for a in node.args):
                found.add("nested container")  # a container put into a container
            if isinstance(node.func, ast.Attribute) and node.func.attr in METHODS:
                found.add("." + node.func.attr)
            if isinstance(node.func, ast.Attribute) and node.func.attr in STR_METHODS:
                found.add("string method")
            if isinstance(node.func, ast.Name) and node.func.id == "print":
                found.add("print")
            if isinstance(node.func, ast.Name) and node.func.id in ("isinstance", "enumerate", "zip", "range", "sorted", "len"):
                found.add(node.func.id + "()")
            if node.keywords:
                found.add("keyword argument")
        elif isinstance(node, FUNCS):
            if node.args.defaults or any(node.args.kw_defaults):
                found.add("default argument")
            if _early_return(node):
                found.add("early return")
            if any(isinstance(n, FUNCS) for st in node.body for n in ast.walk(st)):
                found.add("nested function")
        elif isinstance(node, ast.ClassDef):
            methods = [n for n in node.body if isinstance(n, FUNCS)]
            attrs = any(isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
                        for n in ast.walk(node) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                        for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))
            if len(methods) >= 2 and attrs:
                found.add("class with methods and attributes")
        elif isinstance(node, ast.While) and isinstance(node.test, ast.BoolOp):
            found.add("while with compound condition")
        elif isinstance(node, CONTAINERS[:4]) and any(isinstance(e, CONTAINERS) for e in
                                                       (node.elts if not isinstance(node, ast.Dict) else node.values)):
            found.add("nested container")
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Subscript) and not isinstance(node.slice, ast.Slice):
            found.add("nested container")
        elif isinstance(node, ast.Compare):
            if any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
                found.add("is / is not")
            if len(node.ops) > 1:
                found.add("chained comparison")
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], (ast.Tuple, ast.List)):
            found.add("tuple unpacking")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            found.add("true division")
        elif isinstance(node, ast.Constant) and node.value is None:
            found.add("None")
    if any(k in found for k in ("listcomp", "dictcomp", "setcomp", "genexp")):
        found.add("comprehension")
    for fn in ast.walk(tree):
        if isinstance(fn, FUNCS) and any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == fn.name
                                         for n in ast.walk(fn)):
            found.add("recursion")
    return Counter(found)


def layout(code: str, entry: str = "f") -> Counter:
    """Which features of a written layout (as people write code, not as ast.unparse prints it) a program has."""
    tree = ast.parse(code)
    found: set[str] = set()
    lines = code.split("\n")
    funcs = [n for n in tree.body if isinstance(n, FUNCS)]
    for node in ast.walk(tree):
        if isinstance(node, (*FUNCS, ast.ClassDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc is not None:
                found.add("docstring")
                if ">>>" in doc:
                    found.add("docstring with >>> examples")
            if node.decorator_list:
                found.add("decorator")
        if isinstance(node, FUNCS):
            if node.returns or any(a.annotation for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs):
                found.add("annotation")
            body_lines = range(node.body[0].lineno, node.end_lineno)
            if any(not lines[i - 1].strip() for i in body_lines):
                found.add("blank line inside a function")
        elif isinstance(node, ast.AnnAssign):
            found.add("annotation")
        elif isinstance(node, ast.ImportFrom) and node.module == "typing":
            found.add("from typing import")
        if isinstance(node, ast.stmt) and not isinstance(node, (*FUNCS, ast.ClassDef, ast.If, ast.For, ast.While, ast.Try, ast.With)):
            if node.end_lineno > node.lineno and not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
                found.add("statement over several lines")
    if any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in tree.body):
        found.add("import above")
    if any(isinstance(n, (ast.Assign, ast.AnnAssign)) for n in tree.body):
        found.add("constant above")
    if funcs and funcs[0].name != entry and len(funcs) > 1:
        found.add("entry not the first function")
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type == tokenize.COMMENT:
            found.add("comment after code" if lines[tok.start[0] - 1][:tok.start[1]].strip() else "comment line")
    return Counter(found)


GROUPS = {
    "constructs": ["if", "for", "while", "while with compound condition", "break", "continue", "early return", "try", "raise",
                   "assert", "with", "helper", "calls between user functions", "recursion", "nested function", "class",
                   "class with methods and attributes", "default argument", "keyword argument", "lambda", "comprehension",
                   "listcomp", "genexp", "dictcomp", "setcomp", "ifexp", "fstring", "slice", "nested container",
                   "tuple unpacking", "augassign", "and/or", "chained comparison", "is / is not", "None", "true division",
                   "string method", "isinstance()", "enumerate()", "zip()", "range()", "sorted()", "len()", "print", "del",
                   "yield"],
    "methods": ["." + m for m in METHODS],
    "layout": ["docstring", "docstring with >>> examples", "comment line", "comment after code", "blank line inside a function",
               "annotation", "from typing import", "import above", "constant above", "entry not the first function",
               "decorator", "statement over several lines"],
}


def shares(path: Path) -> tuple[int, dict[str, float]]:
    """(distinct programs, {construct: % of them using it}) of a programs file."""
    seen: dict[str, str] = {}
    with open(path, encoding="utf-8") as fh:
        for k, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                seen.setdefault(rec["code"], rec.get("entry", "f"))
            except (json.JSONDecodeError, KeyError, TypeError) as e:
                raise ValueError(f"{path}:{k}: not a programs line ({e})") from None
    count: Counter = Counter()
    for code, entry in seen.items():
        try:
            count.update(constructs(code) + layout(code, entry))
        except SyntaxError as e:
            raise ValueError(f"{path}: a program does not parse ({e})") from None
    n = len(seen)
    return n, {k: 100 * v / n for k, v in count.items()} if n else {}


def table(paths: list[Path]) -> dict:
    """Per group: each construct's share in every file, and each file's distance from the first."""
    files = [shares(p) for p in paths]
    out = {"files": [str(p) for p in paths], "programs": [n for n, _ in files], "groups": {}}
    for group, rows in GROUPS.items():
        rows_out = {k: [round(s.get(k, 0.0), 1) for _, s in files] for k in rows}
        dist = [round(sum(abs(v[i] - v[0]) for v in rows_out.values()) / len(rows_out), 2) for i in range(len(files))]
        out["groups"][group] = {"rows": rows_out, "distance": dist}
    return out


def render(t: dict) -> str:
    names = [Path(f).name for f in t["files"]]
    width = max(12, *(len(n) for n in names))
    head = f"{'construct (% of programs)':<34}" + "".join(f"{n:>{width + 2}}" for n in names)
    out = [head, f"{'programs':<34}" + "".join(f"{n:>{width + 2}}" for n in t["programs"])]
    for group, g in t["groups"].items():
        out.append(f"-- {group}")
        out += [f"{k:<34}" + "".join(f"{x:>{width + 2}.1f}" for x in v) for k, v in g["rows"].items()]
        out.append(f"{'distance from ' + names[0] + ' (mean |diff|, points)':<34}" + "".join(f"{d:>{width + 2}.2f}" for d in g["distance"]))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Construct and layout frequencies of programs files, against the first one.")
    ap.add_argument("files", nargs="+", type=Path, help="programs files (JSONL with \"code\"); the first is the reference")
    ap.add_argument("--json", action="store_true", help="print the table as JSON")
    a = ap.parse_args(argv)
    for p in a.files:
        if not p.is_file():
            ap.error(f"{p}: no such file")
    try:
        t = table(a.files)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(json.dumps(t, indent=1) if a.json else render(t))
    return 0


if __name__ == "__main__":
    sys.exit(main())

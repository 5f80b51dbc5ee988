"""The identity of a program line, for deduplication and for refusing excluded corpora: programs
compared by AST and by whitespace-normalized text, always with the entry function called `f`
(a generated function may carry a name of its own; CRUXEval calls every function `f`).
"""
from __future__ import annotations

import ast
import json
import os
import re
from pathlib import Path

from training.printer import unparse

REPO = Path(__file__).resolve().parent.parent
# The benchmark never to train on: $NDBG_CRUXEVAL (a relative path is the repository's), else ../shared/data/cruxeval.jsonl.
CRUXEVAL = REPO / os.environ["NDBG_CRUXEVAL"] if os.environ.get("NDBG_CRUXEVAL") else REPO.parent / "shared" / "data" / "cruxeval.jsonl"


def rename_entry(code: str, name: str, old: str = "f") -> str:
    """The program with its top-level function `old` (and every reference to it) called `name`."""
    tree = ast.parse(code)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == old:
            node.name = name
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == old:
            node.id = name
    return unparse(tree) + ("\n" if code.endswith("\n") else "")


def as_f(rec: dict) -> str:
    """A program line's code with its function called `f`, as every check compares programs."""
    return rename_entry(rec["code"], "f", rec["entry"]) if rec.get("entry") else rec["code"]


def normalize_ws(code: str) -> str:
    """Whitespace-insensitive text of a function (what the CRUXEval check compares)."""
    return re.sub(r"\s+", " ", code).strip()


def code_key(code: str) -> str:
    """Formatting- and comment-insensitive identity of a program."""
    try:
        return ast.dump(ast.parse(code))
    except SyntaxError:
        return normalize_ws(code)


def input_key(inp: str) -> str:
    """Formatting-insensitive identity of an argument text (keyword arguments included)."""
    try:
        return ast.dump(ast.parse(f"f({inp})", mode="eval").body)
    except SyntaxError:
        return normalize_ws(inp)


def load_excluded(paths: list[Path]) -> tuple[set[str], set[str]]:
    """Functions that must never appear: by whitespace-normalized text and by AST."""
    ws, keys = set(), set()
    for p in paths:
        with open(p, encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    code = as_f(json.loads(line))
                    ws.add(normalize_ws(code))
                    keys.add(code_key(code))
    return ws, keys

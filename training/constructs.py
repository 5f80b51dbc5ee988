"""Which constructs a program uses: the per-program counts programs.py's summary reports.
"""
from __future__ import annotations

import ast
from collections import Counter

METHODS = ("split", "join", "replace", "find", "rfind", "strip", "lstrip", "rstrip", "upper", "lower", "capitalize",
           "title", "swapcase", "startswith", "endswith", "count", "index", "isdigit", "isalpha", "isupper", "islower",
           "partition", "rsplit", "center", "ljust", "rjust", "zfill", "removeprefix", "removesuffix", "casefold",
           "append", "pop", "insert", "sort", "reverse", "extend", "remove", "clear", "copy", "get", "items", "keys",
           "values", "setdefault", "update", "add", "discard", "fromkeys")


def constructs(code: str) -> Counter:
    """Which constructs a program uses (each counted once per program)."""
    tree = ast.parse(code)
    found: set[str] = set()
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    if len(funcs) > 1:
        found.add("helper")
    for node in ast.walk(tree):
        kind = {ast.For: "for", ast.While: "while", ast.If: "if", ast.Try: "try", ast.Raise: "raise", ast.ListComp: "listcomp",
                ast.DictComp: "dictcomp", ast.SetComp: "setcomp", ast.GeneratorExp: "genexp", ast.Lambda: "lambda",
                ast.ClassDef: "class", ast.Break: "break", ast.Continue: "continue", ast.Slice: "slice", ast.AugAssign: "augassign",
                ast.JoinedStr: "fstring", ast.IfExp: "ifexp", ast.Tuple: "tuple", ast.Set: "set", ast.Dict: "dict", ast.Delete: "del",
                ast.Starred: "starred"}.get(type(node))
        if kind:
            found.add(kind)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in METHODS:
            found.add("." + node.func.attr)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
            found.add("print")
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef) and any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == fn.name
                                                   for n in ast.walk(fn)):
            found.add("recursion")
    return Counter(found)

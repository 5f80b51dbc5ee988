"""Dead code: generated statements whose results nobody reads are dropped, so that every line left
matters to the result (as in code people write). Execution decides the output afterwards, so
dropping anything here can never make a kept program wrong. `simplify` also refuses functions
that ignore a parameter or whose result does not depend on the inputs, and prints what is left
in the training layout (training/printer.py).
"""
from __future__ import annotations

import ast

from training.printer import unparse

MUTATORS = {"append", "pop", "insert", "remove", "sort", "reverse", "extend", "clear", "update", "setdefault", "add",
            "discard", "popitem"}


def _loads(fn: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _impure(e: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and ((isinstance(n.func, ast.Attribute) and n.func.attr in MUTATORS) or
                                            (isinstance(n.func, ast.Name) and n.func.id == "print")) for n in ast.walk(e))


def _names(t: ast.AST) -> list[str] | None:
    if isinstance(t, ast.Name):
        return [t.id]
    if isinstance(t, (ast.Tuple, ast.List)):
        out = []
        for e in t.elts:
            sub = _names(e.value if isinstance(e, ast.Starred) else e)
            if sub is None:
                return None
            out += sub
        return out
    return None


def _prune(body: list[ast.stmt], loads: set[str]) -> tuple[list[ast.stmt], bool]:
    out, changed = [], False
    for st in body:
        if not isinstance(st, (ast.FunctionDef, ast.ClassDef)):
            for field in ("body", "orelse", "finalbody"):
                sub = getattr(st, field, None)
                if isinstance(sub, list):
                    new, c = _prune(sub, loads)
                    setattr(st, field, new)
                    changed |= c
            for h in getattr(st, "handlers", []):
                h.body, c = _prune(h.body, loads)
                h.body = h.body or [ast.Pass()]
                changed |= c
        dead = False
        if isinstance(st, ast.Assign) and len(st.targets) == 1:
            ns = _names(st.targets[0])
            dead = ns is not None and not any(n in loads for n in ns) and not _impure(st.value)
        elif isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Name):
            dead = st.target.id not in loads and not _impure(st.value)
        elif isinstance(st, ast.Expr):  # a call made for its effect (obj.push(x)) stays
            dead = not any(isinstance(n, ast.Call) for n in ast.walk(st.value))
        elif isinstance(st, ast.Pass):
            dead = True  # put back below where a block would be empty
        elif isinstance(st, ast.If) and not st.body:
            if st.orelse:
                st.test, st.body, st.orelse = ast.UnaryOp(ast.Not(), st.test), st.orelse, []
                changed = True
            else:
                dead = not _impure(st.test)
        elif isinstance(st, (ast.For, ast.While, ast.Try)) and not st.body:
            dead = True
        if dead:
            changed = changed or not isinstance(st, ast.Pass)
            continue
        for field in ("body", "orelse", "finalbody"):
            if field == "body" and isinstance(getattr(st, field, None), list) and not getattr(st, field):
                st.body = [ast.Pass()]
        out.append(st)
    return out, changed



def reads_inputs(fn: ast.FunctionDef) -> bool:
    """Whether every parameter is read and the returned value depends on one (flow-insensitive)."""
    params = [a.arg for a in fn.args.args]
    loads = _loads(fn)
    if not all(p in loads for p in params):
        return False
    flows: list[tuple[set[str], set[str]]] = []  # (names written, names read)
    names = lambda t: {m.id for m in ast.walk(t) if isinstance(m, ast.Name)}
    for n in ast.walk(fn):
        if isinstance(n, (ast.Assign, ast.AugAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            flows.append((set().union(*[names(t) for t in targets]), _loads(n.value)))
        elif isinstance(n, ast.For):
            flows.append((names(n.target), _loads(n.iter)))
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name):
            if n.func.attr in MUTATORS:
                flows.append(({n.func.value.id}, set().union(*[_loads(a) for a in n.args] or [set()])))
        elif isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name):
            flows.append(({n.value.id}, set(params)))  # d[k] = v: conservatively derived
    derived = set(params)
    for _ in range(10):
        before = len(derived)
        for w, r in flows:
            if r & derived:
                derived |= w
        if len(derived) == before:
            break
    return any(isinstance(n, ast.Return) and n.value is not None and _loads(n.value) & derived for n in ast.walk(fn))


def _dead_stores(body: list[ast.stmt]) -> list[ast.stmt]:
    """Straight-line top-level assignments that no later statement reads (`x = 1` before `x = 2`)."""
    out, later = [], set()
    for st in reversed(body):
        target = st.targets[0] if isinstance(st, ast.Assign) and len(st.targets) == 1 else st.target if isinstance(st, ast.AugAssign) else None
        if not (isinstance(target, ast.Name) and target.id not in later and not _impure(st.value)):
            out.append(st)
            later |= _loads(st)
    return out[::-1]


def simplify(code: str) -> str | None:
    """Drops unread assignments, empty blocks, unused helpers and constants; returns normalized source."""
    tree = ast.parse(code)
    for _ in range(20):
        changed = False
        for fn in tree.body:
            if isinstance(fn, ast.FunctionDef):
                fn.body, c = _prune(fn.body, _loads(fn))
                body = _dead_stores(fn.body)
                changed |= c or len(body) != len(fn.body)
                fn.body = body or [ast.Pass()]
        keep = []
        loads = [_loads(m) for m in tree.body]
        for i, n in enumerate(tree.body):
            name = n.name if isinstance(n, (ast.FunctionDef, ast.ClassDef)) else \
                n.targets[0].id if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name) else None
            if name is not None and name != "f":  # a helper, a class or a module constant nobody reads goes
                if not any(name in ld for j, ld in enumerate(loads) if j != i):
                    changed = True
                    continue
            keep.append(n)
        tree.body = keep
        if not changed:
            break
    f = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "f"]
    if not f or not reads_inputs(f[0]):
        return None
    return "\n\n".join(unparse(n) for n in tree.body) + "\n"

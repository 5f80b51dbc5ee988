"""Scripts from real code: a docstring whose examples build objects and call their methods, or bind names and
use them, becomes the module-level code of a script, below the definitions it needs (training/realcode.py cuts
those from the files). It is what users debug, written by the people who wrote the class:

    >>> stack = Stack(limit=2)          stack = Stack(limit=2)
    >>> stack.push(1)                   stack.push(1)
    >>> stack.peek()            ->      print(stack.peek())
    1                                   try:
    >>> Stack(limit=0)                      Stack(limit=0)
    Traceback (most recent call last):  except ValueError as error:
    ValueError: limit must be positive      print(error)

An example whose output the docstring shows prints its value; one that shows an exception is caught, by its
name where the script knows the name (a builtin exception, a class the script defines), and the message
printed, as users catch errors. The expected outputs are not compared: the script is run afterwards, and what
it does is the truth. A docstring whose examples neither bind a name nor use a class of the module is a series
of calls, which realcode.py already takes as function lines. Standard library only.
"""
from __future__ import annotations

import ast
import builtins
import doctest
import re

DIRECTIVE = re.compile(r"[ \t]*#\s*doctest:.*$", re.M)
EXCEPTION = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?([A-Za-z_]\w*)\s*(?::|$)")
BUILTIN_EXCEPTIONS = frozenset(n for n in dir(builtins) if isinstance(getattr(builtins, n), type)
                               and issubclass(getattr(builtins, n), BaseException))


def doctest_blocks(tree: ast.Module) -> list[tuple[str, int, list[doctest.Example]]]:
    """(the docstring's owner, its line, its examples) for every class, function and method with examples."""
    parser = doctest.DocTestParser()
    out = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                doc = ast.get_docstring(child)
                if doc and ">>>" in doc:
                    try:
                        examples = parser.get_examples(doc)
                    except ValueError:  # a malformed example (bad indentation): doctest refuses it too
                        examples = []
                    if examples:
                        out.append((name, child.lineno, examples))
                visit(child, name + ".")
    visit(tree, "")
    return out


def binds(tree: ast.Module) -> bool:
    """Whether a statement binds a name (an assignment, a loop, an import): what makes examples a script."""
    return any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) for n in ast.walk(tree)) or \
        any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in tree.body)


def script_body(examples: list[doctest.Example], classes: set[str], own: set[str],
                allowed_imports: frozenset) -> tuple[str | None, str]:
    """The module-level code the examples make, or None and why not. classes: the classes the module defines (their
    use makes examples a script); own: every name the module binds (an import of it from the repository's
    modules is dropped: the script defines it); allowed_imports: the modules a script may import."""
    lines: list[str] = []
    scripted = False
    for ex in examples:
        src = DIRECTIVE.sub("", ex.source).strip("\n")
        try:
            tree = ast.parse(src)
        except SyntaxError:
            return None, "script:syntax"
        if not tree.body:
            continue
        if any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in tree.body):
            kept = []
            for stmt in tree.body:
                if isinstance(stmt, ast.ImportFrom) and not stmt.level and stmt.module and \
                        stmt.module.split(".")[0] not in allowed_imports and all(a.name in own for a in stmt.names):
                    continue  # `from the.module import Stack`: the script defines Stack itself
                if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                    mods = [a.name for a in stmt.names] if isinstance(stmt, ast.Import) else [stmt.module or ""]
                    if getattr(stmt, "level", 0) or any(m.split(".")[0] not in allowed_imports for m in mods):
                        return None, "script:import"
                kept.append(stmt)
            if not kept:
                continue
            if len(kept) != len(tree.body):
                src, tree = ast.unparse(ast.Module(body=kept, type_ignores=[])), ast.Module(body=kept, type_ignores=[])
        scripted = scripted or binds(tree) or any(isinstance(n, ast.Name) and n.id in classes for n in ast.walk(tree))
        if ex.exc_msg is not None:
            m = EXCEPTION.match(ex.exc_msg)
            name = m.group(1) if m and (m.group(1) in BUILTIN_EXCEPTIONS or m.group(1) in classes) else "Exception"
            lines += ["try:", *("    " + ln for ln in src.splitlines()), f"except {name} as error:", "    print(error)"]
        elif ex.want.strip() and len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr) and not _prints(tree.body[0]):
            lines.append(f"print({ast.get_source_segment(src, tree.body[0].value)})")
        else:
            lines.append(src)
    if not scripted:
        return None, "script:calls-only"
    body = "\n".join(lines) + "\n"
    try:
        ast.parse(body)
    except SyntaxError:
        return None, "script:syntax"
    return body, ""


def _prints(stmt: ast.Expr) -> bool:
    """Whether an expression statement is a call of print (its output is the example's)."""
    return isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Name) and stmt.value.func.id == "print"


def body_names(body: str) -> set[str]:
    """The names a script's module-level code reads and does not bind itself: what its definitions must provide."""
    tree = ast.parse(body)
    loads, bound = set(), set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            (loads if isinstance(n.ctx, ast.Load) else bound).add(n.id)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in n.names}
        elif isinstance(n, ast.ExceptHandler) and n.name:
            bound.add(n.name)
        elif isinstance(n, ast.arg):
            bound.add(n.arg)  # a lambda's parameters
    return loads - bound

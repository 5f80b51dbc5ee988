#!/usr/bin/env python3
"""Re-prints a Python program in the layout the model was trained on, with the line map both ways.

The bundled model only ever saw programs written back through ast.unparse (training/programs.py):
no docstrings, comments, blank lines inside functions or annotations. This script shows it the
user's program that way and says, line by line, where each statement went. The program is only
parsed, never run or imported. Python 3.9+ (ast.unparse), stdlib only.

Usage: canonical.py < PROGRAM.py

Writes one JSON object to stdout:
  {"canonical": TEXT, "to_canonical": [null, C1, C2, ...], "to_user": [null, U1, U2, ...]}
to_canonical[L] is the canonical line of the statement whose logical line holds the user's line L
(every line of a multi-line statement, of a compound statement's header, of a decorator, of an
`except` or `case` clause), null for lines that hold none (blank lines, comments, docstrings,
`else:`). to_user[C] is the first user line of what canonical line C holds, null for lines such as
`else:`. Index 0 is null in both.
A program that does not parse (or an interpreter that is too old) gives {"error": WHY}, exit 2.

Dropped: docstrings (module, class, function), argument and return annotations, annotations of
assignments outside class bodies (`x: T = v` becomes `x = v`, a bare `x: T` goes), and what only
those annotations needed: names imported from typing that nothing reads any more, and unread
module-level type aliases and type variables. A body left empty gets `pass`, standing where the
dropped statement stood. Everything else is kept.
"""
import ast
import io
import json
import sys
import tokenize


class _Unparser(getattr(ast, "_Unparser", object)):
    """ast.unparse without the doubled parentheses of a lone generator argument: all(x for x in xs)."""

    def visit_Call(self, node):
        if len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.GeneratorExp):
            self.set_precedence(ast._Precedence.ATOM, node.func)
            self.traverse(node.func)
            self.traverse(node.args[0])
        else:
            super().visit_Call(node)


def unparse(node):
    """The training layout's printer (training/programs.py writes every program with it)."""
    try:
        return _Unparser().visit(node)
    except Exception:  # an interpreter without the private unparser
        return ast.unparse(node)


def _is_docstring(st):
    return isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant) and isinstance(st.value.value, str)


class _Strip(ast.NodeTransformer):
    """Drops docstrings and annotations in place; every kept node keeps its user location.

    A dropped statement first becomes a marked `pass` (sweep removes it) so that a block it
    leaves empty keeps a `pass` where the statement stood. Annotations in a class body stay:
    there they declare fields (dataclasses, NamedTuple), which is what the class means.
    """

    def __init__(self):
        self.classes = [False]  # whether the innermost scope is a class body

    @staticmethod
    def _dropped(node):
        p = ast.copy_location(ast.Pass(), node)
        p.dropped = True
        return p

    def _scope(self, node, is_class):
        self.classes.append(is_class)
        self.generic_visit(node)
        self.classes.pop()
        if node.body and _is_docstring(node.body[0]):
            node.body[0] = self._dropped(node.body[0])
        return node

    def visit_Module(self, node):
        return self._scope(node, False)

    def visit_ClassDef(self, node):
        return self._scope(node, True)

    def visit_FunctionDef(self, node):
        node.returns = None
        return self._scope(node, False)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node):
        self.classes.append(False)
        self.generic_visit(node)
        self.classes.pop()
        return node

    def visit_arg(self, node):
        node.annotation = None
        return node

    def visit_AnnAssign(self, node):
        self.generic_visit(node)
        if self.classes[-1]:
            return node
        if node.value is None:
            return self._dropped(node)
        return ast.copy_location(ast.Assign(targets=[node.target], value=node.value, type_comment=None), node)


TYPING_MODULES = {"typing", "typing_extensions", "__future__"}


def _loaded(nodes):
    """Names that the nodes read."""
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store)}


def drop_typing(tree):
    """Marks what only the dropped annotations needed: names imported from typing that nothing reads any
    more, and module-level aliases and type variables (`Matrix = List[List[int]]`, `T = TypeVar("T")`)
    that nothing reads. Until a fixed point: dropping an alias can leave its import unread."""
    typing_names = set()
    for st in tree.body:
        if isinstance(st, ast.ImportFrom) and st.module in TYPING_MODULES:
            typing_names |= {a.asname or a.name for a in st.names}
        elif isinstance(st, ast.Import):
            typing_names |= {a.asname or a.name for a in st.names if a.name in TYPING_MODULES}
    changed = True
    while changed:
        changed = False
        live = [st for st in tree.body if not getattr(st, "dropped", False)]
        for st in live:
            read = _loaded(x for x in live if x is not st)
            if isinstance(st, ast.ImportFrom) and st.module in TYPING_MODULES and st.module != "__future__" or (
                isinstance(st, ast.Import) and all(a.name in TYPING_MODULES for a in st.names)
            ):
                kept = [a for a in st.names if (a.asname or a.name.split(".")[0]) in read]
                if len(kept) != len(st.names):
                    st.names[:] = kept
                    changed = True
                if not kept:
                    st.dropped = True
            elif isinstance(st, ast.ImportFrom) and st.module == "__future__" and [a.name for a in st.names] == ["annotations"]:
                st.dropped = True  # it only changes how annotations are evaluated
            elif (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
                  and st.targets[0].id not in read and _loaded([st.value]) & typing_names):
                st.dropped = changed = True
    return tree


def sweep(tree):
    """Removes the statements _Strip marked, leaving a `pass` in a block they would empty (not in the module)."""
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not (isinstance(block, list) and block and isinstance(block[0], ast.stmt)):
                continue
            kept = [st for st in block if not getattr(st, "dropped", False)]
            if not kept and not isinstance(node, ast.Module):
                kept = [ast.copy_location(ast.Pass(), block[0])]
            block[:] = kept
    return tree


def logical_lines(text, count):
    """span[L] = (first, last) line of the logical line that holds line L, as Python's tokenizer splits them."""
    span = [None] * (count + 1)
    skip = {tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER}
    start = None
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if start is None:
            if tok.type in skip:
                continue
            start = tok.start[0]
        if tok.type == tokenize.NEWLINE:
            end = max(start, min(tok.start[0], count))
            for line in range(start, end + 1):
                span[line] = (start, end)
            start = None
    return span


class ShapeError(Exception):
    pass


def pairs(user, canon):
    """Both trees' nodes in parallel, parents before children (the trees have one shape by construction)."""
    stack = [(user, canon)]
    while stack:
        a, b = stack.pop()
        if type(a) is not type(b):
            raise ShapeError("%s printed as %s" % (type(a).__name__, type(b).__name__))
        yield a, b
        kids_a, kids_b = list(ast.iter_child_nodes(a)), list(ast.iter_child_nodes(b))
        if len(kids_a) != len(kids_b):
            raise ShapeError("%s at line %s printed with other parts" % (type(a).__name__, getattr(a, "lineno", "?")))
        stack.extend(reversed(list(zip(kids_a, kids_b))))


def canonical(text):
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    count = text.count("\n") + 1
    tree = sweep(drop_typing(_Strip().visit(ast.parse(text))))
    out = unparse(tree)
    out = out + "\n" if out else ""
    canon = ast.parse(out)
    span = logical_lines(text, count)
    to_canonical = [None] * (count + 1)
    to_user = [None] * (out.count("\n") + 2)
    for a, b in pairs(tree, canon):
        line = getattr(a, "lineno", None)
        if line is None or not (1 <= line <= count):
            continue
        # The first node to claim a line is its statement (or decorator, or clause): parents come first.
        if to_user[b.lineno] is None:
            to_user[b.lineno] = line
        first, last = span[line] or (line, getattr(a, "end_lineno", None) or line)
        for l in range(first, last + 1):
            if to_canonical[l] is None:
                to_canonical[l] = b.lineno
    return {"canonical": out, "to_canonical": to_canonical, "to_user": to_user}


def main():
    if sys.version_info < (3, 9):
        result, code = {"error": "Python %d.%d has no ast.unparse (3.9+ is needed)" % sys.version_info[:2]}, 2
    else:
        text = sys.stdin.buffer.read().decode("utf-8-sig", errors="replace")
        try:
            result, code = canonical(text), 0
        except SyntaxError as e:
            result, code = {"error": "the program does not parse as Python (line %s: %s)" % (e.lineno, e.msg)}, 2
        except (ValueError, RecursionError, ShapeError, tokenize.TokenError) as e:
            result, code = {"error": "the program cannot be re-printed (%s: %s)" % (type(e).__name__, e)}, 2
    sys.stdout.write(json.dumps(result))
    sys.stdout.flush()
    return code


if __name__ == "__main__":
    sys.exit(main())

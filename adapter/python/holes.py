"""Hybrid mode's holes: the parts of a program that cannot run, filled with the model's predictions
while the rest of the program runs for real under the tracer. Python 3.8+, stdlib only.

Holes, found before the program runs (the first three) and while it runs (the fourth):
- a stub: a function whose body is only `...`, `pass`, a docstring or `raise NotImplementedError`,
  or whose body has a TODO comment and no `return` (abstract methods, overloads and Protocol
  members are declarations, not stubs); and any function the launch lists (`predict`). Its body is
  compiled as `return __ndbg_hole__(QUALNAME)` on its first statement's line, so the trace shows
  the call, that line and a return whose value is the prediction;
- a name that is never bound anywhere in the program and is no builtin: it stands in (a StandIn
  found through the module's builtins, so it never shows among the module's names);
- a module that no finder can import, imported from the user's code: a stand-in module whose
  attributes are stand-ins.
A stand-in's attributes are stand-ins; calling one is a hole. So is `input()` (standard input is
empty in a traced run): a call hole, filled where its result is assigned to a name (`x = input()`).

Before the run the tracer writes {"event": "holes", "functions": {QUALNAME: "stub"|"listed"},
"names": [...], "unknown": [listed names not defined], "bodies": [[FIRST, LAST], ...]} (the lines
of the stubs' bodies, docstrings aside), and {"event": "stand-in", "name": MODULE, "why": TEXT} as
each missing module is imported. Filling a hole: the tracer writes {"event": "hole", "kind": "function"|"call", "name": QUALNAME,
"line": N, "target"?: NAME} on its record stream and waits for one JSON line on its standard input:
{"repr": TEXT, "confidence"?: P} or {"error": TEXT}. A function hole's value is its return value,
predicted from the stub's own state; a call hole's is the value of `target`, the simple name the
call's result is assigned to on that line (`x = mod.f(a)`; a call that is not assigned so cannot
be filled). The text becomes a value through ast.literal_eval only: nothing the model writes is
ever run. A stub's own evidence goes with its request: "returns", the return annotation's text;
"type", that annotation as a literal's type where it names one (see _value_type); and
"docstring": {"repr": TEXT, "line": N} where an example of its docstring (doctest's `>>>`) calls
it with the very arguments of this call, by value (literals only, compared by type and value: no
__eq__ of the program runs): the debugger answers such a hole with that value. An instance of the
class the annotation names, written as its constructor's call with literal arguments, is built
by that class; an object's repr (`<...>`) becomes a stand-in; anything else is refused. A hole
that cannot be filled raises HoleError in the program, where the call is.

The clock of the run stops while the model answers: the program's time limit counts its own time.
"""

import ast
import builtins
import importlib.machinery
import io
import json
import re
import sys
import time
import tokenize
import types

# Bound before the program runs: a program that replaces json.loads changes nothing of how its holes are answered.
_loads = json.JSONDecoder().decode

# The clock of the limits, kept before a program (or the sealed run's fixed clocks) can replace it.
_monotonic = time.monotonic

HOLE_FUNC = "__ndbg_hole__"
# A prediction longer than this is refused before it is parsed.
MAX_ANSWER = 100000
_OBJECT_REPR = re.compile(r"<[^\n]*>")
_DECLARATIONS = {"abstractmethod", "abstractproperty", "overload"}


class HoleError(Exception):
    """Raised in the program where a hole could not be filled."""


# ---- finding holes in the program's text ----


def _is_docstring(stmt):
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _is_placeholder(stmt):
    return isinstance(stmt, ast.Pass) or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and stmt.value.value is Ellipsis)


def _raises_not_implemented(stmt):
    if not isinstance(stmt, ast.Raise) or stmt.exc is None:
        return False
    exc = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
    return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"


def _name_of(expr):
    """The last part of a decorator's or base's name: `abc.abstractmethod` -> "abstractmethod"."""
    if isinstance(expr, ast.Call):
        expr = expr.func
    if isinstance(expr, ast.Attribute):
        return expr.attr
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Subscript):
        return _name_of(expr.value)
    return None


def _own_returns(fn):
    """Whether the function's own body (not nested functions') has a `return` with a value."""
    todo = list(fn.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Return) and node.value is not None:
            return True
        todo.extend(ast.iter_child_nodes(node))
    return False


def _todo_lines(source):
    lines = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT and "TODO" in tok.string:
                lines.add(tok.start[0])
    except (tokenize.TokenError, SyntaxError):
        pass
    return lines


def _statements(fn):
    """A function's statements after its docstring; a docstring alone is its only statement."""
    return fn.body[1:] if _is_docstring(fn.body[0]) and len(fn.body) > 1 else fn.body


def _is_stub(fn, todo):
    if isinstance(fn, ast.AsyncFunctionDef) or any(_name_of(d) in _DECLARATIONS for d in fn.decorator_list):
        return False
    rest = _statements(fn)
    if (len(fn.body) == 1 and _is_docstring(fn.body[0])) or all(_is_placeholder(s) for s in rest):
        return True
    if len(rest) == 1 and _raises_not_implemented(rest[0]):
        return True
    end = getattr(fn, "end_lineno", None) or fn.body[-1].lineno
    return any(fn.lineno <= t <= end for t in todo) and not _own_returns(fn)


def _literal(node):
    """A literal's value, or _NO for anything else (nothing is evaluated)."""
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _NO


_NO = object()


def _same(a, b):
    """Equal by value and by type, all the way down (1, 1.0 and True are three values); only literal types are compared."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(v, b[k]) for k, v in a.items())
    if isinstance(a, (int, float, complex, str, bytes, bool, type(None), set, frozenset)):
        return a == b
    return False


class _Examples:
    """A stub's docstring examples that call it (`>>> name(literals)` and a literal result), and its
    parameters, to bind an example's call as Python binds a call."""

    def __init__(self, fn, examples):
        a = fn.args
        self.positional = [x.arg for x in getattr(a, "posonlyargs", [])] + [x.arg for x in a.args]
        self.keyword_only = [x.arg for x in a.kwonlyargs]
        self.vararg = a.vararg.arg if a.vararg else None
        self.kwarg = a.kwarg.arg if a.kwarg else None
        self.defaults = dict(zip(self.positional[len(self.positional) - len(a.defaults):], map(_literal, a.defaults)))
        self.defaults.update((x.arg, _literal(d)) for x, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None)
        self.examples = examples

    @classmethod
    def of(cls, fn, in_class):
        doc = ast.get_docstring(fn, clean=False)
        if not doc or ">>>" not in doc or in_class:
            # (a method's example needs the instance's state too: not read)
            return None
        import doctest  # the parser doctest itself uses; loaded only for a docstring with examples, before the program runs

        start = fn.body[0].lineno
        found = []
        for ex in doctest.DocTestParser().get_examples(doc):
            if ex.exc_msg is not None:
                continue
            try:
                call = ast.parse(ex.source.strip(), mode="eval").body
            except SyntaxError:
                continue
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == fn.name):
                continue
            want = ex.want.strip() or "None"  # (no output: the call returned None)
            if _literal(want) is _NO:
                continue
            args = [_literal(x) for x in call.args if not isinstance(x, ast.Starred)]
            kwargs = {k.arg: _literal(k.value) for k in call.keywords if k.arg is not None}
            if len(args) != len(call.args) or len(kwargs) != len(call.keywords) or _NO in args or _NO in kwargs.values():
                continue
            found.append((args, kwargs, want, start + ex.lineno))
        return cls(fn, found) if found else None

    def bind(self, args, kwargs):
        """The parameters' values for a call with these arguments, or None where Python would refuse it (or a default is no literal)."""
        bound = dict(zip(self.positional, args))
        extra = list(args[len(self.positional):])
        if extra and not self.vararg:
            return None
        if self.vararg:
            bound[self.vararg] = tuple(extra)
        rest = {}
        for k, v in kwargs.items():
            if k in bound:
                return None
            if k in self.positional or k in self.keyword_only:
                bound[k] = v
            elif self.kwarg:
                rest[k] = v
            else:
                return None
        if self.kwarg:
            bound[self.kwarg] = rest
        for k in self.positional + self.keyword_only:
            if k not in bound:
                if self.defaults.get(k, _NO) is _NO:
                    return None
                bound[k] = self.defaults[k]
        return bound

    def answer(self, values):
        """The first example whose call binds the parameters to these values: {"repr", "line"}."""
        for args, kwargs, want, line in self.examples:
            bound = self.bind(args, kwargs)
            if bound is not None and all(k in values and _same(v, values[k]) for k, v in bound.items()):
                return {"repr": want, "line": line}
        return None


_SIMPLE = {"int", "float", "bool", "str", "bytes", "None"}
_CONTAINERS = {"list": "list", "List": "list", "set": "set", "Set": "set", "frozenset": "frozenset", "FrozenSet": "frozenset",
               "dict": "dict", "Dict": "dict", "tuple": "tuple", "Tuple": "tuple"}


def _value_type(node, classes=(), top=True):
    """An annotation as the type of a literal: ["float"], ["list", T], ["dict", K, V], ["tuple", T, ...],
    ["tuple...", T] (tuple[T, ...]), ["set", T], ["frozenset", T], ["union", T, ...], ["None"]; the
    whole value a class the program defines at module level (`classes`), built from its constructor's
    arguments: ["class", NAME]; a part it cannot read (a class inside a container, Any, a TypeVar)
    is null, the whole where it is the whole."""
    vt = lambda n: _value_type(n, classes, False)  # noqa: E731 (the parts of a type)
    if isinstance(node, ast.Constant):
        if node.value is None:
            return ["None"]
        if isinstance(node.value, str):  # a forward reference: "list[int]"
            try:
                return _value_type(ast.parse(node.value, mode="eval").body, classes, top)
            except SyntaxError:
                return None
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union([vt(node.left), vt(node.right)])
    name = _name_of(node)
    if isinstance(node, (ast.Name, ast.Attribute)):
        if name in _SIMPLE:
            return [name]
        if top and isinstance(node, ast.Name) and name in classes:
            return ["class", name]
        kind = _CONTAINERS.get(name)  # a bare container: its items unread
        return None if kind is None else ["dict", None, None] if kind == "dict" else ["tuple...", None] if kind == "tuple" else [kind, None]
    if not isinstance(node, ast.Subscript):
        return None
    inner = node.slice.value if type(node.slice).__name__ == "Index" else node.slice  # (3.8 wraps it)
    parts = list(inner.elts) if isinstance(inner, ast.Tuple) else [inner]
    if name == "Optional" and len(parts) == 1:
        return _union([vt(parts[0]), ["None"]])
    if name == "Union":
        return _union([vt(p) for p in parts])
    kind = _CONTAINERS.get(name)
    if kind == "dict" and len(parts) == 2:
        return ["dict", vt(parts[0]), vt(parts[1])]
    if kind == "tuple":
        if len(parts) == 2 and isinstance(parts[1], ast.Constant) and parts[1].value is Ellipsis:
            return ["tuple...", vt(parts[0])]
        return ["tuple"] + [vt(p) for p in parts]
    if kind in ("list", "set", "frozenset") and len(parts) == 1:
        return [kind, vt(parts[0])]
    return None


def _union(types):
    return None if any(t is None for t in types) else ["union"] + types


def _construct(text, cls):
    """`Name(literal, key=literal)` for the program's class `cls` named Name: the instance its own
    constructor builds from those literals (the program's code runs, in the run; the text only
    names literals); _NO where the text is not such a call."""
    try:
        call = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return _NO
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == cls.__name__):
        return _NO
    args = [_literal(a) for a in call.args if not isinstance(a, ast.Starred)]
    kwargs = {k.arg: _literal(k.value) for k in call.keywords if k.arg is not None}
    if len(args) != len(call.args) or len(kwargs) != len(call.keywords) or _NO in args or _NO in kwargs.values():
        return _NO
    return cls(*args, **kwargs)


def _functions(tree):
    """(qualname, node) of every function, with the compiler's qualified names."""
    out = []

    def walk(node, prefix, in_function, protocol):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qual = prefix + child.name
                if not protocol:
                    out.append((qual, child))
                walk(child, qual + ".<locals>.", True, False)
            elif isinstance(child, ast.ClassDef):
                is_protocol = any(_name_of(b) == "Protocol" for b in child.bases)
                walk(child, prefix + child.name + ".", False, is_protocol)
            elif not isinstance(child, ast.Lambda):
                walk(child, prefix, in_function, protocol)

    walk(tree, "", False, False)
    return out


def _bound_names(tree):
    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        else:
            for attr in ("name", "rest"):  # match patterns: MatchAs, MatchStar, MatchMapping
                value = getattr(node, attr, None) if type(node).__name__.startswith("Match") else None
                if isinstance(value, str):
                    bound.add(value)
    return bound


def _free_names(tree):
    """Names read somewhere and bound nowhere in the program, builtins and dunders aside."""
    loads = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    free = loads - _bound_names(tree) - set(dir(builtins))
    return sorted(n for n in free if not (n.startswith("__") and n.endswith("__")))


def _dotted(expr):
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        inner = _dotted(expr.value)
        return inner and inner + "." + expr.attr
    return None


def _assigned_calls(tree):
    """line -> (target, callee): lines `NAME = CALLEE(...)` (or `NAME: T = ...`), where a call hole's value can be read."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if isinstance(value, ast.Await):
            value = value.value
        if isinstance(target, ast.Name) and isinstance(value, ast.Call):
            callee = _dotted(value.func)
            if callee:
                out[node.lineno] = (target.id, callee)
    return out


def _untraced(name):
    return HoleError("%s() is a hole reached before tracing started (in the module's body): hybrid mode fills holes the traced code reaches" % name)


# ---- stand-ins ----


class StandIn:
    """A value the program cannot have for real (a missing name, module attribute or object): its
    attributes are stand-ins, calling it is a hole."""

    __slots__ = ("_name", "_holes", "_shown")

    def __init__(self, name, holes, shown=None):
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_holes", holes)
        object.__setattr__(self, "_shown", shown)

    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return StandIn(self._name + "." + attr, self._holes)

    def __call__(self, *args, **kwargs):
        return self._holes.fill_call(self._name)

    def __repr__(self):
        return self._shown or "<predicted %s>" % self._name


class StandInModule(types.ModuleType):
    """A module that could not be imported: every attribute is a stand-in."""

    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return StandIn(self.__name__ + "." + attr, self.__ndbg_holes__)

    def __repr__(self):
        return "<module %r (not installed: predicted)>" % self.__name__


class _StandInLoader:
    def __init__(self, holes):
        self.holes = holes

    def create_module(self, spec):
        module = StandInModule(spec.name)
        module.__ndbg_holes__ = self.holes
        return module

    def exec_module(self, module):
        pass


class _StandInFinder:
    """The last finder on sys.meta_path: a module no other finder has, imported by the user's code
    (or inside a stand-in package), becomes a stand-in module."""

    def __init__(self, holes):
        self.holes = holes

    def find_spec(self, fullname, path=None, target=None):
        parent = fullname.rpartition(".")[0]
        if not (parent and isinstance(sys.modules.get(parent), StandInModule)) and not self.holes.from_user_code():
            return None
        self.holes.modules.append(fullname)
        self.holes.notice({"event": "stand-in", "name": fullname, "why": "no module named %r" % fullname})
        return importlib.machinery.ModuleSpec(fullname, _StandInLoader(self.holes), is_package=True)


# ---- the holes of one run ----


class Holes:
    """The holes of one traced run (see the module's text); `run` is the tracer's Run."""

    def __init__(self, run, replies, predict=()):
        self.run = run
        self.replies = replies
        self.predict = set(predict)
        self.stubs = {}
        # qualname -> the stub's return annotation (its text, its literal type), and its docstring's examples (_Examples)
        self.returns = {}
        self.examples = {}
        self.assigned = {}
        self.modules = []
        self.finder = _StandInFinder(self)

    def notice(self, record):
        self.run.write(record)

    def compile(self, source, filename):
        """The program's code with its stubs' bodies turned into holes; writes the "holes" record."""
        text = source.decode("utf-8-sig", "replace") if isinstance(source, bytes) else source
        tree = ast.parse(source, filename)
        todo = _todo_lines(text)
        listed = set()
        bodies = []
        classes = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
        for qual, fn in _functions(tree):
            named = qual in self.predict or fn.name in self.predict
            if named:
                listed.add(qual if qual in self.predict else fn.name)
            if named or _is_stub(fn, todo):
                self.stubs[qual] = "listed" if named else "stub"
                body = _statements(fn)
                if fn.returns is not None and hasattr(ast, "unparse"):
                    self.returns[qual] = (ast.unparse(fn.returns), _value_type(fn.returns, classes))
                owner = qual.rpartition(".")[0]
                examples = _Examples.of(fn, in_class=bool(owner) and not owner.endswith("<locals>"))
                if examples:
                    self.examples[qual] = examples
                if not named and body[0].lineno > fn.lineno:
                    # The lines the model reads as `...` (a one-line def keeps its line).
                    bodies.append([body[0].lineno, getattr(fn, "end_lineno", None) or body[-1].lineno])
                self._hollow(fn, qual)
        self.names = _free_names(tree)
        self.assigned = _assigned_calls(tree)
        missing = sorted(self.predict - listed)
        self.notice({"event": "holes", "functions": self.stubs, "names": self.names, "unknown": missing, "bodies": bodies})
        return compile(tree, filename, "exec", dont_inherit=True)

    @staticmethod
    def _hollow(fn, qual):
        body = _statements(fn)
        at = body[0]
        call = ast.Call(func=ast.Name(id=HOLE_FUNC, ctx=ast.Load()), args=[ast.Constant(value=qual)], keywords=[])
        ret = ast.Return(value=call)
        for node in (ret, call, call.func, call.args[0]):
            ast.copy_location(node, at)
            node.end_lineno, node.end_col_offset = at.lineno, at.col_offset
        fn.body = fn.body[:1] + [ret] if body is not fn.body else [ret]

    def install(self, module):
        """The module's builtins hold the stand-ins and the hole function; the stand-in finder goes last."""
        names = dict(vars(builtins))
        names.update((n, StandIn(n, self)) for n in self.names)
        names[HOLE_FUNC] = self.fill_function
        names["input"] = self.fill_input
        module.__builtins__ = names
        sys.meta_path.append(self.finder)

    def close(self):
        if self.finder in sys.meta_path:
            sys.meta_path.remove(self.finder)
        for name in self.modules:
            sys.modules.pop(name, None)

    def from_user_code(self):
        """Whether the import under way comes from the program's files (not a library's optional import)."""
        frame = sys._getframe(2)
        while frame is not None and (frame.f_code.co_filename.startswith("<frozen") or frame.f_globals.get("__name__", "").startswith("importlib")):
            frame = frame.f_back
        return frame is not None and self.run.file_of(frame.f_code.co_filename) is not None

    # ---- filling ----

    def _traced_caller(self):
        frame = sys._getframe(2)
        while frame is not None and frame not in self.run.stack:
            frame = frame.f_back
        return frame

    def _in_program(self, frame):
        """Whether the frame runs the main program's code (the lines `assigned` speaks of)."""
        return self.run.file_of(frame.f_code.co_filename) == ""

    def traced(self, frame):
        """A hole met while a seek goes with no trace function (tracer.Run.go_fast): tracing takes
        up again first, so that it is asked as a counting run of the same seek asks it."""
        if self.run.monitor is not None:
            self.run.trace_again(frame)

    def fill_function(self, qual):
        frame = sys._getframe(1)
        self.traced(frame)
        if frame not in self.run.stack:
            raise _untraced(qual)
        request = {"kind": "function", "name": qual, "line": frame.f_lineno}
        if qual in self.returns:
            request["returns"], kind = self.returns[qual]
            if kind is not None:
                request["type"] = kind
        examples = self.examples.get(qual)
        example = examples and examples.answer(frame.f_locals)
        if example:
            request["docstring"] = example
        caller = frame.f_back
        if caller in self.run.stack and self._in_program(caller):
            # Where the caller assigns the result straight to a name, the debugger may read the value there.
            target, callee = self.assigned.get(caller.f_lineno, (None, None))
            if target is not None and callee.split(".")[-1] == qual.split(".")[-1]:
                request["target"] = target
        return self.ask(request, qual + "()")

    def fill_input(self, prompt=""):
        """input(): what the user would type is a hole (the prompt is written, as input() does)."""
        sys.stdout.write(str(prompt))
        return self.fill_call("input")

    def fill_call(self, name):
        self.traced(sys._getframe(1))
        frame = self._traced_caller()
        if frame is None:
            raise _untraced(name)
        line = frame.f_lineno
        target, callee = self.assigned.get(line, (None, None)) if self._in_program(frame) else (None, None)
        if target is None or callee.split(".")[-1] != name.split(".")[-1]:
            raise HoleError("%s() cannot run here and its value cannot be predicted: hybrid mode predicts a missing call whose result is assigned to a name (x = %s(...))" % (name, name))
        return self.ask({"kind": "call", "name": name, "line": line, "target": target}, name + "()")

    def ask(self, request, what):
        request["event"] = "hole"
        run = self.run
        # The model's time is not the program's: the limits wait while it answers.
        paused = _monotonic()
        deadline, kill_at = run.deadline, run.kill_at
        run.deadline = run.kill_at = float("inf")
        try:
            run.write(request)
            line = self.replies.readline()
        finally:
            spent = _monotonic() - paused
            run.deadline, run.kill_at = deadline + spent, kill_at + spent
        if line is None:
            # The sealed run (sealed.py): no answer yet. The run stops at this hole; the debugger
            # runs the program again with its answer.
            run.limit("hole")
        try:
            answer = _loads(line) if line else {"error": "the debugger gave no answer"}
        except ValueError:
            answer = {"error": "the debugger's answer is not JSON"}
        if not isinstance(answer, dict):
            answer = {"error": "the debugger's answer is not an object"}
        if not isinstance(answer.get("repr"), str):
            raise HoleError("%s is a hole that could not be filled: %s" % (what, answer.get("error") or "no value"))
        kind = request.get("type")
        cls = None
        if kind and kind[0] == "class":
            cls = sys._getframe(2).f_globals.get(kind[1])  # the stub's module: its own class, by the name its annotation gives
        return self.value_of(answer["repr"], what, cls if isinstance(cls, type) else None)

    def value_of(self, text, what, cls=None):
        """The value a prediction stands for: a literal; an instance of `cls` (the class the hole's
        annotation names, the program's own) built by calling it with literal arguments, as
        `Point(x=1, y=2)` reads; an object's repr `<...>` as a stand-in. Nothing else."""
        if len(text) <= MAX_ANSWER:
            try:
                return ast.literal_eval(text.strip())
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                pass
            built = _construct(text.strip(), cls) if cls is not None else _NO
            if built is not _NO:
                return built
            if _OBJECT_REPR.fullmatch(text.strip()):
                return StandIn(what, self, text.strip())
        shown = text if len(text) <= 200 else text[:200] + "..."
        raise HoleError("the prediction for %s was refused: %r is not a literal value (only literals are used; nothing the model writes is run)" % (what, shown))

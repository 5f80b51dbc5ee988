#!/usr/bin/env python3
"""Runs one module's doctests, or one test file's tests, and records the calls of the repository's functions.

    python3 training/realcode_capture.py FILE.py ROOT [--tests] [--per-function N] [--max-repr N]

Run by training/realcode.py in a child process (a timeout and a memory limit around it); never
imported by it. FILE is imported as a module of its package under ROOT (so its relative imports
work). Without --tests its doctests run and the calls of FILE's own module-level functions are
recorded; with --tests FILE is a test file, its tests run (training/realcode_tests.py, no pytest
needed) and the calls of every module-level function of another file under ROOT are recorded.
Calls are watched by a `sys.settrace` function; every one whose arguments all have reprs that
`ast.literal_eval` turns back into equal values is written to stdout as one JSON line:

    {"file": "PATH/UNDER/ROOT.py", "func": NAME, "input": "ARGUMENT TEXT", "output": "REPR OF THE RESULT"}

or, for a call that ended in an exception, "raised": "REPR OF THE EXCEPTION" in place of "output"

(at most N distinct inputs per function, in the order the calls come). An audit hook refuses
writing files, sockets, subprocesses and other process-level effects, so a module that tries any
of them fails instead of touching the machine; an import hook makes every module that is neither
the standard library's nor under ROOT missing, so an optional import (`try: import x`) is absent
on every machine alike. Standard library only.
"""
from __future__ import annotations

import ast
import doctest
import importlib.util
import io
import json
import os
import random
import sys

from realcode_tests import OutOfTime, run_tests  # beside this file (the script's folder is first on sys.path)

CO_VARARGS, CO_VARKEYWORDS = 0x04, 0x08
GENERATORS = 0x20 | 0x80 | 0x100 | 0x200  # generator, coroutine, iterable coroutine, async generator: no value to return
# Audit events that touch the world outside the process; `open` is refused only for writing.
DENIED = ("socket.", "subprocess.", "os.system", "os.exec", "os.spawn", "os.posix_spawn", "os.fork", "os.kill",
          "os.remove", "os.unlink", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.truncate", "shutil.",
          "urllib.", "http.", "ftplib.", "smtplib.", "webbrowser.", "ctypes.", "os.putenv", "os.chdir")
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


class Denied(RuntimeError):
    pass


def audit(event: str, args: tuple) -> None:
    if event == "open":
        mode, flags = (args + (None, None))[1:3]
        if (isinstance(mode, str) and any(c in mode for c in "wax+")) or (isinstance(flags, int) and flags & WRITE_FLAGS):
            raise Denied(f"open for writing: {args[0]!r}")
    elif event.startswith(DENIED):
        raise Denied(event)


def literal(v, max_repr: int) -> str | None:
    """repr(v) when literal_eval gives back an equal value with the same repr, else None."""
    try:
        r = repr(v)
    except Exception:
        return None
    if len(r) > max_repr:
        return None
    try:
        back = ast.literal_eval(r)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    try:
        return r if back == v and repr(back) == r else None
    except Exception:
        return None


def argument_text(frame, max_repr: int) -> str | None:
    """The call's arguments as source text (`[1, 2], 'x', key=3`), from the frame at its call event."""
    co, loc = frame.f_code, frame.f_locals
    names = co.co_varnames
    npos, nkw = co.co_argcount, co.co_kwonlyargcount
    parts = []
    for name in names[:npos]:
        r = literal(loc[name], max_repr)
        if r is None:
            return None
        parts.append(r)
    i = npos + nkw
    if co.co_flags & CO_VARARGS:
        for v in loc[names[i]]:
            r = literal(v, max_repr)
            if r is None:
                return None
            parts.append(r)
        i += 1
    for name in names[npos:npos + nkw]:
        r = literal(loc[name], max_repr)
        if r is None:
            return None
        parts.append(f"{name}={r}")
    if co.co_flags & CO_VARKEYWORDS:
        for k, v in loc[names[i]].items():
            r = literal(v, max_repr)
            if r is None or not k.isidentifier():
                return None
            parts.append(f"{k}={r}")
    return ", ".join(parts)


class OnlyStdlibAndRoot:
    """A meta-path finder that makes every top-level module outside the standard library and ROOT missing."""

    def __init__(self, roots: list[str]):
        self.roots = roots

    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top in sys.stdlib_module_names or top in sys.builtin_module_names:
            return None
        here = [os.path.join(r, top) for r in self.roots]
        if any(os.path.exists(h + ".py") or os.path.isdir(h) for h in here):
            return None
        raise ModuleNotFoundError(f"No module named {top!r} (outside the standard library and the repository)", name=name)


def load(path: str, root: str):
    """Imports path as the module its place under root names (pkg.sub.mod), so relative imports resolve: through
    its package first (whose __init__ may import it), else from the file alone."""
    rel = os.path.relpath(path, root)[:-3].replace(os.sep, ".")
    name = rel[:-9] if rel.endswith(".__init__") else rel
    sys.path += [root, os.path.dirname(path)]  # after the stdlib: a file named queue.py must not shadow it
    sys.meta_path.insert(0, OnlyStdlibAndRoot([root, os.path.dirname(path)]))
    try:
        mod = importlib.import_module(name)
        if os.path.realpath(getattr(mod, "__file__", None) or "") == path:
            return mod
    except ImportError:  # not importable by that name (no package, a name the stdlib has): the file alone
        pass
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


class Recorder:
    """The trace function: records calls of the wanted functions, at most per_function distinct inputs each,
    with what each returned or the exception it ended with."""

    def __init__(self, wanted, per_function: int, max_repr: int):
        self.wanted = wanted  # code object -> (file, name) or None; called once per code object
        self.per_function, self.max_repr = per_function, max_repr
        self.known: dict = {}
        self.seen: dict[tuple, set] = {}
        self.captured: list[dict] = []

    def __call__(self, frame, event, arg):
        if event != "call":
            return None
        co = frame.f_code
        if co not in self.known:
            self.known[co] = None if co.co_flags & GENERATORS else self.wanted(co, frame.f_globals)
        key = self.known[co]
        if key is None:
            return None
        got = self.seen.setdefault(key, set())
        if len(got) >= self.per_function:
            return None
        text = argument_text(frame, self.max_repr)
        if text is None or text in got:
            return None
        got.add(text)
        return self.watch(key, text)

    def watch(self, key: tuple, text: str):
        """The local trace function of one recorded call. A profile hook cannot tell a return from an exception
        leaving the frame (both give None); here the call raised when its last event before the return was an
        exception (one it caught is followed by the line of its handler)."""
        raised = [None]

        def local(frame, event, arg):
            if event == "exception":
                raised[0] = arg[1]
            elif event == "line":
                raised[0] = None
            elif event == "return":
                self.finish(key, text, arg, raised[0] if arg is None else None)
            return local
        return local

    def finish(self, key: tuple, text: str, value, raised) -> None:
        (file, name) = key
        if raised is not None and (not isinstance(raised, Exception) or isinstance(raised, OutOfTime)):
            return  # KeyboardInterrupt, a test's CPU budget running out: not how the call ends on its own
        try:
            r = repr(value if raised is None else raised)
        except Exception:
            return
        self.captured.append({"file": file, "func": name, "input": text, **({"raised": r} if raised is not None else {"output": r})})


def module_function(co, globals_: dict) -> bool:
    """Whether a code object is a module-level function's: the name its module binds runs this very code."""
    return co.co_qualname == co.co_name and getattr(globals_.get(co.co_name), "__code__", None) is co


def run_doctests(mod, record: Recorder) -> None:
    finder = doctest.DocTestFinder(recurse=True)
    runner = doctest.DocTestRunner(verbose=False, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in sorted(finder.find(mod, mod.__name__), key=lambda t: t.name):
        random.seed(0)  # doctests that draw random inputs draw the same ones every build
        sys.settrace(record)
        try:
            runner.run(test, out=lambda s: None)
        finally:
            sys.settrace(None)


def main() -> int:
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("root")
    ap.add_argument("--tests", action="store_true", help="FILE is a test file: run its tests, record other files' functions")
    ap.add_argument("--per-function", type=int, default=12)
    ap.add_argument("--max-repr", type=int, default=120)
    a = ap.parse_args()
    path, root = os.path.realpath(a.file), os.path.realpath(a.root)
    out = sys.stdout
    sys.dont_write_bytecode = True
    sys.addaudithook(audit)
    sys.stdout = io.StringIO()  # the module's, the doctests' and the tests' prints are not ours
    mod = load(path, root)

    def wanted(co, globals_):
        file = os.path.realpath(co.co_filename)
        mine = file != path if a.tests else file == path
        if mine and file.startswith(root + os.sep) and module_function(co, globals_):
            return os.path.relpath(file, root).replace(os.sep, "/"), co.co_name
        return None

    record = Recorder(wanted, a.per_function, a.max_repr)
    if a.tests:
        run_tests(mod, record)
    else:
        run_doctests(mod, record)
    for c in record.captured:
        out.write(json.dumps(c) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

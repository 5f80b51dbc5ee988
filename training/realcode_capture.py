#!/usr/bin/env python3
"""Runs one module's doctests and records the calls of its own top-level functions.

    python3 training/realcode_capture.py FILE.py ROOT [--per-function N] [--max-repr N]

Run by training/realcode.py in a child process (a timeout and a memory limit around it); never
imported by it. The module is imported from FILE as a module of its package under ROOT (so its
relative imports work), its doctests run under a `sys.setprofile` hook, and every call of one of
its module-level functions whose arguments all have reprs that `ast.literal_eval` turns back into
equal values is written to stdout as one JSON line:

    {"func": NAME, "input": "ARGUMENT TEXT", "output": "REPR OF THE RESULT"}

(at most N distinct inputs per function, in the order the doctests make them). An audit hook
refuses writing files, sockets, subprocesses and other process-level effects, so a module that
tries any of them fails instead of touching the machine. Standard library only.
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


def load(path: str, root: str):
    """Imports path as the module its place under root names (pkg.sub.mod), so relative imports resolve."""
    rel = os.path.relpath(path, root)[:-3].replace(os.sep, ".")
    name = rel[:-9] if rel.endswith(".__init__") else rel
    sys.path += [root, os.path.dirname(path)]  # after the stdlib: a file named queue.py must not shadow it
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def main() -> int:
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("root")
    ap.add_argument("--per-function", type=int, default=12)
    ap.add_argument("--max-repr", type=int, default=120)
    a = ap.parse_args()
    path = os.path.realpath(a.file)
    out = sys.stdout
    sys.dont_write_bytecode = True
    sys.addaudithook(audit)
    sys.stdout = io.StringIO()  # the module's and the doctests' prints are not ours
    mod = load(path, os.path.realpath(a.root))
    funcs = {}
    for name, v in vars(mod).items():
        co = getattr(v, "__code__", None)
        if (co is not None and co.co_filename == path and getattr(v, "__qualname__", None) == name == co.co_name
                and not co.co_flags & GENERATORS):
            funcs[co] = name
    seen: dict[str, set] = {}
    open_calls: dict[int, tuple[str, str]] = {}
    captured = []

    def hook(frame, event, arg):
        if event == "call":
            name = funcs.get(frame.f_code)
            if name is None:
                return
            got = seen.setdefault(name, set())
            if len(got) >= a.per_function:
                return
            text = argument_text(frame, a.max_repr)
            if text is not None and text not in got:
                got.add(text)
                open_calls[id(frame)] = (name, text)
        elif event == "return" and id(frame) in open_calls:
            name, text = open_calls.pop(id(frame))
            try:
                r = repr(arg)
            except Exception:
                return
            captured.append({"func": name, "input": text, "output": r})

    finder = doctest.DocTestFinder(recurse=True)
    runner = doctest.DocTestRunner(verbose=False, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in sorted(finder.find(mod, mod.__name__), key=lambda t: t.name):
        random.seed(0)  # doctests that draw random inputs draw the same ones every build
        sys.setprofile(hook)
        try:
            runner.run(test, out=lambda s: None)
        finally:
            sys.setprofile(None)
    for c in captured:
        out.write(json.dumps(c) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

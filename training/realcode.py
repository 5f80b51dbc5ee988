#!/usr/bin/env python3
"""Builds a corpus of Python written by people, called with the inputs their own doctests and tests use.

    python3 training/realcode.py --src DIR [--src DIR ...] --out-train FILE.jsonl \
        --out-heldout FILE.jsonl [--keep-heldout] (--exclude CORPUS.jsonl ... | --no-exclude) [options]

Each --src is a repository's root (its folder name names it, `NAME=DIR` names it otherwise).
Every .py file outside test, docs and benchmark folders whose imports are harmless runs its
doctests in a child process (training/realcode_capture.py: timeout, memory limit, no writes,
no sockets, no subprocesses) that records the calls of the module's top-level functions with
arguments that `ast.literal_eval` re-creates; every test file runs its tests the same way
(training/realcode_tests.py, no pytest) and the calls they make of the other files' top-level
functions are recorded for those files. Each call becomes a line

    {"code", "input", "entry", "output", "id", "source"}

whose code is the function with the functions, classes, constants and standard-library imports
it needs from its module and from the repository's modules it imports names from, cut from the
files in their original layout (docstrings, comments, blank lines and annotations kept), and
whose output is what the call returned in the module; a call that ended in an exception there
(a doctest of an error, a test's assertRaises) has "raises", the exception's repr, in its place.
Test code is never part of a line. A line is kept when it runs standalone (fresh module,
PYTHONHASHSEED=0, twice) to that same output or exception under
the rules of programs.py's generated lines (training/runner.py: MIN..MAX traced events, short reprs, no addresses,
no hash-ordered sets of strings, little printing); lines are deduplicated by AST (program and
input), at most --per-function inputs per function, and every function that matches an excluded
corpus (CRUXEval) by normalized text or AST is refused. Files are then split per repository: a
seeded order of its files goes to the held-out set (at most --per-file lines each) while their
lines stay within --heldout-share of its lines, the other files to training, and no function of
the held-out set stays in training; --keep-heldout keeps the lines the held-out file has, first and
as they are, and their files out of training (--frozen-heldout: and adds nothing to them). Every held-out file also gives up to --per-file calls
that raise, after the lines it has (so a file held out before calls that raise were kept gains them).
With --scripts-per-file N, each file also gives up to N scripts (training/realcode_scripts.py): a docstring's
examples that build objects or bind names, as module-level code below the definitions they read, each a line

    {"code", "input": "", "script": true, "id", "source"}

that `ndbg data` runs whole, kept when it runs to the same printed output twice, within --script-max-events,
with no uncaught exception; a default repr's address is fit there (the tracer writes it " at 0x..."). The
scripts of held-out files, and any that holds a held-out function, never train: the former go to
--out-heldout-scripts (a held-out set of real scripts) where it is given.
Standard library only; deterministic for the same sources and options. See training/DATA.md.
"""
from __future__ import annotations

import argparse
import ast
import builtins
import hashlib
import json
import os
import re
import resource
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make "training" importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from training.dedupe import CRUXEVAL, code_key, input_key, load_excluded, normalize_ws, rename_entry  # noqa: E402
from training.printer import canonical  # noqa: E402
from training.realcode_scripts import body_names, doctest_blocks, script_body  # noqa: E402
from training.runner import Runner, line_result  # noqa: E402

CAPTURE = Path(__file__).resolve().parent / "realcode_capture.py"

# Standard-library modules a line's code may import: deterministic, no effects outside the process.
CODE_IMPORTS = frozenset("""__future__ typing math cmath re string itertools functools operator collections heapq bisect
dataclasses enum fractions decimal statistics numbers copy textwrap unicodedata keyword abc types array struct binascii
base64 hashlib zlib contextlib""".split())
# Modules a file may import to have its doctests run (the audit hook still refuses their effects).
RUN_IMPORTS = CODE_IMPORTS | frozenset("""sys random time timeit datetime doctest pprint json warnings inspect unittest
html io importlib uuid""".split())
# A test file may also import os (most do, to put the repository on sys.path); the audit hook still refuses effects.
TEST_IMPORTS = RUN_IMPORTS | {"os"}
# Folders never read: docs, and anything that looks like an evaluation benchmark; test folders hold test files only.
SKIP_DIRS = re.compile(r"^(docs?|examples?|bench(marks?)?|scripts|\..*|__pycache__|build|dist)$", re.I)
TEST_DIRS = re.compile(r"^(tests?|testing)$", re.I)
BENCHMARK = re.compile(r"human_?eval|mbpp|apps|cruxeval|livecodebench|code_?contests|leetcode|codeforces|ds1000|bigcodebench", re.I)
MAX_CODE_LINES, MAX_CODE_CHARS = 80, 3000
# A script as the model reads it (no docstrings): with its first state it must leave room for steps in a session's
# 2,400 characters (ndbg data --max-chars).
SCRIPT_MAX_LINES, SCRIPT_MAX_CHARS = 60, 1600


# ---------------------------------------------------------------------------------------------
# Finding files.
def python_files(root: Path, why: Counter) -> tuple[list[Path], list[Path]]:
    """A repository's source files worth reading and its test files (`test_*.py`, `*_test.py`, files in
    test folders), each sorted; benchmark-looking paths are counted and skipped."""
    sources, tests = [], []
    for dirpath, dirs, files in os.walk(root):
        kept = []
        for d in sorted(dirs):
            if BENCHMARK.search(d):
                why["benchmark-folder"] += 1
            elif not SKIP_DIRS.match(d):
                kept.append(d)
        dirs[:] = kept
        in_tests = any(TEST_DIRS.match(part) for part in Path(dirpath).relative_to(root).parts)
        for f in sorted(files):
            if not f.endswith(".py") or f in ("setup.py", "conftest.py") or (in_tests and f == "__init__.py"):
                continue
            if BENCHMARK.search(f):
                why["benchmark-file"] += 1
            elif in_tests or f.startswith("test_") or f.endswith("_test.py"):
                tests.append(Path(dirpath) / f)
            else:
                sources.append(Path(dirpath) / f)
    return sorted(sources), sorted(tests)


def sibling(name: str, path: Path, root: Path) -> bool:
    """Whether an absolute import's top name is a module of the repository itself."""
    return any((d / name).with_suffix(".py").exists() or (d / name / "__init__.py").exists() for d in (path.parent, root))


def optional_imports(tree: ast.Module) -> set[ast.stmt]:
    """Imports inside a `try` that catches ImportError: the child makes them missing, and the file copes."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(h.type is not None and re.search(r"\b(ImportError|ModuleNotFoundError)\b",
                                                                                ast.unparse(h.type)) for h in node.handlers):
            out |= {n for stmt in node.body for n in ast.walk(stmt) if isinstance(n, (ast.Import, ast.ImportFrom))}
    return out


def run_refusal(tree: ast.Module, path: Path, root: Path, allowed: frozenset = RUN_IMPORTS) -> str | None:
    """Why a file must not be run (an import outside `allowed` that is not the repository's own nor optional), or None."""
    optional = optional_imports(tree)
    for node in ast.walk(tree):
        if node in optional:
            continue
        if isinstance(node, ast.Import):
            tops = [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            tops = [] if node.level else [(node.module or "").split(".")[0]]
        else:
            continue
        for top in tops:
            if top not in allowed and not sibling(top, path, root):
                return f"imports:{top}"
    return None


# ---------------------------------------------------------------------------------------------
# Cutting a function out of its module with what it needs, in the original layout.
def is_main_guard(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and "__name__" in ast.unparse(node.test)


def bound_names(node: ast.stmt) -> set[str]:
    """Names a top-level statement binds in the module."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"}
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            out.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            out |= {(a.asname or a.name).split(".")[0] for a in n.names if a.name != "*"}
    return out


def bindings(node: ast.stmt) -> dict[str, str]:
    """What each name a top-level statement binds stands for: for an import the module and name it imports (two
    imports of one thing agree), else the statement itself."""
    if isinstance(node, ast.Import):
        return {(a.asname or a.name).split(".")[0]: a.name if a.asname else a.name.split(".")[0] for a in node.names}
    if isinstance(node, ast.ImportFrom):
        return {a.asname or a.name: f"{node.module}:{a.name}" for a in node.names if a.name != "*"}
    return dict.fromkeys(bound_names(node), ast.dump(node))


def free_names(node: ast.stmt) -> set[str]:
    """Names a statement reads that it does not bind itself (parameters and local variables)."""
    loads, local = set(), set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            (loads if isinstance(n.ctx, ast.Load) else local).add(n.id)
        elif isinstance(n, ast.arg):
            local.add(n.arg)
        elif n is not node and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            local.add(n.name)  # a helper defined inside the function (a dataclass file's tree walkers, mostly)
        elif n is not node and isinstance(n, (ast.Import, ast.ImportFrom)):
            local |= {(a.asname or a.name).split(".")[0] for a in n.names if a.name != "*"}  # checked by nested_imports
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            loads |= set(n.names)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        local.discard(node.name)
        globals_ = {name for n in ast.walk(node) if isinstance(n, ast.Global) for name in n.names}
        return loads - (local - globals_) - {node.name}
    return loads


class Module:
    """A parsed source file: its top-level statements, what each binds and where its text lies."""

    BUILTINS = frozenset(dir(builtins))

    def __init__(self, text: str, path: Path | None = None, repo: "Repository | None" = None):
        self.text, self.path, self.repo = text, path, repo
        self.lines = text.splitlines()
        self.tree = ast.parse(text)
        body = self.tree.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            body = body[1:]  # the module docstring is not the function's
        self.body = [n for n in body if not is_main_guard(n)]
        self.binders: dict[str, list[int]] = defaultdict(list)
        for i, n in enumerate(self.body):
            for name in bound_names(n):
                self.binders[name].append(i)
        self.funcs = {n.name: i for i, n in enumerate(self.body) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        # Names a `from X import ...` of the repository's own modules binds: followed into X, never kept as imports.
        self.imported: dict[str, tuple[Path, str]] = {}
        self.stars: list[Path] = []
        for i, n in enumerate(self.body):
            target = repo.resolve(n, path) if repo and isinstance(n, ast.ImportFrom) and n.module != "__future__" else None
            for a in n.names if target else []:
                if a.name == "*":
                    self.stars.append(target)
                    continue
                self.imported[a.asname or a.name] = (target, a.name)
                self.binders[a.asname or a.name].remove(i)
                if not self.binders[a.asname or a.name]:
                    del self.binders[a.asname or a.name]
        self.futures = [i for i, n in enumerate(self.body) if isinstance(n, ast.ImportFrom) and n.module == "__future__"]

    def lookup(self, name: str, depth: int = 0) -> tuple[list[tuple["Module", int]] | None, str | None]:
        """The statements that bind a name this module reads, wherever in the repository they are: its own, those of
        the module a `from X import name` names, a public name of a star import's module; [] for a builtin."""
        if name in self.binders:
            return [(self, i) for i in self.binders[name]], None
        if depth > 8:
            return None, "unresolved-name"
        if name in self.imported:
            target, there = self.imported[name]
            mod = self.repo.module(target)
            if there != name:
                return None, "renamed-import"
            return mod.lookup(name, depth + 1) if mod else (None, "unresolved-name")
        if name in self.BUILTINS:
            return [], None
        for target in self.stars:
            mod = self.repo.module(target)
            if mod and not name.startswith("_") and (name in mod.binders or name in mod.imported):
                return mod.lookup(name, depth + 1)
        return None, "unresolved-name"

    def span(self, i: int) -> tuple[int, int]:
        """0-based first and last line of statement i, with its decorators and the comment lines right above it."""
        n = self.body[i]
        start = min([n.lineno] + [d.lineno for d in getattr(n, "decorator_list", [])]) - 1
        while start > 0 and self.lines[start - 1].lstrip().startswith("#") and not self.lines[start - 1].startswith("#!"):
            start -= 1
        return start, n.end_lineno - 1

    def program(self, name: str) -> tuple[str | None, str | None]:
        """The code of a line for function `name`: it and what it needs (`needs`)."""
        return self.needs([(self, self.funcs[name])])

    def script(self, body: str) -> tuple[str | None, str | None]:
        """A script: the definitions its module-level code (realcode_scripts.script_body) reads, as the files have
        them, then that code; or None and why not."""
        roots: list[tuple[Module, int]] = []
        for free in sorted(body_names(body)):
            found, why = self.lookup(free)
            if found is None:
                return None, "script:" + why
            roots += found
        if not roots:
            return None, "script:no-definitions"
        defs, why = self.needs(roots)
        return (defs + "\n\n" + body, None) if defs is not None else (None, "script:" + why)

    def needs(self, roots: list[tuple["Module", int]]) -> tuple[str | None, str | None]:
        """The statements `roots` name and what they need, followed to a fixed point (functions, classes, constants,
        standard-library imports), as the files have them; or None and why not. What comes from the repository's
        other modules goes first, each module's part in file order, then this module's."""
        need: dict[Module, set[int]] = {self: set()}
        uses: dict[Module, list[Module]] = defaultdict(list)  # which modules a module's part reads from
        todo = list(roots)
        for other, _ in roots:  # a script's names may come from the repository's other modules
            if other is not self and other not in uses[self]:
                uses[self].append(other)
        while todo:
            mod, i = todo.pop()
            if i in need.setdefault(mod, set()):
                continue
            need[mod].add(i)
            node = mod.body[i]
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                why = import_refusal(node)
                if why:
                    return None, why
                continue
            for inner in nested_imports(node):  # an import inside a function runs when it is called
                why = import_refusal(inner)
                if why:
                    return None, why
            for free in sorted(free_names(node)):
                found, why = mod.lookup(free)
                if found is None:
                    return None, why
                for other, k in found:
                    if other is not mod and other not in uses[mod]:
                        uses[mod].append(other)
                    todo.append((other, k))
        if len(need) == 1:
            return self.cut(sorted(need[self] | set(self.futures))), None
        return self.join(need, uses)

    def join(self, need: dict["Module", set[int]], uses: dict["Module", list["Module"]]) -> tuple[str | None, str | None]:
        """One program of statements from several modules: `from __future__` first, the modules a part reads from
        before it, the same import written twice kept once; two modules binding one name are refused."""
        order: list[Module] = []
        seen: set[Module] = set()

        def visit(mod: Module) -> None:  # the modules a part reads from, before it
            seen.add(mod)
            for other in uses[mod]:
                if other not in seen:
                    visit(other)
            order.append(mod)
        visit(self)
        futures = {a.name for i in self.futures for a in self.body[i].names}
        binder: dict[str, str] = {}  # name -> what binds it: the imported thing, or the statement's AST
        parts = []
        for mod in order:
            if any(a.name not in futures for i in mod.futures for a in mod.body[i].names):
                return None, "future-import-differs"
            stmts = []
            for i in sorted(need[mod] - set(mod.futures)):
                meaning = bindings(mod.body[i])
                if isinstance(mod.body[i], (ast.Import, ast.ImportFrom)) and all(binder.get(n) == m for n, m in meaning.items()):
                    continue  # what it imports is there already
                if any(binder.setdefault(n, m) != m for n, m in meaning.items()):
                    return None, "name-clash"
                stmts.append(i)
            if stmts:
                parts.append(mod.cut(stmts))
        head = self.cut(self.futures) + "\n" if self.futures else ""
        return head + "\n\n".join(parts), None

    def cut(self, stmts: list[int]) -> str:
        """The text of these statements as the file has them; the file's own gap between neighbours, else blank lines."""
        parts = []
        prev = None
        for i in stmts:
            start, end = self.span(i)
            if prev is not None:
                if prev == i - 1:
                    parts.append("\n".join(self.lines[self.span(prev)[1] + 1:start]))
                    parts[-1] += "\n" if parts[-1] else ""
                else:
                    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
                    parts.append("\n\n" if isinstance(self.body[prev], defs) or isinstance(self.body[i], defs) else "")
            parts.append("\n".join(self.lines[start:end + 1]) + "\n")
            prev = i
        return "".join(parts)


class Repository:
    """A repository's modules, each parsed once, for following the imports of its own modules."""

    def __init__(self, root: Path):
        self.root = root
        self.modules: dict[Path, Module | None] = {}

    def module(self, path: Path) -> Module | None:
        """The parsed module of a file of the repository, or None when it does not parse."""
        if path not in self.modules:
            self.modules[path] = None  # an import cycle meets None, not a half-built module
            try:
                self.modules[path] = Module(path.read_text(encoding="utf-8"), path, self)
            except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
                pass
        return self.modules[path]

    def resolve(self, node: ast.ImportFrom, importer: Path) -> Path | None:
        """The repository's file a `from X import ...` reads (relative, or absolute from a module of the repository), or
        None (the standard library, anything else)."""
        parts = node.module.split(".") if node.module else []
        if node.level:
            bases = [importer.parents[node.level - 1]] if node.level <= len(importer.parents) else []
        else:
            bases = [importer.parent, self.root] if parts and sibling(parts[0], importer, self.root) else []
        for base in bases:
            where = base.joinpath(*parts)
            for f in ([where.with_suffix(".py")] if parts else []) + [where / "__init__.py"]:
                if f.is_file() and f.resolve().is_relative_to(self.root):
                    return f.resolve()
        return None


def nested_imports(node: ast.stmt) -> list[ast.stmt]:
    """The imports a top-level statement makes below its first level (inside a function or class body)."""
    return [n for n in ast.walk(node) if n is not node and isinstance(n, (ast.Import, ast.ImportFrom))]


def import_refusal(node: ast.stmt) -> str | None:
    if isinstance(node, ast.ImportFrom) and node.level:
        return "needs-relative-import"
    mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
    for m in mods:
        if m.split(".")[0] not in CODE_IMPORTS:
            return "needs-import"
    return None


# ---------------------------------------------------------------------------------------------
# Running doctests and tests in a child process.
def capture(path: Path, root: Path, per_function: int, max_repr: int, timeout: float,
            tests: bool = False) -> tuple[list[dict], str | None]:
    """The calls a file's doctests make of its top-level functions (tests: the calls a test file's tests make
    of the other files' top-level functions), or why none could be had. The limit is CPU time, not wall
    time, so that a busy machine does not change which files make it."""
    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        resource.setrlimit(resource.RLIMIT_CPU, (int(timeout), int(timeout) + 1))

    env = {"PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1", "LC_ALL": "C.UTF-8"}
    try:
        p = subprocess.run([sys.executable, "-s", "-B", str(CAPTURE), str(path), str(root), "--per-function", str(per_function),
                            "--max-repr", str(max_repr)] + ["--tests"] * tests, capture_output=True, text=True, timeout=10 * timeout, env=env,
                           cwd=str(path.parent), stdin=subprocess.DEVNULL, preexec_fn=limits)
    except subprocess.TimeoutExpired:
        return [], "run-timeout"
    if p.returncode in (-24, -9):  # SIGXCPU, SIGKILL: out of CPU time
        return [], "run-timeout"
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["?"])[-1]
        return [], "run-failed:" + (last.split(":")[0].split(".")[-1][:40] if ":" in last else "exit")
    return [json.loads(line) for line in p.stdout.splitlines() if line.strip()], None


# ---------------------------------------------------------------------------------------------
def strip_docstrings(tree: ast.AST) -> ast.AST:
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)) and n.body:
            first = n.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                n.body = n.body[1:] or [ast.Pass()]
    return tree


def benchmark_keys(code: str, entry: str) -> tuple[list[str], list[str]]:
    """What the excluded corpora are compared with: the program and each of its functions alone, as `f`,
    with and without docstrings (normalized text, AST dumps)."""
    texts, keys = [normalize_ws(code)], []
    tree = ast.parse(code)
    variants = [code]
    for n in tree.body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            variants.append(rename_entry(ast.unparse(n), "f", n.name))
    variants.append(rename_entry(code, "f", entry))
    for v in variants:
        texts.append(normalize_ws(v))
        t = ast.parse(v)
        for fn in t.body:
            if isinstance(fn, ast.FunctionDef) and fn.name == entry:
                fn.name = "f"
        keys.append(ast.dump(t))
        keys.append(ast.dump(strip_docstrings(t)))
    return texts, keys


def slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", s).strip("_")


class Builder:
    """Turns files into checked lines; holds what the whole build shares (programs seen, counts)."""

    def __init__(self, a: argparse.Namespace, excluded: tuple[set[str], set[str]]):
        self.a = a
        self.excl_ws, self.excl_keys = excluded
        self.runner = Runner(sys.executable, a.call_timeout, a.max_events, a.max_repr)
        self.script_runner = Runner(sys.executable, a.call_timeout, a.script_max_events, a.max_repr)
        self.seen: set[str] = set()
        self.why: Counter = Counter()
        self.stats: Counter = Counter()

    def test_calls(self, root: Path, tests: list[Path]) -> dict[str, list[dict]]:
        """The calls a repository's test files make of its source files' top-level functions, by source file
        (its path under root), in test file order. Test code itself is never a line: only what it calls."""
        a, why = self.a, self.why
        by_file: dict[str, list[dict]] = defaultdict(list)
        for path in tests:
            self.stats["test_files"] += 1
            try:
                tree = ast.parse(path.read_text(encoding="utf-8"))
            except (SyntaxError, UnicodeDecodeError, ValueError):
                why["test-file:syntax"] += 1
                continue
            refusal = run_refusal(tree, path, root, TEST_IMPORTS)
            if refusal:
                why["test-file:" + refusal.split(":")[0]] += 1
                continue
            calls, failed = capture(path, root, 4 * a.per_function, a.max_repr, a.test_timeout, tests=True)
            if failed:
                why["test-file:" + failed] += 1
                continue
            self.stats["test_files_run"] += 1
            for c in calls:
                by_file[c["file"]].append(c)
        return by_file

    def file_lines(self, name: str, repo: Repository, path: Path, test_calls: list[dict]) -> list[dict]:
        """The kept lines of one file, at most --per-function per function: the calls its doctests make first,
        then those of the repository's tests (test_calls), each in the order they came."""
        a, why, root = self.a, self.why, repo.root
        rel = path.relative_to(root).as_posix()
        self.stats["files"] += 1
        mod = repo.module(path)
        if mod is None:
            why["file:syntax"] += 1
            return []
        if not mod.funcs or (">>>" not in mod.text and not test_calls):
            why["file:no-doctests-or-tests"] += 1
            return []
        calls: list[dict] = []
        refusal = run_refusal(mod.tree, path, root) if ">>>" in mod.text else None
        if refusal:
            why["file:" + refusal.split(":")[0]] += 1
        elif ">>>" in mod.text:
            calls, failed = capture(path, root, 4 * a.per_function, a.max_repr, a.timeout)
            if failed:
                why["file:" + failed] += 1
            else:
                self.stats["files_run"] += 1
        self.stats["calls_captured"] += len(calls)
        self.stats["test_calls_captured"] += len(test_calls)
        from_tests = len(calls)  # calls from here on come from the tests
        calls += test_calls
        kept: Counter = Counter()
        numbered: Counter = Counter()  # calls that raise are numbered apart, so the others keep the ids they had
        cut: dict[str, tuple[str | None, str | None]] = {}
        rows = []
        cap = getattr(a, "caps", {}).get(name, a.per_function)
        for n, c in enumerate(calls):
            func = c["func"]
            if kept[func] >= cap or func not in mod.funcs:
                continue
            if func not in cut:
                cut[func] = mod.program(func)
            code, no = cut[func]
            res = self.check(code, func, c) if code is not None else {"ok": False, "why": no}
            if not res["ok"]:
                why[res["why"]] += 1
                continue
            kept[func] += 1
            kind = "raises_" if "raised" in res else ""
            numbered[func, kind] += 1
            rows.append({"code": code, "input": c["input"], "entry": func, **line_result(res),
                         "id": f"rc_{slug(name)}_{slug(rel[:-3])}_{func}_{kind}{numbered[func, kind] - 1}",
                         "source": f"{name}/{rel}", "events": res["events"], "repo": name, "by_test": n >= from_tests})
        return rows

    def file_scripts(self, name: str, repo: Repository, path: Path) -> list[dict]:
        """The kept scripts of one file (realcode_scripts.py), at most --scripts-per-file, in file order: each
        docstring whose examples build objects or bind names, below the definitions they read."""
        a, why, root = self.a, self.why, repo.root
        mod = repo.module(path)
        if mod is None or ">>>" not in mod.text:
            return []
        rel = path.relative_to(root).as_posix()
        classes = {n.name for n in mod.body if isinstance(n, ast.ClassDef)}
        own = set(mod.binders) | set(mod.imported)
        rows = []
        cap = getattr(a, "script_caps", {}).get(name, a.scripts_per_file)
        for owner, _, examples in doctest_blocks(mod.tree):
            if len(rows) >= cap:
                break
            body, no = script_body(examples, classes, own, CODE_IMPORTS)
            code, no = mod.script(body) if body is not None else (None, no)
            res = self.check_script(code) if code is not None else {"ok": False, "why": no}
            if not res["ok"]:
                why[res["why"]] += 1
                continue
            rows.append({"code": code, "input": "", "script": True, "id": f"rs_{slug(name)}_{slug(rel[:-3])}_{slug(owner)}",
                         "source": f"{name}/{rel}", "events": res["events"], "repo": name, "by_test": False})
        return rows

    def check_script(self, code: str) -> dict:
        """The standalone run of one script, traced whole ({"ok": True, "output": what it printed, "events"}), or why
        it is refused: by the function lines' rules, its length measured as the model reads it (no docstrings)."""
        a = self.a
        shown = canonical(code)["canonical"]
        if shown.count("\n") > SCRIPT_MAX_LINES or len(shown) > SCRIPT_MAX_CHARS:
            return {"ok": False, "why": "script:long-code"}
        key = code_key(code)
        if key in self.seen:
            return {"ok": False, "why": "script:duplicate"}
        if self.excluded(code, ""):
            return {"ok": False, "why": "excluded-benchmark"}
        run = lambda: self.script_runner.run(code, "", script=True, max_stdout=a.script_max_stdout)  # noqa: E731
        res = run()
        if not res["ok"]:
            return {"ok": False, "why": "script:" + res["why"]}
        if res["events"] < a.min_events:
            return {"ok": False, "why": "script:few-events"}
        again = run()
        if not again["ok"] or again["output"] != res["output"] or again["events"] != res["events"]:
            return {"ok": False, "why": "script:nondeterministic"}
        self.seen.add(key)
        return res

    def excluded(self, code: str, entry: str) -> bool:
        """Whether the program, or one of its functions, is one of an excluded corpus's (benchmark_keys)."""
        texts, keys = benchmark_keys(code, entry)
        return any(t in self.excl_ws for t in texts) or any(k in self.excl_keys for k in keys)

    def check(self, code: str, func: str, call: dict) -> dict:
        """The standalone run of one captured call ({"ok": True, "output", "events"}), or why it is refused."""
        a = self.a
        if code.count("\n") > MAX_CODE_LINES or len(code) > MAX_CODE_CHARS:
            return {"ok": False, "why": "long-code"}
        key = code_key(code) + "\0" + input_key(call["input"])
        if key in self.seen:
            return {"ok": False, "why": "duplicate"}
        if self.excluded(code, func):
            return {"ok": False, "why": "excluded-benchmark"}
        # A call that raised in the module must raise the same exception standalone, one that returned return
        # the same value: a line's program ends as the real one did, with its exception or its value.
        raises = "raised" in call
        res = self.runner.run(code, call["input"], func, raises=raises)
        if res["ok"] and res["events"] < a.min_events:
            res = {"ok": False, "why": "few-events"}
        if res["ok"] and line_result(res) != line_result(call):
            res = {"ok": False, "why": "differs-from-module"}
        if res["ok"]:
            again = self.runner.run(code, call["input"], func, raises=raises)
            if not again["ok"] or line_result(again) != line_result(res):
                res = {"ok": False, "why": "nondeterministic"}
        if res["ok"]:
            self.seen.add(key)
        return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Real Python functions called with the inputs of their doctests (program JSONL).")
    ap.add_argument("--src", action="append", required=True, help="a repository's root folder (NAME=DIR names it)")
    ap.add_argument("--out-train", required=True)
    ap.add_argument("--out-heldout", required=True)
    ap.add_argument("--exclude", action="append", default=[], help="JSONL corpus whose functions must never appear (CRUXEval)")
    ap.add_argument("--no-exclude", action="store_true", help="build without any excluded corpus (never for training data)")
    ap.add_argument("--heldout-share", type=float, default=0.2,
                    help="share of each repository's lines whose files go to the held-out set")
    ap.add_argument("--keep-heldout", action="store_true",
                    help="keep the lines --out-heldout already has, as they are, and add the new ones after them")
    ap.add_argument("--frozen-heldout", action="store_true",
                    help="with --keep-heldout: add nothing to the held-out file (an evaluation set that must not move); "
                         "its files stay out of training, every other file trains")
    ap.add_argument("--per-function", type=int, default=3, help="inputs kept per function")
    ap.add_argument("--per-function-of", action="append", default=[], metavar="NAME=N",
                    help="inputs kept per function of repository NAME (its own cap: keeps one large repository "
                         "from outweighing the others when --per-function is raised)")
    ap.add_argument("--per-file", type=int, default=4, help="held-out lines per file")
    ap.add_argument("--seed", type=int, default=13, help="orders the files for the split")
    ap.add_argument("--min-events", type=int, default=5)
    ap.add_argument("--max-events", type=int, default=300)
    ap.add_argument("--max-repr", type=int, default=120)
    ap.add_argument("--timeout", type=float, default=10.0, help="CPU seconds for one file's doctests")
    ap.add_argument("--test-timeout", type=float, default=60.0, help="CPU seconds for one test file's tests")
    ap.add_argument("--call-timeout", type=float, default=2.0, help="seconds for one standalone run")
    ap.add_argument("--scripts-per-file", type=int, default=0,
                    help="scripts a file gives from its docstrings' examples (training/realcode_scripts.py); 0: none")
    ap.add_argument("--scripts-per-file-of", action="append", default=[], metavar="NAME=N",
                    help="scripts a file of repository NAME gives (its own cap, as --per-function-of)")
    ap.add_argument("--out-heldout-scripts",
                    help="where the scripts of the held-out files go (a held-out set of real scripts); without it they are dropped")
    ap.add_argument("--script-max-events", type=int, default=400)
    ap.add_argument("--script-max-stdout", type=int, default=600, help="characters a script may print")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)
    if a.no_exclude and a.exclude:
        ap.error("--exclude and --no-exclude contradict each other")
    if not a.exclude and not a.no_exclude:
        ap.error(f"no --exclude corpus: give one (e.g. --exclude {CRUXEVAL}) or say --no-exclude")
    for p in a.exclude:
        if not Path(p).is_file():
            ap.error(f"--exclude {p}: no such file")
    if a.frozen_heldout and not a.keep_heldout:
        ap.error("--frozen-heldout needs --keep-heldout")
    for opt, caps in (("per_function_of", "caps"), ("scripts_per_file_of", "script_caps")):
        try:
            setattr(a, caps, {n: int(k) for n, _, k in (c.rpartition("=") for c in getattr(a, opt))})
        except ValueError:
            ap.error(f"--{opt.replace('_', '-')}: NAME=N")
    if not 0 <= a.heldout_share < 1:
        ap.error("--heldout-share: a share from 0 to under 1")
    kept_lines = []
    if a.keep_heldout:
        if not Path(a.out_heldout).is_file():
            ap.error(f"--keep-heldout: {a.out_heldout} does not exist")
        kept_lines = Path(a.out_heldout).read_text(encoding="utf-8").splitlines()
    sources = []
    for s in a.src:
        name, _, d = s.rpartition("=") if "=" in s else ("", "", s)
        root = Path(d).resolve()
        if not root.is_dir():
            ap.error(f"--src {d}: not a folder")
        sources.append((name or root.name, root))

    t0 = time.monotonic()
    b = Builder(a, load_excluded([Path(p) for p in a.exclude]))
    rows: list[dict] = []
    scripts: list[dict] = []
    try:
        for name, root in sources:
            files, tests = python_files(root, b.why)
            test_calls = b.test_calls(root, tests)
            repo = Repository(root)
            for path in files:
                rows += b.file_lines(name, repo, path.resolve(), test_calls.get(path.relative_to(root).as_posix(), []))
                if a.scripts_per_file or a.script_caps:
                    scripts += b.file_scripts(name, repo, path.resolve())
    finally:
        b.runner.close()
        b.script_runner.close()
    why, stats = b.why, b.stats

    kept = [json.loads(line) for line in kept_lines]
    train, new_held, added = split(rows, 0.0 if a.frozen_heldout else a.heldout_share, a.per_file, a.seed, kept)
    if a.frozen_heldout:
        added = []  # calls that raise of the held-out files: held out, so not trained on, and not added either
    fn_key = lambda r: code_key(r["code"])  # noqa: E731
    kept_funcs = {fn_key(r) for r in kept}
    before = len(new_held)
    new_held = [r for r in new_held if fn_key(r) not in kept_funcs]
    held_funcs = kept_funcs | {fn_key(r) for r in new_held}
    why["in-heldout-elsewhere"] += before - len(new_held)
    before = len(train)
    train = [r for r in train if fn_key(r) not in held_funcs]
    why["in-heldout-elsewhere"] += before - len(train)
    heldout = kept + added + new_held
    # A script of a held-out file holds its functions: it is held out with them, never trained on; so is a script
    # of another file that holds a held-out function (imported from its file).
    held_files = {r["source"] for r in heldout}
    held_defs = {d for r in heldout for d in function_keys(r["code"], r["entry"])}
    held_scripts = [r for r in scripts if r["source"] in held_files]
    for r in scripts:
        if r["source"] not in held_files:
            if held_defs & function_keys(r["code"]):
                why["script:in-heldout-elsewhere"] += 1
            else:
                train.append(r)
    line = lambda r: json.dumps({k: v for k, v in r.items() if k not in ("events", "repo", "by_test")})  # noqa: E731
    outputs = [(a.out_train, [line(r) for r in train]), (a.out_heldout, kept_lines + [line(r) for r in added + new_held])]
    if a.out_heldout_scripts:
        outputs.append((a.out_heldout_scripts, [line(r) for r in held_scripts]))
    for path, texts in outputs:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.writelines(t + "\n" for t in texts)
    if not a.quiet:
        ev = sorted(r["events"] for r in rows) or [0]
        summary = {
            "sources": [f"{n}={r}" for n, r in sources],
            "files": stats["files"], "files_run": stats["files_run"], "calls_captured": stats["calls_captured"],
            "test_files": stats["test_files"], "test_files_run": stats["test_files_run"],
            "test_calls_captured": stats["test_calls_captured"],
            "kept": len(rows), "kept_from_tests": sum(r["by_test"] for r in rows),
            "train": len(train), "heldout": len(heldout), "heldout_kept": len(kept), "heldout_added_raising": len(added),
            "heldout_new": len(new_held),
            "scripts": len(scripts), "scripts_train": len(scripts) - len(held_scripts), "scripts_heldout": len(held_scripts),
            "scripts_with_class": sum(any(isinstance(n, ast.ClassDef) for n in ast.parse(r["code"]).body) for r in scripts),
            "per_repository": per_repository(sources, rows, train, heldout),
            "heldout_files": len({r["source"] for r in heldout}), "train_files": len({r["source"] for r in train}),
            "functions": len({(r["source"], r["entry"]) for r in rows}),
            "events": {"median": ev[len(ev) // 2], "p90": ev[len(ev) * 9 // 10], "max": ev[-1]},
            "excluded_corpora": [str(p) for p in a.exclude] or "none (--no-exclude)",
            "excluded_benchmark_lines": why["excluded-benchmark"],
            "benchmark_paths_skipped": why["benchmark-folder"] + why["benchmark-file"],
            "refused": dict(sorted(why.items(), key=lambda kv: (-kv[1], kv[0]))),
            "seconds": round(time.monotonic() - t0, 1),
        }
        print(json.dumps(summary, indent=1), file=sys.stderr)
    return 0


def per_repository(sources: list[tuple[str, Path]], rows: list[dict], train: list[dict], heldout: list[dict]) -> dict:
    """Lines kept, in training and held out, for each repository, with the share of the training lines."""
    def repo(r: dict) -> str:
        return next(n for n, _ in sources if r["source"].startswith(n + "/"))
    out = {}
    for n, _ in sources:
        t = sum(repo(r) == n for r in train)
        out[n] = {"kept": sum(repo(r) == n for r in rows), "from_tests": sum(repo(r) == n and r["by_test"] for r in rows),
                  "train": t, "train_share": round(t / max(1, len(train)), 3),
                  "train_scripts": sum(repo(r) == n and r.get("script", False) for r in train),
                  "heldout": sum(repo(r) == n for r in heldout)}
    return out


def split(rows: list[dict], share: float, per_file: int, seed: int, kept: list[dict]) -> tuple[list[dict], list[dict], list[dict]]:
    """The training lines, the new held-out lines, and the lines added to the kept held-out files. The files of
    the kept held-out lines stay held out (none of their lines trains). Then each repository's other files, in a
    seeded order, go to the held-out set (at most per_file lines each) while the lines of its held-out files stay
    within `share` of its lines; a file that would pass it is skipped, so a repository of one file trains whole.
    Calls that raise are held out beside the others: every held-out file gives up to per_file of them (those its
    kept lines do not have yet), so a held-out file that has them is measured on them too."""
    by_file: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_file[r["source"]].append(r)
    kept_files = Counter(r["source"] for r in kept)
    kept_keys = {call_key(r) for r in kept}
    kept_raising = Counter(r["source"] for r in kept if "raises" in r)

    def raising(f: str, taken: list[dict]) -> list[dict]:
        """The file's calls that raise beyond those taken or kept, up to per_file of them in all."""
        have = {call_key(r) for r in taken} | kept_keys
        room = per_file - kept_raising[f] - sum("raises" in r for r in taken)
        return [r for r in by_file[f] if "raises" in r and call_key(r) not in have][:max(0, room)]

    added = [r for f in sorted(kept_files) if f in by_file for r in raising(f, [])]
    held_files: set[str] = set(kept_files)
    new_held = []
    for repo in sorted({r["repo"] for r in rows}):
        files = [f for f in by_file if by_file[f][0]["repo"] == repo]
        mine = [f for f in kept_files if f.startswith(repo + "/")]
        total = sum(len(by_file[f]) for f in files) + sum(kept_files[f] for f in mine if f not in by_file)
        held = sum(max(len(by_file.get(f, [])), kept_files[f]) for f in mine)
        for f in sorted(files, key=lambda f: hashlib.sha256(f"{seed}:{f}".encode()).hexdigest()):
            if f not in held_files and held + len(by_file[f]) <= share * total:
                held_files.add(f)
                held += len(by_file[f])
                chosen = spread(by_file[f], per_file)
                new_held.extend(chosen + raising(f, chosen))
    return [r for r in rows if r["source"] not in held_files], new_held, added


def function_keys(code: str, name: str | None = None) -> set[str]:
    """The AST dumps of a program's top-level functions (only `name`'s, when given)."""
    return {ast.dump(n) for n in ast.parse(code).body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and name in (None, n.name)}


def call_key(r: dict) -> tuple[str, str, str]:
    """One call of one function of one file."""
    return r["source"], r["entry"], r["input"]


def spread(rows: list[dict], k: int) -> list[dict]:
    """k lines of a file, taking its functions in turn so that one function does not fill them."""
    by_func: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_func[r["entry"]].append(r)
    out, rnd = [], 0
    while len(out) < k and any(len(v) > rnd for v in by_func.values()):
        for v in by_func.values():
            if len(v) > rnd and len(out) < k:
                out.append(v[rnd])
        rnd += 1
    return out


if __name__ == "__main__":
    sys.exit(main())

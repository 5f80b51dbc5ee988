"""The sealed run: tracer.py inside CPython compiled to WebAssembly (Pyodide), in the locked-down
process of adapter/real/sealedWorker.ts. Not for the host's Python.

`run(request)` runs one program under the tracer and returns its records (UTF-8), one JSON object a line,
exactly as `tracer.py PROGRAM --hybrid SPEC` writes them on the host. A request is

  {"program": PATH, "source": TEXT, "call"?: EXPR, "opts": {maxEvents, timeout, maxOutput, maxRepr, objects},
   "mounts"?: [FOLDER, ...], "cwd"?: FOLDER, "root"?: FOLDER, "paths"?: [FOLDER, ...], "hybrid"?: {"predict": [NAME, ...]}, "answers"?: [ANSWER, ...],
   "inspect"?: {"at": N, "expressions": [EXPR, ...], "up"?: K}, "statements"?: [{"at": N, "code": TEXT, "up"?: K}, ...],
   "probes"?: {"places": [[FILE|null, LINE], ...], "expressions": [EXPR, ...]},
   "window"?: {"from": N} | {"skeleton": true}}

or, for expressions over a state's values where no run of the program is there to ask (a recorded
or predicted state, a breakpoint's condition, a value typed into the Variables view),

  {"evaluate": {"names": {NAME: REPR, ...}, "expressions": [EXPR, ...], "hidden"?: [NAME, ...], "reads"?: true}}

which rebuilds each name's value from its repr (a literal: `[1, 2]`, `{'a': (1.5, None)}`,
`set()`, `inf`) and evaluates each expression over them, answering a JSON list of
{"value": REPR, "str": TEXT, "truth": BOOL, "type": NAME, "cut"?: true, "stdout"?: TEXT} or
{"error": TEXT} ("cut": the repr was cut short, as the tracer cuts a long one). An entry may
also be {"exec": STATEMENT} (answered {"names": {NAME: REPR}}, the names it bound or changed) or
{"items": EXPR, "max": N} (answered {"items": [REPR, ...], "more"?: true}): the debugger's rules
for the model alone ask those. "hidden" names have no value (a builtin the program shadows);
"reads" adds what each entry reads: {"names", "calls", "methods", "set", "scopes"}.
A name whose repr is no literal (`<__main__.Cart object at 0x...>`, a repr cut short) is no
value: an expression that reads it gets an error that says so, with "unknown": NAME.

With "inspect" the run stops at its N-th record, after an "inspect" record that holds each
expression's value evaluated in that frame (or its K-th traced caller's) (the program's own objects and methods, run sealed):
{"value": REPR, "type": NAME, "path": EXPR, "objects"?: {...}, "stdout"?: TEXT} or {"error": TEXT}.
With "hold": true in it, the run is held there instead: each answer goes out on fd 1 as
{"results": [...]}, and the next question ({"expressions": [...], "up"?: K}, or a line of the
Debug Console as a statement is given, {"code": TEXT, "up"?: K}, answered with the record's state
again as the line left it: "state", its callers' in it) comes in on fd 0 as {"question": {...}};
any other line lets the run go on to its "inspect" limit (_held).

"statements" are what the user ran at stops (the Debug Console, a value set), the run's input:
each runs in the frame of the N-th record (or its K-th traced caller's) before that record is
written, its result in a "statements" record ({"at": N, "results": [RESULT, ...]}, as inspect's,
a statement's value "").

"window" is for a run longer than maxEvents: {"from": N} records the states from the N-th event
on (maxEvents of them; the first also holds its callers' states, "callers"), counting the
events before it; {"skeleton": true} records no state but a "skeleton" record, where each event
of the whole run stands (tracer.Skeleton), before the exit record.

The user's folders are mounted by the worker for the run (adapter/real/sandboxFs.ts: its
"mounts"), so the program, its packages and its data files are at the same paths as on the host
and the run names its frames as there; "cwd" is the program's working directory, "root" the
folder whose .py files are the user's (traced), "paths" the user's Python's site-packages, added
to sys.path for the run. A package there with a compiled part is refused at its import, by name
(`notices()` gives what the Debug Console should say). A program outside any mounted folder is
written into the in-memory file system. Holes are those of hybrid
mode (holes.py): the n-th hole the run reaches is answered by answers[n]; a hole with no answer yet
ends the run there (an exit record with reason "hole"), and the debugger runs the program again
with one more answer. Each run is a pure function of its request: the same hash seed, a random
source and a wall clock that start the same at every run (the worker resets them), a monotonic
clock that stand still but for `time.sleep`, which moves them on at once.

`seal()` removes what reaches JavaScript: the `js`, `pyodide`, `_pyodide*` and `ctypes` modules are
dropped, their sources taken out of the standard library's zip, a finder first on sys.meta_path
refuses them (`importlib` and `__import__` go through it), and the `_imp` that the import system
and `import _imp` get refuses to build their C parts again. JavaScript itself is locked down by the worker (no process, no network, no code
generation, Node's permission model): what a program might still reach there can do nothing.
"""

import ast
import builtins
import copy
import importlib.machinery
import io
import itertools
import json
import linecache
import operator
import os
import random
import re
import sys
import time
import traceback
import types
import zipfile
import zipimport

import tracer

# The runner's own encoder and decoder, bound before any program runs (as the tracer's).
_dumps, _loads = tracer._dumps, json.JSONDecoder().decode

_SEALED = ("js", "pyodide", "pyodide_js", "_pyodide", "_pyodide_core", "ctypes", "_ctypes", "micropip")
_NOT_HERE = "%s is not available in the sealed run (it would reach outside the sandbox)"


def _is_sealed(name):
    return any(name == s or name.startswith(s + ".") for s in _SEALED)


class _Refuse:
    """First on sys.meta_path: the modules that reach JavaScript are refused by name."""

    @staticmethod
    def find_spec(fullname, path=None, target=None):
        if _is_sealed(fullname):
            raise ModuleNotFoundError(_NOT_HERE % fullname, name=fullname)
        return None

    @staticmethod
    def find_module(fullname, path=None):
        _Refuse.find_spec(fullname)


def _strip_zip():
    """The standard library's zip without the packages that reach JavaScript: their entries leave
    its directory and their bytes are zeroed; the others' bytes stay as they are. Inflating every
    entry and writing them all again cost a quarter of a second of every worker's start, most of
    it (the interpreter's code has not warmed up yet when it runs from a snapshot)."""
    for entry in sys.path:
        if not entry.endswith(".zip") or not os.path.isfile(entry):
            continue
        with open(entry, "rb") as f:
            buf = io.BytesIO(f.read())
        with zipfile.ZipFile(buf, "a") as z:
            infos = z.infolist()
            ends = sorted([info.header_offset for info in infos] + [z.start_dir])
            dropped = [info for info in infos if _is_sealed(info.filename.split("/")[0].split(".")[0])]
            if not dropped:
                continue
            data = buf.getbuffer()
            for info in dropped:
                begin = info.header_offset
                end = ends[ends.index(begin) + 1]
                data[begin:end] = bytes(end - begin)
                z.filelist.remove(info)
                del z.NameToInfo[info.filename]
            del data
            # (the central directory is written again, of the entries kept, as ZipFile writes it
            # when an archive opened to append was changed)
            z._didModify = True
        with open(entry, "wb") as f:
            f.write(buf.getvalue())
    zipimport._zip_directory_cache.clear()
    sys.path_importer_cache.clear()


def _guard_imp():
    """_imp builds C modules anew (_pyodide_core, _ctypes) for whoever asks, the import system's
    BuiltinImporter too: `import _imp` and the import system get one that refuses those."""
    real = sys.modules["_imp"]
    guard = types.ModuleType("_imp", real.__doc__)
    for name in dir(real):
        if not name.startswith("__"):
            setattr(guard, name, getattr(real, name))

    def create_builtin(spec, _create=real.create_builtin):
        if _is_sealed(spec.name):
            raise ModuleNotFoundError(_NOT_HERE % spec.name, name=spec.name)
        return _create(spec)

    def is_builtin(name, _is=real.is_builtin):
        return 0 if _is_sealed(name) else _is(name)

    guard.create_builtin, guard.is_builtin = create_builtin, is_builtin
    sys.modules["_imp"] = guard
    for name in ("_frozen_importlib", "_frozen_importlib_external", "importlib", "importlib._bootstrap", "importlib._bootstrap_external", "importlib.util", "zipimport"):
        module = sys.modules.get(name)
        if module is not None and getattr(module, "_imp", None) is real:
            module._imp = guard


# ---- compiled packages ----

# Pyodide's own library (the standard library's zip, its site-packages): built for WebAssembly.
_OWN_LIBRARY = "/lib/"
_EXTENSIONS = (".so", ".pyd", ".dylib", ".dll")
# Files of a package looked at, at most, for a compiled part.
_MAX_WALK = 5000
_notices = []


def _compiled_part(spec):
    """The first compiled file of a module or package found outside Pyodide's own library (one
    built for this machine, not for WebAssembly), or None."""
    if spec.origin and not spec.origin.startswith(_OWN_LIBRARY) and spec.origin.endswith(_EXTENSIONS):
        return spec.origin
    seen = 0
    for location in spec.submodule_search_locations or ():
        if location.startswith(_OWN_LIBRARY):
            continue
        for folder, dirs, files in os.walk(location):
            dirs.sort()
            for name in sorted(files):
                if name.endswith(_EXTENSIONS):
                    return os.path.join(folder, name)
            seen += len(files) + len(dirs)
            if seen > _MAX_WALK:
                return None
    return None


class _Compiled:
    """Before the path finder on sys.meta_path: a package of the user's Python with a compiled part (numpy, pandas)
    cannot be loaded by this CPython; its import fails at once with a message that names it and
    says what to do, rather than deep inside the package, and no stand-in guesses its values."""

    @staticmethod
    def find_spec(fullname, path=None, target=None):
        if "." in fullname and path is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not (spec.origin or spec.submodule_search_locations):
            return None
        part = _compiled_part(spec) if "." not in fullname or (spec.origin or "").endswith(_EXTENSIONS) else None
        if part is None:
            return None
        why = ("%s is a compiled package (%s is built for this machine, not for WebAssembly): the sealed run cannot import it. "
               "Debug in hybrid mode to run it for real") % (fullname.split(".")[0], part)
        if why not in _notices:
            _notices.append(why)
        raise ModuleNotFoundError(why, name=fullname)


def notices():
    """What the last run met that the Debug Console should say (a compiled package refused), as JSON; then forgotten."""
    out = _dumps(_notices)
    del _notices[:]
    return out


def seal():
    for name in list(sys.modules):
        if _is_sealed(name):
            del sys.modules[name]
    sys.meta_path[:] = [_Refuse] + [f for f in sys.meta_path if type(f).__module__.split(".")[0] not in ("_pyodide", "pyodide")]
    # Just before the path finder (builtin and frozen modules are no package of the user's).
    at = next((i for i, f in enumerate(sys.meta_path) if f is importlib.machinery.PathFinder), len(sys.meta_path))
    sys.meta_path.insert(at, _Compiled)
    _strip_zip()
    _guard_imp()
    # The runner's own modules leave sys.modules (their functions keep them): a program that imports
    # them by name finds nothing, and cannot change how the next run is traced that way.
    for name in ("sealed", "tracer", "_ndbg_holes"):
        sys.modules.pop(name, None)
    import gc

    gc.collect()
    _clean.take()


class _CleanModules:
    """The modules as they stand once the interpreter is sealed, put back before and after every
    run: what a run changed in a module (`math.pi = 3`, `json.dumps = ...`, `builtins.print = ...`,
    an entry of sys.modules replaced or deleted, sys.meta_path cleared) reaches no later run, nor
    an evaluation. Each module's namespace is restored whole where any name in it was rebound
    (compared by identity: no program's __eq__ runs here); what a run changed inside an object a
    module holds (a class's attribute, a list's items) is not put back."""

    def __init__(self):
        self.modules = {}
        self.finders = [], []

    def take(self):
        self.modules = {}
        for name, module in list(sys.modules.items()):
            if isinstance(module, types.ModuleType):
                saved = dict(module.__dict__)
                self.modules[name] = (module, saved, tuple(saved), tuple(saved.values()))
        # The import system's own lists, changed in place by a program that clears or reorders them.
        self.finders = list(sys.meta_path), list(sys.path_hooks)

    def restore(self):
        modules = sys.modules
        missing = itertools.repeat(_clean)
        for name, (module, saved, keys, values) in self.modules.items():
            if modules.get(name) is not module:
                modules[name] = module
            namespace = module.__dict__
            # (compared in C: map and operator.is_, the same keys' values by identity)
            if len(namespace) != len(keys) or not all(map(operator.is_, map(namespace.get, keys, missing), values)):
                namespace.clear()
                namespace.update(saved)
        sys.meta_path[:], sys.path_hooks[:] = self.finders


_clean = _CleanModules()


def _no_processes(*args, **kwargs):
    raise OSError(38, "the sealed run starts no processes")  # ENOSYS, as subprocess's fork_exec says here


# os.system calls C's system(), which Emscripten hands to JavaScript, where the interpreter would
# fail whole (and the worker start again): here it fails in the program, as subprocess does.
os.system = _no_processes
sys.modules["posix"].system = _no_processes


# ---- clocks the program reads ----

class _Clock:
    """The program's clocks: they stand still but for time.sleep, which moves them on at once. A clock
    that moved with each read would read differently in a program's first run, where standard
    modules read it as they are imported, than in the next. The tracer keeps the real monotonic
    clock for its limits; the wall clock of C code (datetime.now) is the worker's fixed Date.now."""

    EPOCH_NS = 1_767_225_600 * 1_000_000_000  # 2026-01-01T00:00:00Z, as the worker's Date.now
    START_NS = 1_000_000_000

    def __init__(self):
        self.reset()

    def reset(self):
        self.slept = 0

    def monotonic_ns(self):
        return self.START_NS + self.slept

    def monotonic(self):
        return self.monotonic_ns() / 1e9

    def time_ns(self):
        return self.EPOCH_NS + self.slept

    def time(self):
        return self.time_ns() / 1e9

    def sleep(self, seconds):
        if seconds < 0:
            raise ValueError("sleep length must be non-negative")
        self.slept += int(seconds * 1e9)


_clock = _Clock()
tracer._holes_module()  # loaded before the clocks change: holes.py keeps the real one, as the tracer does
for _name in ("monotonic", "perf_counter"):
    setattr(time, _name, _clock.monotonic)
    setattr(time, _name + "_ns", _clock.monotonic_ns)
time.time, time.time_ns, time.sleep = _clock.time, _clock.time_ns, _clock.sleep


# ---- one run ----

class _Lines:
    """The record stream of one run, kept in memory (tracer.Output's interface)."""

    def __init__(self):
        self.lines = []
        self.lock = tracer.threading.Lock()

    def write(self, record):
        self.lines.append(tracer._dumps(record))


class _Answers:
    """The debugger's answers to the run's holes, in order (holes.Holes reads one line each); past
    the last one the run stops at that hole and waits for the next run."""

    def __init__(self, answers):
        self.answers = list(answers)

    def readline(self):
        return _dumps(self.answers.pop(0)) + "\n" if self.answers else None


class _NoWatchdog:
    """The tracer's watchdog is a thread; WebAssembly has none. The time limit is the tracer's own
    check at each event, and the parent kills a process stuck in C code."""

    run = None


def _write_program(program, source):
    folder = os.path.dirname(program)
    if folder:
        os.makedirs(folder, exist_ok=True)
    with open(program, "w", encoding="utf-8") as f:
        f.write(source)


_read = os.read


def _pause_asked():
    """What the debugger asks of the run under way: "pause", "stop" (it wants the run no more), or
    "". The worker answers a read of this interpreter's standard input (fd 0, which has nothing
    else to give: the program's sys.stdin is empty) by asking the parent (sealedWorker.ts)."""
    try:
        return _read(0, 16).strip().decode("ascii", "replace")
    except OSError:
        return ""


_write = os.write


def _held(answer):
    """A run held at a stop (inspect's "hold"): each answer ({"results": [...], "state"?: RECORD})
    goes to the debugger on this interpreter's standard output (fd 1: the program's prints are the
    tracer's, caught in Python) and the next question comes back on its standard input, which the
    worker answers by asking the parent (sealedWorker.ts); None lets the run go."""
    line = (_dumps(answer) + "\n").encode("utf-8")
    while line:
        line = line[_write(1, line):]
    answer = b""
    while not answer.endswith(b"\n"):
        chunk = _read(0, 1 << 16)
        if not chunk:
            return None
        answer += chunk
    try:
        question = _loads(answer.decode("utf-8")).get("question")
    except (ValueError, AttributeError):
        return None
    return question if isinstance(question, dict) else None


def run(request):
    req = _loads(request)
    if "evaluate" in req:
        return _dumps(evaluate(req["evaluate"])).encode("utf-8")
    # Put back before the program runs (an evaluation may have changed a module: it is no program's
    # run, and costs no restore of its own: one is 2 ms, an evaluation half of one) and after it,
    # so that evaluations between runs meet a clean interpreter too.
    _clean.restore()
    program, source = req["program"], req["source"]
    _clock.reset()
    random.seed(0)
    del _notices[:]
    # The user's folders are mounted afresh for this run (adapter/real/sandboxFs.ts): nothing cached
    # of an earlier run's folders (the import system's listings, linecache) is read again. (Dropping
    # the path finders drops their listings; importlib.invalidate_caches() would import
    # importlib.metadata, 150 ms in WebAssembly, for nothing more.)
    sys.path_importer_cache.clear()
    linecache.clearcache()
    # The program is in its mounted folder as on disk; outside one (no folder offered) it is written here.
    if not os.path.isfile(program):
        _write_program(program, source)
    cwd = req.get("cwd") or os.path.dirname(program)
    if not os.path.isdir(cwd):
        cwd = os.path.dirname(program)
    out = _Lines()
    opts = tracer._options(req.get("opts") or {})
    # Evaluations in the frame of one state: the run stops there (the program's live objects, sealed).
    opts["inspect"] = req.get("inspect")
    # ... and, asked to, held there: each expression the debugger asks at that stop is answered in
    # its live frames until it lets the run go (_held).
    if isinstance(opts["inspect"], dict) and opts["inspect"].get("hold"):
        opts["hold"] = _held
    opts["statements"] = req.get("statements")
    # Expressions evaluated at every line event on some places (breakpoint conditions, log messages).
    opts["probes"] = req.get("probes")
    # A long run: a window of its states, or its skeleton (tracer.Skeleton); a seek lands where
    # the debugger pauses it.
    opts["window"] = req.get("window")
    opts["pause"] = _pause_asked
    # The worker raises SIGUSR2 every 50 ms or so while a run goes on (its interrupt buffer): a
    # Continue's seek may then run with no trace function (tracer.Run.go_fast).
    opts["ticks"] = True
    # Files under this folder are the user's (traced) as well as those beside the program.
    opts["root"] = req.get("root")
    hybrid = (req["hybrid"], _Answers(req.get("answers") or ())) if req.get("hybrid") is not None else None
    # The libraries of the user's Python, after Pyodide's own, for this run only.
    libraries = [p for p in req.get("paths") or () if isinstance(p, str) and p not in sys.path]
    sys.path.extend(libraries)
    try:
        tracer._run_program(out, _NoWatchdog(), None, program, source, req.get("call"), opts, cwd, hybrid)
    finally:
        for p in libraries:
            while p in sys.path:
                sys.path.remove(p)
        _clean.restore()
    # As UTF-8 bytes: Pyodide hands bytes to JavaScript as one copy, where a str of a few MB
    # (a long run's skeleton) would take the worker's whole heap to convert.
    return "\n".join(out.lines).encode("utf-8")


# ---- expressions over values read from reprs ----

# What a repr may be made of to be rebuilt: literals, and the calls and names CPython writes in
# reprs of builtin values (set(), frozenset({1}), bytearray(b''), range(0, 3), inf, nan).
_REPR_CALLS = {"set": set, "frozenset": frozenset, "bytearray": bytearray, "range": range}
_REPR_NAMES = {"inf": float("inf"), "nan": float("nan")}
_REPR_NODES = (ast.Expression, ast.Constant, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.UnaryOp, ast.USub,
               ast.UAdd, ast.BinOp, ast.Add, ast.Sub, ast.Load, ast.Name, ast.Call)


def _rebuilt(text):
    """The value whose repr is `text`, or raises ValueError: only what CPython writes for values
    of builtin types is read, so that a repr is never run as code (a model may have written it)."""
    tree = ast.parse(text.strip(), mode="eval")
    for node in ast.walk(tree):
        if not isinstance(node, _REPR_NODES):
            raise ValueError(type(node).__name__)
        if isinstance(node, ast.Name) and node.id not in _REPR_NAMES and node.id not in _REPR_CALLS:
            raise ValueError(node.id)
        if isinstance(node, ast.Call) and (not isinstance(node.func, ast.Name) or node.func.id not in _REPR_CALLS or node.keywords):
            raise ValueError("call")
    return eval(compile(tree, "<repr>", "eval"), {"__builtins__": {}, **_REPR_CALLS, **_REPR_NAMES})


# Values rebuilt, by repr, and expressions compiled, by text: a loop's states share most of their
# values, and a condition is asked again at every hit. A value kept here is never changed (each
# entry works on copies); reprs longer than _MAX_KEPT are rebuilt each time, not kept.
_KEPT_VALUES, _KEPT_CODE = {}, {}
_MAX_KEPT, _MAX_ENTRIES = 10_000, 4096


def _kept(cache, key, make):
    """make(), remembered under `key` (its exception too)."""
    hit = cache.get(key)
    if hit is None:
        try:
            hit = (True, make())
        except Exception as e:
            hit = (False, e)
        if len(cache) >= _MAX_ENTRIES:
            cache.clear()
        cache[key] = hit
    if not hit[0]:
        raise hit[1].with_traceback(None)  # (raised again and again: each time with this raise's frames alone)
    return hit[1]


def _value_of(text):
    """_rebuilt(text), kept."""
    return _rebuilt(text) if len(text) > _MAX_KEPT else _kept(_KEPT_VALUES, text, lambda: _rebuilt(text))


def _compiled(kind, text):
    """An entry's code, what it reads, and the name it is when a bare name; kept."""
    def make():
        tree = ast.parse(text, mode="exec" if kind == "exec" else "eval")
        bare = tree.body.id if kind == "eval" and isinstance(tree.body, ast.Name) else None
        return compile(tree, "<expression>", "exec" if kind == "exec" else "eval", dont_inherit=True), _reads(tree), bare
    return make() if len(text) > _MAX_KEPT else _kept(_KEPT_CODE, (kind, text), make)


def _repr_of(value):
    """repr(value) as the tracer writes it in records (cut past its limit, no addresses)."""
    return tracer.Run.repr(types.SimpleNamespace(max_repr=tracer.DEFAULTS["maxRepr"]), value)


# Characters of a str() the debugger is sent (a log message's part).
_MAX_STR = 100_000


def _str_of(value):
    """str(value), for a log message: a container's is its repr, cut as the repr is (a list of a
    million strings prints in gigabytes, and is cheap to hold); any other's cut past _MAX_STR."""
    text = _repr_of(value) if type(value) in tracer._CONTAINERS else str(value)
    return text if len(text) <= _MAX_STR else text[:_MAX_STR] + tracer._CUT_MARK


def _cut(r):
    """Whether the tracer cut this repr short (its marks stand at the end, after any closing quote)."""
    return r.endswith(tracer._CUT_MARK) or re.search(r"…\(\+\d+ chars\)$", r) is not None


def _error(e):
    """One line, as a console shows an error ("NameError: name 'x' is not defined")."""
    return traceback.format_exception_only(type(e), e)[-1].strip()


class _NotAValue(Exception):
    """A name read by an expression whose repr is no value."""

    def __init__(self, name, why):
        super().__init__(why)
        self.name = name


def _reads(tree):
    """What an expression or statement reads, for the debugger's rules: the names it loads, the
    names it calls, whether it calls a method, whether it builds a set, whether it has scopes of
    its own (a comprehension, a generator, a lambda: frames of their own when the program runs)."""
    names, calls, methods, builds_set, scopes = set(), set(), False, False, False
    for node in ast.walk(tree):
        # (a comprehension, generator or lambda is a frame of its own in the program's run, traced)
        scopes = scopes or isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda))
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name):
                calls.add(node.func.id)
                builds_set = builds_set or node.func.id in ("set", "frozenset")
            elif isinstance(node.func, ast.Attribute):
                methods = True
        elif isinstance(node, (ast.Set, ast.SetComp)):
            builds_set = True
    return {"names": sorted(names), "calls": sorted(calls), "methods": methods, "set": builds_set, "scopes": scopes}


def _one(entry, values, unknown, shown, with_reads):
    """One entry of an evaluate request: an expression (a str, or {"eval": EXPR}), a statement run
    over the values ({"exec": TEXT}: the names it binds or changes), or an iterable's first items
    ({"items": EXPR, "max": N}). `shown`: the reprs that are no values, by name."""
    if isinstance(entry, str):
        entry = {"eval": entry}
    kind = "exec" if "exec" in entry else "items" if "items" in entry else "eval"
    # (an expression is read as eval() reads one: surrounding blanks and line breaks are no indentation)
    text = entry[kind] if kind == "exec" else entry[kind].strip()
    code, reads, bare = _compiled(kind, text)
    if bare in shown:
        # A name alone is its value as the state shows it, an object's repr too (a hover on `self`).
        text = shown[bare]
        kind_of = re.match(r"<(?:[\w.]+\.)?(\w+) object\b", text)
        result = {"value": text, "str": text, "type": kind_of.group(1) if kind_of else "object", **({"reads": reads} if with_reads else {})}
        if _cut(text):
            result["cut"] = True
        return result
    blind = [n for n in reads["names"] if n in unknown]
    if blind:
        raise _NotAValue(blind[0], unknown[blind[0]])
    # Each entry has values of its own: an expression may change a list it reads (xs.pop()).
    # Names are the globals, so that a lambda or generator in the expression sees them too.
    scope = {"__builtins__": builtins, **{n: copy.deepcopy(v) for n, v in values.items()}}
    result = {"reads": reads} if with_reads else {}
    if kind == "exec":
        before = {n: _repr_of(v) for n, v in values.items()}
        exec(code, scope)
        result["names"] = {n: _repr_of(v) for n, v in scope.items() if n != "__builtins__" and before.get(n) != _repr_of(v)}
        return result
    value = eval(code, scope)
    if kind == "items":
        limit = int(entry.get("max") or 10000)
        items = [_repr_of(v) for v in itertools.islice(iter(value), limit + 1)]
        result["items"] = items[:limit]
        if len(items) > limit:
            result["more"] = True
        return result
    r = _repr_of(value)
    result.update({"value": r, "str": _str_of(value), "type": type(value).__name__})
    if _cut(r):
        result["cut"] = True
    result["truth"] = bool(value)
    return result


def evaluate(request):
    _clock.reset()
    random.seed(0)
    values, unknown, shown = {}, {}, {}
    for name, text in (request.get("names") or {}).items():
        try:
            values[name] = _value_of(text)
        except Exception:
            unknown[name] = "the value of %s is not known here, only its repr: %s" % (name, text[:80])
            shown[name] = text
    # Names the program binds (a builtin it shadows) and names whose value is this process's own (id, open): no values here.
    for name in request.get("hidden") or ():
        if name not in values:
            unknown.setdefault(name, "%s is the program's own name here, whose value is not known" % name)
    out = []
    for entry in request.get("expressions") or ():
        stdout, real_stdout = io.StringIO(), sys.stdout
        sys.stdout = stdout
        try:
            result = _one(entry, values, unknown, shown, bool(request.get("reads")))
        except _NotAValue as e:
            result = {"error": str(e), "unknown": e.name}
        except BaseException as e:  # (SystemExit too: `exit()` typed in the console ends nothing)
            result = {"error": _error(e)}
        finally:
            sys.stdout = real_stdout
        if stdout.getvalue():
            result["stdout"] = stdout.getvalue()
        out.append(result)
    return out

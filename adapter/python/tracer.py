#!/usr/bin/env python3
"""Records a real run of a Python program, one JSON object per sys.settrace event.

Ground truth for record mode, comparison, training data and evaluation. Python 3.8+, stdlib only.

Usage:
  tracer.py PROGRAM [--call EXPR] [--out PATH] [--max-events N] [--timeout S]
            [--max-output N] [--max-repr N] [--objects N] [--root DIR]
  tracer.py --batch [--out PATH]   (many programs, one request a line on stdin: see batch.py)
  tracer.py PROGRAM --hybrid SPEC ...   (hybrid mode: see holes.py; SPEC is {"predict": [NAME, ...]})

Without --call, PROGRAM runs as a script (__name__ == "__main__") and its <module> frame is traced.
With --call, the module body runs untraced (__name__ = the file's stem), then EXPR (e.g. "f([1, 2])")
is evaluated in its namespace, traced.

Records go to --out (a path; "-", the default, is this process's original standard output, which
the program can no longer reach: its sys.stdout is captured and fd 1 is pointed at stderr). One
object a line:
  {"event": "start", "python": "3.11"}   (first, before the program runs: this Python's minor version)
  {"event": "call"|"line"|"return"|"exception", "line": N, "depth": D, "func": QUALNAME,
   "file"?: PATH, "locals": {NAME: REPR}, "value"?: REPR, "stdout"?: TEXT}
  ... then {"event": "exit", "status": "normal"|"error"|"limit", "value"?: REPR,
            "reason"?: "events"|"time"|"output"|"tracing", "stdout"?: TEXT, "stderr"?: TEXT}

- depth: traced frames below this one on the stack (the first traced frame has depth 0).
- func: co_qualname (3.11+); before 3.11 the function's __qualname__, else co_name.
- file: only for user files other than the main program, relative to its directory, "/"-separated.
  User files are the program and .py files under its directory (or under --root DIR, the
  project's folder, where given) outside the stdlib and site-packages; no other frame is traced,
  but calls from library code back into user code are. A user file outside the program's folder
  is named relative to it ("../lib/util.py").
- line: the frame's line; a <module> call event (line 0 in 3.11+) reports the code's first line.
- locals: reprs; names starting with "." are skipped; in namespace frames (<module>, class bodies)
  modules and dunder names (__name__, __qualname__, ...; not functions such as __init__) are
  skipped too. A repr that raises reads "<repr failed: ExcType>";
  " at 0x7f3a..." addresses read " at 0x..."; a repr longer than --max-repr characters (default 1000;
  0: no cap) is cut to that many characters followed by the marker "…(+N chars)", N being the
  characters cut. Strings and builtin containers holding more than 65536 characters and elements
  (and more than 4 * --max-repr) are cut while their repr is written, marked "…(cut)": a 256 MiB
  bytearray or a list shared a million times never has its whole text built.
- objects (with --objects N, N > 0): what a debugger opens of the locals' values whose repr is no
  literal (instances, namedtuples, subclasses of builtin containers), as {PATH: [[NAME, REPR,
  CHILD_PATH], ...]}: PATH names the object as an expression (`cart`, `cart.items[0]`), NAME is an
  attribute, "[i]" or "[key repr]". Builtin lists, tuples and dicts are looked into, not listed; at
  most N children a record, 3 steps from a local. Attributes are read from __dict__ and __slots__:
  no property or __getattr__ of the program runs.
- return: "value" is the repr of the returned (or yielded) value; a frame unwound by an exception
  has no "value". "caller" (where the frame has a traced caller): the caller's record as it stands
  at this return, a line record on the calling line (a debugger shows a return there).
- returned: on the caller's record just after a callee's return, {"func": QUALNAME, "value": REPR}
  of that return (a debugger shows it beside the caller's next line).
- exception: "value" is the repr of the exception.
- stdout: what the program wrote to sys.stdout since the previous record (with --call, what the
  untraced module body wrote goes with the first record). stderr: the same for sys.stderr (at
  most --max-output bytes in all). Standard input is empty.
- Recursion: the program's recursion limit counts its own frames, not the tracer's
  (sys.getrecursionlimit and sys.setrecursionlimit speak of that limit); RecursionError is raised
  where Python would raise it, and the unwinding is traced.
- Limits: --max-events records (default 10000), --timeout seconds of wall time (default 10),
  --max-output bytes of standard output (default 1000000; the output is cut there). A limit ends the run with a
  "limit" exit, its reason and a value that names the limit ("the limit of 10000 events was
  reached"). SystemExit(0) or SystemExit(None) is a normal exit.
- Windows, statements (the sealed run's options, adapter/python/sealed.py): a run past maxEvents
  is recorded a window at a time ("window": from an event on, or from where a forward move lands,
  Run.seeks; or no state but the run's Skeleton), the events before the window counted on a fast
  path; lines the user ran at stops ("statements") run again at the same events of every run, and
  expressions asked at a stop ("inspect") are evaluated there (console.py). Where the runner ticks
  (the sealed one: a signal every 50 ms), a seek may go "fast": with no trace function where it
  cannot land (sys.monitoring, 3.12+), its events not counted (Run.go_fast, Run.go_past).
- The tracer is no part of the program: what it calls while the program runs (json's encoder,
  os.write, the clock, sys.settrace) is bound before the program runs, so a program that replaces
  json.dumps or os.write changes nothing of the records. The program's sys.settrace is kept but
  never installed (sys.gettrace gives it back), as debugpy's pydevd does: turning the tracer off or
  replacing it would blind the debugger for the rest of the run. (Reason "tracing" is that of older
  tracers, which ended the run there.) A child made by os.fork stops tracing and writes no
  records (the trace is its parent's). Processes the program started and left running, also in
  sessions of their own, are killed when its run ends (on Linux the tracer adopts their orphans),
  and when the driver that reads the records is gone the tracer ends them and exits.

The tracer's other files, beside it: console.py (what the debugger runs in the program's frames:
inspect, statements), processes.py (ending what the program started), batch.py (--batch's
requests), holes.py (hybrid mode). Each is loaded from its path under a name no program imports,
before any program runs.
"""

import array
import base64
import io
import itertools
import json
import os
import re
import signal
import sys
import sysconfig
import threading
import time
import types
import warnings
from bisect import bisect_right as _bisect
from dis import findlinestarts as _line_starts

# CPython 3.12 writes a traced frame's locals back after each trace call, and warns where an inlined
# comprehension's variable is unbound ("assigning None to unbound local"): the tracer's doing, never
# the program's, so never shown as the program's standard error.
warnings.filterwarnings("ignore", message="assigning None to unbound local", category=RuntimeWarning)

try:
    from opcode import opmap as _OPMAP
except ImportError:  # pragma: no cover
    _OPMAP = {}

_TRACER_FILE = os.path.realpath(__file__)
_HERE = os.path.dirname(_TRACER_FILE)
_HOLES_FILE = os.path.join(_HERE, "holes.py")
# The tracer's files, whose code runs in its process: never traced, even inside the user's folder.
_OWN_FILES = frozenset([_TRACER_FILE] + [os.path.join(_HERE, name) for name in ("holes.py", "console.py", "processes.py", "batch.py")])


def _own_module(filename):
    """One of the tracer's files beside it (holes.py aside: _holes_module), run as a module that
    sys.modules does not list, so that a program importing a module of that name gets its own."""
    path = os.path.join(_HERE, filename)
    module = types.ModuleType("_ndbg_" + os.path.splitext(filename)[0])
    module.__file__ = path
    with open(path, "rb") as f:
        exec(compile(f.read(), path, "exec", dont_inherit=True), module.__dict__)
    return module


# Loaded before any program runs, as the tracer's own imports are.
_console = _own_module("console.py")
_processes = _own_module("processes.py")
_adopt_orphans, _end_children = _processes.adopt_orphans, _processes.end_children

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_CO_OPTIMIZED = 0x1
# Instructions a frame stands on when it returns or yields a real value; any other instruction at
# a return event means the frame is being unwound by an exception (Python then passes None).
_VALUE_OPS = frozenset(
    _OPMAP[name] for name in (
        "RETURN_VALUE", "RETURN_CONST", "YIELD_VALUE", "YIELD_FROM", "RESUME",
        "INSTRUMENTED_RETURN_VALUE", "INSTRUMENTED_RETURN_CONST", "INSTRUMENTED_YIELD_VALUE",
        "INSTRUMENTED_RESUME",
    ) if name in _OPMAP
)


# (self.returned of a return recorded: its value's repr is written already)
_WRITTEN = object()


def _unwound(code, lasti, exc_lasti):
    """Whether a return event ends a frame (of `code`, standing at `lasti`) that an exception
    unwinds (it returns no value), given where its last exception event stood (None for none)."""
    ops = code.co_code
    return exc_lasti == lasti or (0 <= lasti < len(ops) and ops[lasti] not in _VALUE_OPS)


# The clock of the limits, kept before a program (or the sealed run's fixed clocks) can replace it.
_monotonic = time.monotonic
_real_setrecursionlimit = sys.setrecursionlimit
_real_settrace = sys.settrace
_real_gettrace = sys.gettrace
# The records' encoder and writer, bound before a program can replace json.dumps or os.write.
_dumps = json.JSONEncoder().encode
_os_write = os.write
_TRACER_CODE_FILE = (lambda: None).__code__.co_filename
_real_getrecursionlimit = sys.getrecursionlimit
_HAS_QUALNAME = hasattr(types.CodeType, "co_qualname")
# CPython 3.13.0 to 3.13.2 crash (SIGSEGV) reading f_locals where an inline comprehension's variable
# holds a plain value in a slot that the function also uses as a cell (a closure elsewhere in it
# captures that name): CPython issue 128396, fixed in 3.13.3. There such a name is left out.
_CELL_SLOT_CRASH = (3, 13) <= sys.version_info[:3] < (3, 13, 3)
DEFAULTS = {"maxEvents": 10000, "timeout": 10.0, "maxOutput": 1000000, "maxRepr": 1000, "objects": 0}
# After a limit, or the time limit, how long the program may take to stop before the watchdog ends
# the process.
_GRACE = 0.5
# How often a run asks whether the debugger pauses it (Run.limits), in seconds.
_PAUSE_POLL = 0.05
# A Continue's seek runs with no trace function where no breakpoint is (sys.monitoring, 3.12+), where
# the runner ticks: it raises this signal every _PAUSE_POLL or so (the sealed worker's interrupt
# buffer; ignored by Python while no handler is set), for the time limit and the pause poll.
_monitoring = getattr(sys, "monitoring", None)
_TICK = getattr(signal, "SIGUSR2", None)
_real_signal = signal.signal
_real_getsignal = signal.getsignal
# (bound here, as the rest the tracer calls: a program may replace the module's functions)
_mon = types.SimpleNamespace(**{name: getattr(_monitoring, name) for name in (
    "use_tool_id", "free_tool_id", "get_tool", "set_events", "set_local_events", "register_callback", "restart_events", "DISABLE", "events",
)}) if _monitoring is not None else None
_real_use_tool_id = _mon.use_tool_id if _mon is not None else None
_getframe = sys._getframe


def _free_tool():
    """A sys.monitoring tool id nobody holds, from the highest: those a program takes are the
    lowest (0 is the debugger's, 1 coverage's, 2 a profiler's)."""
    return next((t for t in range(5, -1, -1) if _mon.get_tool(t) is None), None)


# Every single event (from 3.14 some names, BRANCH among them, are sets of others).
_EVENTS = [e for e in (getattr(_mon.events, name) for name in dir(_mon.events) if name.isupper()) if e and not e & (e - 1)] if _monitoring is not None else []


def _release_tool(tool):
    """A sys.monitoring tool id given back with its events and callbacks (3.12's free_tool_id keeps them)."""
    try:
        _mon.set_events(tool, 0)
        for event in _EVENTS:
            _mon.register_callback(tool, event, None)
        _mon.free_tool_id(tool)
    except ValueError:  # not held
        pass


def _no_call(code, offset, function, arg0):
    return _mon.DISABLE


def _library_prefixes():
    paths = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        try:
            p = sysconfig.get_paths().get(key)
        except Exception:
            p = None
        if p:
            paths.add(os.path.realpath(p) + os.sep)
    for p in (sys.prefix, sys.base_prefix, sys.exec_prefix):
        paths.add(os.path.realpath(os.path.join(p, "lib")) + os.sep)
    return tuple(sorted(paths))


_LIBRARY = _library_prefixes()


_plain_cells_of = {}  # code -> {cell name: [(after, upto)]: f_lasti ranges where it may hold a plain value}


def _stores(x, name):
    """Whether instruction x stores `name` in its fast slot (STORE_FAST or a super-instruction that does)."""
    return x.opname.startswith("STORE_FAST") and name in (x.argval if isinstance(x.argval, tuple) else (x.argval,))


def _plain_cells(code):
    """The cell (or free) names of `code` that an inline comprehension uses as plain variables, each
    with where it does: after its LOAD_FAST_AND_CLEAR (which saves the outer value) up to the
    STORE_FAST after its loop that restores it, and in its cleanup on an exception, up to the same
    restore there. A comprehension that makes the name a cell at once (MAKE_CELL: a closure in it
    captures it) is safe to read."""
    found = _plain_cells_of.get(code)
    if found is not None:
        return found
    found = _plain_cells_of[code] = {}
    cells = set(code.co_cellvars) | set(code.co_freevars)
    if not cells:
        return found
    import dis

    bytecode = dis.Bytecode(code)
    ins = list(bytecode)
    at = {x.offset: i for i, x in enumerate(ins)}
    for i, first in enumerate(ins):
        name = first.argval
        if first.opname != "LOAD_FAST_AND_CLEAR" or name not in cells:
            continue
        saves = [first]
        for x in ins[i + 1 :]:
            if x.opname not in ("LOAD_FAST_AND_CLEAR", "MAKE_CELL"):
                break
            saves.append(x)
        if any(x.opname == "MAKE_CELL" and x.argval == name for x in saves):
            continue
        looped = False
        restore = ins[-1].offset
        for x in ins[i:]:
            looped = looped or x.opname == "END_FOR"
            if looped and _stores(x, name):
                restore = x.offset
                break
        ranges = found.setdefault(name, [])
        ranges.append((first.offset, restore))
        for entry in bytecode.exception_entries:
            if first.offset < entry.start and entry.end <= restore and entry.target in at:
                for x in ins[at[entry.target] :]:
                    if _stores(x, name):
                        ranges.append((entry.target - 1, x.offset))
                    if _stores(x, name) or x.opname == "RERAISE":
                        break
    return found


def _locals_items(frame, locals_=None):
    """frame.f_locals' items (or those of `locals_`, a mapping read from it before), without the names
    whose reading would crash this Python (see _CELL_SLOT_CRASH)."""
    if locals_ is None:
        locals_ = frame.f_locals
    if _CELL_SLOT_CRASH:
        code = frame.f_code
        lasti = frame.f_lasti
        unsafe = {name for name, ranges in _plain_cells(code).items() if any(a < lasti <= b for a, b in ranges)}
        if unsafe:
            # Each name read alone (iterating would read them all), in the order f_locals lists them.
            cells = [n for n in code.co_cellvars if n not in code.co_varnames]
            for name in code.co_varnames + tuple(cells) + code.co_freevars:
                if name not in unsafe:
                    try:
                        yield name, locals_[name]
                    except KeyError:  # not bound
                        pass
            return
    for item in locals_.items():
        yield item


_NEVER = 1 << 62  # a window that has not begun: its seek has not been met


class Skeleton:
    """Where each event of a run stands, and no more: its kind, line, depth and file, and how many
    bytes of standard output were written before it (what a move between two events printed is
    the run's output between their offsets). Seven bytes an event (a file and an offset are kept
    only where they change), so that the debugger's semantics (adapter/real/semantics.ts) can
    answer every move over a run of millions of events, whose states are then recorded a window at
    a time."""

    KINDS = {"call": 0, "line": 1, "return": 2, "exception": 3}

    def __init__(self):
        self.kind = bytearray()
        self.line = array.array("i")
        self.depth = array.array("H")
        # (event index, value) where the value changes from the event before: the file, the output.
        self.file_at, self.file = array.array("I"), array.array("H")
        self.out_at, self.out = array.array("I"), array.array("I")
        self.files = {None: 0, "": 0}
        self.names = [""]
        self.last_file = 0
        self.last_out = 0

    def add(self, event, line, depth, rel, out):
        files = self.files
        f = files.get(rel)
        if f is None:
            f = files[rel] = len(self.names)
            self.names.append(rel)
        n = len(self.kind)
        self.kind.append(self.KINDS[event])
        self.line.append(line)
        self.depth.append(depth if depth < 65535 else 65535)
        if f != self.last_file:
            self.last_file = f
            self.file_at.append(n)
            self.file.append(f)
        if out != self.last_out:
            self.last_out = out
            self.out_at.append(n)
            self.out.append(out)

    def record(self):
        # Little-endian, as WebAssembly and the debugger's machine read them.
        b64 = lambda a: base64.b64encode(a if isinstance(a, bytearray) else a.tobytes()).decode("ascii")
        return {"event": "skeleton", "kind": b64(self.kind), "line": b64(self.line), "depth": b64(self.depth),
                "fileAt": b64(self.file_at), "file": b64(self.file), "outAt": b64(self.out_at), "out": b64(self.out),
                "files": self.names}


class TraceLimit(BaseException):
    """Raised into the program to stop it; a BaseException so `except Exception` lets it pass."""


class Output:
    """The record stream: JSON lines, each written at once (unbuffered), so a program killed while
    stuck in C code loses none of the records before it."""

    def __init__(self, fd):
        self.fd = fd
        self.lock = threading.Lock()

    def write(self, record):
        if self.fd is None:  # a forked child of the program: the trace is its parent's
            return
        data = (_dumps(record) + "\n").encode("utf-8")
        with self.lock:
            while data:
                data = data[_os_write(self.fd, data):]


def _capture():
    # A real text stream (print, .buffer, flush all work) over bytes we can measure and drain.
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="\n", write_through=True)


def _drain(stream):
    buf = stream.buffer
    data = buf.getvalue()
    if data:
        buf.seek(0)
        buf.truncate()
    return data



def _seek_places(places):
    """A Continue's seek: its places ([FILE, LINE] or [FILE, LINE, CONDITION]), each to the
    conditions of its breakpoints (text, compiled), None where one has none (or one that does not
    compile: the move lands there, and the engine says why)."""
    out = {}
    for p in places:
        key = (str(p[0] or ""), int(p[1]))
        condition = p[2] if len(p) > 2 and p[2] else None
        if key in out and out[key] is None:
            continue
        code = None if condition is None else _condition(condition)
        if code is None or isinstance(code, SyntaxError):
            out[key] = None
        else:
            out.setdefault(key, []).append((str(condition), code))
    return out


def _probes(probes):
    """The places and the expressions (each compiled once, or the error its compiling raised) of
    the "probes" option; None without one."""
    if not probes:
        return None
    places = set((p[0] or None, int(p[1])) for p in probes.get("places") or ())
    return (places, [_condition(e) for e in probes.get("expressions") or ()])


def _condition(text):
    """A breakpoint's condition (or a log message's part) compiled once, or the SyntaxError it raised."""
    try:
        return compile(str(text), "<breakpoint condition>", "eval", dont_inherit=True)
    except SyntaxError as e:
        return e

class Run(_console.Console):
    """One traced program: its settings, its state while it runs, and the records it writes. What
    the debugger runs in its frames (inspect, statements) is the Console's part (console.py)."""

    TraceLimit = TraceLimit  # (what a limit raises into the program: the console lets it through)

    def __init__(self, out, request_id, program, opts):
        self.out = out
        self.id = request_id
        # Text without a file (batch "source") has a placeholder name and no folder of user files.
        self.filename = os.path.abspath(program) if program else "<program>"
        self.main_real = os.path.realpath(self.filename) if program else None
        self.main_dir = os.path.dirname(self.main_real) if program else None
        # The user's folder: its .py files are traced (the program's folder, or a project root above it).
        root = opts.get("root")
        self.user_dir = os.path.realpath(root) if root and program else self.main_dir
        self.max_events = int(opts["maxEvents"])
        self.timeout = float(opts["timeout"])
        self.max_output = int(opts["maxOutput"])
        self.max_repr = int(opts["maxRepr"])
        self.max_objects = int(opts["objects"])
        # {"at": N, "expressions": [...]}: evaluate them in the frame of the N-th record, then stop.
        # {"landing": K, ...}: at the K-th record from where the run's seek lands instead (a fast
        # seek's landing has no index: a run held there answers without one).
        self.inspect = opts.get("inspect")
        # Where the runner can hold the run at that record (the sealed one's): a function given each
        # answer, which returns the next question there (expressions, or a line as a statement is
        # given: Console.answer_inspect), or None to go on.
        self.hold = opts.get("hold")
        # {"places": [[FILE|null, LINE], ...], "expressions": [...]}: evaluated in the frame at every
        # line event on those places (breakpoint conditions, log messages: Console.answer_probes).
        self.probes = _probes(opts.get("probes"))
        # What the user ran at stops (the Debug Console, a value set): part of the run's input, by
        # the index of the record they were run at ([{"at": N, "code": TEXT, "up"?: K}, ...]).
        self.statements = {}
        for item in opts.get("statements") or ():
            self.statements.setdefault(int(item["at"]), []).append(item)
        # The locals of the frame the statements of this event ran in (see locals_of).
        self.changed = None
        # A window of a long run: events before "from" are counted, not recorded (the states of a
        # run past maxEvents are recorded a window at a time, each by running the program again).
        # "skeleton": no state recorded, but where every event stands (Skeleton), for the whole run.
        # "seek": the window starts at the first event after "after" that a move lands on (Run.seeks).
        window = opts.get("window") or {}
        self.windowed = bool(window)
        self.record_from = int(window.get("from") or 0)
        self.skeleton = Skeleton() if window.get("skeleton") else None
        if self.skeleton is not None:
            self.record_from = self.max_events
        seek = window.get("seek")
        self.seek = None
        if seek is not None:
            self.record_from = _NEVER
            places = seek.get("places")
            self.seek = (int(seek["after"]), seek.get("depth"), seek.get("returnAt"), None if places is None else _seek_places(places))
        # A seek's hits of each of its places, line events past where it starts (lands_hit); where it
        # lands on one, which and how many it had there ("hits" in the window record: a seek that
        # lands where a condition held is then found again by a seek of that place alone with
        # "nth" and no condition read, which lands on its nth hit).
        self.nth = int(seek["nth"]) if seek is not None and seek.get("nth") else None
        self.place_hits = {}
        self.nth_hits = 0
        self.landed_hits = None
        # "latest": no state recorded, but the latest event before "before" no deeper than "depth" (a
        # Step Back's: Run.look); the run stops at "before".
        latest = window.get("latest")
        self.latest = None if latest is None else (int(latest["before"]), int(latest["depth"]))
        self.found = None
        if latest is not None:
            self.record_from = _NEVER
        # (a Continue's seek looks at line events on its lines only: a set of ints read first; not
        # one bounded as a Step Over or Step Out, which may land on any event)
        lines = None if seek is None or self.seek[3] is None else {line for _, line in self.seek[3].keys()}
        bounded = lines is not None and (self.seek[1] is not None or self.seek[2] is not None)
        self.seek_lines = None if bounded else lines
        # (a bounded one's breakpoint lines, looked at in the frames it passes over: count_trace)
        self.place_lines = lines if bounded else None
        # A Continue's seek keeps, by depth, the index of the call event that began the latest
        # excursion into it (a call not right after a return at that depth: the event before it is
        # its caller's). Where it lands, the latest earlier event at the landing's depth is "behind"
        # it: the event just before, or, where that was a return, the event before the excursion
        # it ended. A Step Back from there needs no run to find where it goes. Only calls are kept:
        # the line events of a long loop cost nothing more.
        self.excursions = {} if self.seek_lines is not None else None
        self.landing = {}  # code -> whether a Continue's seek may land in its frames (may_land)
        self.line_tables = {}  # code -> where each of its lines' instructions stand (line_at)
        # A seek under way lands where the run is when the debugger pauses it: `pause` says whether
        # it asks to (the sealed runner's), read every _PAUSE_POLL seconds (limits) by every run, so
        # that the debugger sees it go on (a run still on its way to where the move began, say).
        self.pause = opts.get("pause")
        # The local trace functions, bound once: what a trace function returns is called at the
        # frame's next event, and a bound method made at each event is a fifth of the fast path.
        self.local, self.counting = self.local_trace, self.count_trace
        self.behind = None
        self.held = None  # what the conditions read where a Continue's seek landed (holds)
        # Events counted on the fast path (skip): before the window, where nothing is run at them.
        self.skip_until = 0 if self.statements else self.record_from
        # A Continue's seek the runner lets run fast (window "fast"): past the event it starts from,
        # no trace function runs; sys.monitoring calls on_line on the lines of its places only (any
        # other line is disabled where it stands once met), and the runner's ticks (on_tick) read
        # the limits. Where it lands, tracing takes up again from the frames on the stack (a pause
        # ends the run instead: see limits). The events it passed are not counted: the window's
        # "from" is then no event's index ("fast"), and a counting run of the same seek finds it
        # (the debugger's to ask). A Step Over's or Step Out's seek the runner lets run fast goes
        # the same way in the calls it passes over (go_past): each runs with no trace function,
        # and tracing takes up again as it returns (or unwinds, or yields, or a C function called
        # from a traced frame returns).
        self.fast = None
        self.past = None
        self.monitor = None  # the sys.monitoring tool id while the run goes fast
        self.watched = None  # the traced frames on the stack as the seek went fast (go_fast, go_past)
        self.went_fast = False
        # Whether the runner ticks (sealed.py): the tick signal is then the tracer's, not the program's.
        self.ticks = bool(opts.get("ticks")) and _TICK is not None
        if window.get("fast") and seek is not None and not self.statements and self.probes is None and _monitoring is not None and self.ticks:
            if self.seek_lines is not None:
                self.fast = self.seek[0]
                self.skip_until = self.seek[0] + 1
            elif self.seek[1] is not None or self.seek[2] is not None:
                self.past = self.seek[0]
        # Whether a line before the window may be counted with nothing else read (local_trace): not
        # for a skeleton, a move back's run or a seek that lands on any line; not once stopped.
        self.lean = self.skeleton is None and self.latest is None and (self.seek is None or self.seek_lines is not None)
        self.events = 0
        self.output = 0  # bytes of stdout already attributed to records
        self.err_output = 0  # bytes of stderr already attributed to records
        self.files = {}  # co_filename -> None (not traced), "" (main program) or relative path
        self.names = {}  # code -> func name
        self.stack = {}  # traced frames now on the stack -> (depth, stack level above the base)
        self.base = None  # the tracer's frame that runs the program
        self.base_level = 0  # Python frames up to and including the base
        self.user_limit = sys.getrecursionlimit()
        self.exc_lasti = {}  # frame -> f_lasti at its last exception event, until a line event
        self.returned = None  # a return just seen, for the caller's next record: see returned_value
        self.stopped = None  # the limit that stopped tracing, if one did
        self.done = False  # the exit record is being or has been written
        self.cut = False  # stdout went past maxOutput
        self.start = _monotonic()
        self.next_poll = self.start + _PAUSE_POLL
        self.rearm()
        self.stdout = _capture()
        self.stderr = _capture()

    # ---- records ----

    def write(self, record):
        if self.id is not None:
            record["id"] = self.id
        self.out.write(record)

    def finish(self, status, value=None, reason=None, last=False):
        """Writes the exit record, once: the first caller wins (the main thread, or the watchdog).

        `last` marks the record of a process about to exit (batch drivers start another)."""
        with self.out.lock:
            if self.done:
                return False
            self.done = True
        if self.stopped:
            status, reason = "limit", self.stopped
        text = self.take_stdout()
        if self.cut and status == "normal":
            status, reason = "limit", "output"
        if status == "limit" and value is None:
            value = self.limit_text(reason)
        if self.skeleton is not None:
            self.write(self.skeleton.record())
        if self.windowed:
            # Where the window began (none: the seek met nothing), and how many events the run had.
            window = {"event": "window", "from": self.record_from if self.record_from != _NEVER else None, "events": self.events}
            if self.latest is not None:
                window["latest"] = None if self.found is None else {"at": self.found[0], "event": self.found[1], "depth": self.found[2]}
            if self.behind is not None:
                window["behind"] = self.behind
            if self.held is not None:
                window["held"] = self.held
            if self.landed_hits is not None:
                window["hits"] = self.landed_hits
            if self.went_fast:
                window["fast"] = True
            self.write(window)
        record = {"event": "exit", "status": status}
        if value is not None:
            record["value"] = value
        if reason is not None:
            record["reason"] = reason
        if text:
            record["stdout"] = text
        if last:
            record["last"] = True
        err = self.take_stderr()
        if err:
            record["stderr"] = err
        self.write(record)
        return True

    def take_stderr(self):
        """Standard error written since the previous record, up to --max-output bytes in all (then cut)."""
        data = _drain(self.stderr)
        if not data:
            return None
        data = data[: max(self.max_output - self.err_output, 0)]
        self.err_output += len(data)
        return data.decode("utf-8", "backslashreplace") if data else None

    def take_stdout(self):
        data = _drain(self.stdout)
        if not data:
            return None
        room = self.max_output - self.output
        if len(data) > room:
            data = data[: max(room, 0)]
            self.cut = True
        self.output += len(data)
        return data.decode("utf-8", "backslashreplace")

    def limit_text(self, reason):
        """What a limit exit says: which limit, and its value."""
        if reason == "events":
            return "the limit of %d events was reached" % self.max_events
        if reason == "time":
            return "the time limit of %g s was reached" % self.timeout
        if reason == "output":
            return "the output limit of %d bytes was reached" % self.max_output
        if reason == "hole":
            return "the run stopped at a hole with no answer yet (the sealed run asks, then runs again)"
        if reason == "tracing":
            return "the program turned tracing off (sys.settrace): what followed could not be recorded"
        if reason == "inspect":
            return "the run stopped where the debugger evaluated expressions"
        if reason == "seek":
            return "the run stopped where the debugger's move back began"
        if reason == "pause":
            return "the debugger paused a run that counted no index"
        return None

    def limit(self, reason):
        # Tracing stops here; the exit record follows when the program has unwound (or the watchdog
        # writes it, should the program swallow TraceLimit and go on).
        self.stopped = reason
        self.lean = False
        self.kill_at = min(self.kill_at, _monotonic() + _GRACE)
        raise TraceLimit(reason)

    # ---- values ----

    def repr(self, value):
        try:
            if 0 < self.max_repr and type(value) in _NESTED and _larger_than(value, max(4 * self.max_repr, _CUT_FROM)):
                r = _cut_repr(value, self.max_repr)
                return _ADDRESS.sub(" at 0x...", r) if " at 0x" in r else r
            r = repr(value)
        except Exception as e:
            return "<repr failed: %s>" % type(e).__name__
        if not isinstance(r, str):
            return "<repr failed: TypeError>"
        if " at 0x" in r:
            r = _ADDRESS.sub(" at 0x...", r)
        if 0 < self.max_repr < len(r):
            r = "%s…(+%d chars)" % (r[: self.max_repr], len(r) - self.max_repr)
        return r

    def exception_repr(self, arg):
        etype, value = arg[0], arg[1]
        if not isinstance(value, BaseException):  # older Pythons may pass an unnormalized exception
            try:
                value = etype(*value) if isinstance(value, tuple) else etype() if value is None else etype(value)
            except Exception:
                return "%s()" % getattr(etype, "__name__", "Exception")
        return self.repr(value)

    # ---- what is traced ----

    def file_of(self, filename):
        """None for frames not traced, "" for the main program, else the path of another user file."""
        if filename == self.filename:
            return ""
        if self.main_dir is None or not filename.endswith(".py"):
            return None
        path = os.path.realpath(filename)
        if path == self.main_real:
            return ""
        if not (path.startswith(self.main_dir + os.sep) or path.startswith(self.user_dir.rstrip(os.sep) + os.sep)) or path in _OWN_FILES:
            return None
        if path.startswith(_LIBRARY) or "site-packages" in path or "dist-packages" in path:
            return None
        return os.path.relpath(path, self.main_dir).replace(os.sep, "/")

    def rel_of(self, filename):
        """file_of, kept by file name (self.files)."""
        files = self.files
        return files[filename] if filename in files else files.setdefault(filename, self.file_of(filename))

    def func_of(self, code):
        name = self.names.get(code)
        if name is None:
            name = code.co_qualname if _HAS_QUALNAME else _qualname(code)
            self.names[code] = name
        return name

    # ---- the trace functions ----

    def global_trace(self, frame, event, arg):
        # Called for every new frame. Where it sits: the nearest traced frame below it gives its depth,
        # the number of frames up to the run's base frame its stack level (for the recursion limit).
        stack = self.stack
        steps = 1
        back = frame.f_back
        depth = level = None
        while back is not None:
            below = stack.get(back)
            if below is not None:
                depth, level = below[0] + 1, below[1] + steps
                break
            if back is self.base:
                depth, level = 0, steps
                break
            back = back.f_back
            steps += 1
        if level is not None and level > self.user_limit:
            return self.refuse()
        filename = frame.f_code.co_filename
        files = self.files
        rel = files[filename] if filename in files else files.setdefault(filename, self.file_of(filename))
        if rel is None or self.stopped:
            return None
        if self.fast is not None and self.events > self.fast and self.go_fast(frame):
            return None
        stack[frame] = (depth or 0, level or steps)
        seek = self.seek
        if self.latest is not None:
            # Frames deeper than the move back's depth cannot hold what it looks for: only counted.
            if (depth or 0) > self.latest[1]:
                self.skip()
                return self.counting
            self.look("call", depth or 0)
        elif seek is not None and self.events > seek[0]:
            if seek[1] is not None or seek[2] is not None:
                # A Step Over or Step Out lands in a frame on the stack when it began: a frame
                # entered since is deeper, and its events are only counted (count_trace), or not
                # even traced where the seek goes fast. (A Continue bounded so, the rest of a Step
                # Over past breakpoints, lands in such a frame on a breakpoint's line only: count_trace
                # looks at those lines; going fast, on_past_line.)
                if self.past is not None and self.go_past(frame):
                    return None
                self.skip()
                return self.counting
            if self.seeks("call", depth or 0, frame.f_lineno or frame.f_code.co_firstlineno, rel):
                self.record_from = self.skip_until = self.events
                self.seek = None
        if self.events < self.skip_until:
            excursions = self.excursions
            if excursions is not None and (self.returned is None or self.returned[0] != (depth or 0)):
                excursions[depth or 0] = self.events
            if self.skeleton is not None:
                self.skeleton.add("call", frame.f_lineno or frame.f_code.co_firstlineno, depth or 0, rel, self.output + self.stdout.buffer.tell())
            self.skip()
            if self.lean and self.seek_lines is not None and not self.may_land(frame.f_code, rel):
                # A Continue's seek cannot land in this frame: none of its lines is a breakpoint's.
                return self.counting
        else:
            self.event(frame, "call", None, rel)
        return self.local

    def may_land(self, code, rel):
        """Whether a Continue's seek may land in a frame of `code` (in user file `rel`): one of the
        lines its code runs on is one of the seek's places. Once a code."""
        known = self.landing.get(code)
        if known is None:
            places = self.seek[3]
            lines = (line for _, _, line in code.co_lines()) if hasattr(code, "co_lines") else (line for _, line in _line_starts(code))
            known = self.landing[code] = any((rel or "", line) in places for line in lines)
        return known

    def lands_here(self, frame):
        """Whether a Continue's seek lands on this line event (a place of its, its condition held)."""
        rel = self.files.get(frame.f_code.co_filename)
        return frame.f_lineno in self.seek_lines and self.seeks("line", self.stack[frame][0], frame.f_lineno, rel, frame)

    def go_fast(self, frame, line=False):
        """A fast seek's start (see self.fast) at `frame`'s event (`line`: a line event of a traced
        frame): no trace function from here, sys.monitoring on the seek's lines (each other line
        is disabled as it is met), the runner's ticks read. False where every sys.monitoring tool
        id is taken (by the program): the seek goes on counting.

        The traced frames on the stack now (`watched`) keep their lines, each counted until the
        first event that is not (a line of another user code, an exception in one of them): where
        the seek lands in one of them, the latest of its lines so counted is "behind" the landing
        (see behind_landing), an index as a counting run gives it."""
        self.fast = None
        self.skip_until = self.record_from
        if not self.take_tool():
            return False
        self.watched = set(self.stack)
        self.watched_codes = {f.f_code for f in self.watched}
        self.fast_at = {frame: self.events} if line else {}
        self.fast_events = self.events + 1
        self.exact = True
        _real_settrace(None)
        f = frame
        while f is not None and f is not self.base:
            f.f_trace = None
            f = f.f_back
        self.stack.clear()
        self.exc_lasti.clear()
        self.returned = None
        self.excursions = None
        self.program_limit()
        events = _mon.events
        _mon.register_callback(self.monitor, events.LINE, self.on_line)
        _mon.register_callback(self.monitor, events.JUMP, self.on_jump)
        _mon.register_callback(self.monitor, events.RAISE, self.on_raise)
        self.jump_line = self.on_line
        _mon.set_events(self.monitor, events.LINE | events.JUMP | events.RAISE)
        return True

    def take_tool(self):
        """A sys.monitoring tool id for a fast seek (self.monitor), every location's events enabled
        again, and the runner's ticks read; False where the program holds every id."""
        tool = _free_tool()
        if tool is None:
            return False
        _real_use_tool_id(tool, "ndbg")
        self.monitor = tool
        self.went_fast = True
        _real_signal(_TICK, self.on_tick)
        _mon.restart_events()
        return True

    def program_limit(self):
        """Python's recursion limit is the program's own while no global_trace refuses a frame past
        it (a fast seek's untraced frames): its frames above the tracer's base, as refuse counts them.
        set_recursion_limit puts the tracer's headroom back."""
        try:
            _real_setrecursionlimit(self.base_level + self.user_limit)
        except RecursionError:  # (deeper than that already: the frames above are the tracer's)
            pass

    def go_past(self, frame):
        """A call a Step Over's or Step Out's fast seek passes over (`frame`, deeper than where it
        lands): no trace function until it returns to a traced frame (on_return, on_unwind,
        on_c_leave), or, a Continue bounded so, until a breakpoint's line in it (on_past_line).
        False where every sys.monitoring tool id is taken (by the program): the seek goes on
        counting."""
        if self.monitor is None:
            if not self.take_tool():
                self.past = None
                return False
            events = _mon.events
            _mon.register_callback(self.monitor, events.PY_RETURN, self.on_return)
            _mon.register_callback(self.monitor, events.PY_YIELD, self.on_return)
            _mon.register_callback(self.monitor, events.PY_UNWIND, self.on_unwind)
            for event in (events.C_RETURN, events.C_RAISE):
                _mon.register_callback(self.monitor, event, self.on_c_leave)
            # (C_RETURN and C_RAISE come only with CALL, which is wanted nowhere)
            _mon.register_callback(self.monitor, events.CALL, _no_call)
            _mon.register_callback(self.monitor, events.LINE, self.on_past_line)
            _mon.register_callback(self.monitor, events.JUMP, self.on_jump)
            self.jump_line = self.on_past_line
        del self.stack[frame]
        self.watched = set(self.stack)
        events = _mon.events
        _mon.set_events(self.monitor, events.PY_RETURN | events.PY_UNWIND | events.PY_YIELD | (events.LINE | events.JUMP if self.seek[3] is not None else 0))
        for f in self.watched:
            _mon.set_local_events(self.monitor, f.f_code, events.CALL | events.C_RETURN | events.C_RAISE)
        self.program_limit()
        _real_settrace(None)
        return True

    def on_past_line(self, code, line, up=1):
        """A line met in a call a bounded Continue passes over (go_past; `up`: how far up the
        stack its frame is): where it is one of its breakpoints' places and its condition holds,
        the move lands here (tracing takes up again from the frames on the stack); any other line
        is never called again."""
        rel = self.rel_of(code.co_filename)
        places = self.seek[3] if self.monitor is not None and self.seek is not None else None
        if places is None or rel is None or (rel, line) not in places:
            return _mon.DISABLE
        return self.land_fast(_getframe(up), rel, line)

    def on_return(self, code, offset, value):
        """A Python frame returns or yields while a fast seek passes over a call: where to a traced
        frame, tracing takes up again there, the value returned kept for its next record (as
        kept() keeps a return's: where the frame is the user's)."""
        frame = _getframe(1)
        back = frame.f_back
        if self.watched is not None and back in self.watched:
            self.returned = None if self.rel_of(code.co_filename) is None else (self.stack[back][0] + 1, code, self.repr(value), _WRITTEN)
            self.back_in()

    def on_unwind(self, code, offset, exception):
        """A Python frame is unwound by an exception while a fast seek passes over a call: where to
        a traced frame, tracing takes up again there (whose exception event follows)."""
        if self.watched is not None and _getframe(1).f_back in self.watched:
            self.returned = None
            self.back_in()

    def on_c_leave(self, code, offset, function, arg0):
        """A C function called from a traced frame returns (or raises) while a fast seek passes over
        the calls it made (sorted's key, a generator's next): tracing takes up again there."""
        if self.watched is not None and _getframe(1) in self.watched:
            self.returned = None
            self.back_in()

    def back_in(self):
        """The call a fast seek passed over is done: the traced frames are traced again (their
        trace functions were kept), sys.monitoring quiet until the next such call."""
        self.unwatch(self.monitor)
        _mon.set_events(self.monitor, 0)
        self.set_recursion_limit(self.user_limit)
        _real_settrace(self.global_trace)

    def on_jump(self, code, offset, destination):
        """A jump while a seek goes fast. sys.settrace gives a line event for a jump back within
        one line (a loop on one line: `while x < 5: x += 1`; CPython's legacy tracing makes it of
        sys.monitoring's JUMP) where sys.monitoring gives no LINE: such a jump is a line here, as
        on_line or on_past_line takes it; any other jump is never called again."""
        if destination > offset:
            return _mon.DISABLE
        line = self.line_at(code, destination)
        if line is None or line != self.line_at(code, offset):
            return _mon.DISABLE
        return self.jump_line(code, line, 2)

    def line_at(self, code, offset):
        """The line of `code`'s instruction at `offset` (bytes), as co_lines gives it (None: none)."""
        table = self.line_tables.get(code)
        if table is None:
            spans = list(code.co_lines())
            table = self.line_tables[code] = ([start for start, _, _ in spans], spans)
        k = _bisect(table[0], offset) - 1
        return table[1][k][2] if k >= 0 and offset < table[1][k][1] else None

    def on_line(self, code, line, up=1):
        """A line met while the seek goes fast (`up`: how far up the stack its frame is): where it
        is one of the seek's places and its condition holds, the move lands here; any other line
        of any code is never called again."""
        rel = self.rel_of(code.co_filename)
        if self.monitor is None or rel is None:
            return _mon.DISABLE
        watched = code in self.watched_codes
        frame = _getframe(up) if watched else None
        # (the latest line of this frame before this one, where counted: behind it if it lands)
        behind = self.fast_at.get(frame) if watched else None
        if watched and frame in self.watched:
            # (a line of a traced frame: never disabled, counted while all before it were)
            if self.exact:
                self.fast_at[frame] = self.fast_events
                self.fast_events += 1
            else:
                self.fast_at.pop(frame, None)
        else:
            self.exact = False
        if line not in self.seek_lines or (rel, line) not in self.seek[3]:
            return None if watched else _mon.DISABLE
        return self.land_fast(frame or _getframe(up), rel, line, behind)

    def land_fast(self, frame, rel, line, behind=None):
        """A line of one of a fast seek's places met (on_line, on_past_line): where the seek lands
        on that hit (lands_hit), the move lands here, tracing taken up again from the frames on the
        stack, `behind` what is behind it (a Continue's: see go_fast)."""
        if not self.lands_hit((rel, line), frame):
            return None
        self.trace_again(frame)
        self.record_from = self.skip_until = self.events
        self.seek = None
        self.behind = behind
        self.event(frame, "line", None, rel)
        return None

    def on_raise(self, code, offset, exception):
        """An exception event of a traced frame while the seek goes fast: its lines are no longer
        counted (an event that is not counted)."""
        frame = _getframe(1)
        if frame in self.watched:
            self.exact = False
            self.fast_at.pop(frame, None)

    def on_tick(self, signum, frame):
        """The runner's tick while the seek goes fast: the limits and the pause poll, which no
        trace function reads then."""
        if self.monitor is not None and not self.stopped:
            self.limits()

    def trace_again(self, frame):
        """Ends a fast seek at `frame`: sys.monitoring off, and the traced frames on the stack
        (depth and stack level, as global_trace gives them) traced again from their next event."""
        self.quiet()
        frames = []
        f = frame
        while f is not None and f is not self.base:
            frames.append(f)
            f = f.f_back
        depth = -1
        for level, f in enumerate(reversed(frames), 1):
            if self.rel_of(f.f_code.co_filename) is not None:
                depth += 1
                self.stack[f] = (depth, level)
                f.f_trace = self.local
        self.seek_lines = None
        self.lean = False
        self.skip_until = self.record_from
        _real_settrace(self.global_trace)

    def quiet(self):
        """sys.monitoring and the ticks off, where a fast seek had them on."""
        tool, self.monitor = self.monitor, None
        if tool is None:
            return
        _real_signal(_TICK, signal.SIG_DFL)
        self.set_recursion_limit(self.user_limit)
        self.past = None
        self.unwatch(tool)
        _release_tool(tool)

    def unwatch(self, tool):
        """No more events of the traced frames' codes (go_past's), and no traced frames to watch."""
        try:
            for f in self.watched or ():
                _mon.set_local_events(tool, f.f_code, 0)
        except ValueError:  # the program freed the tool id
            pass
        self.watched = None

    def local_trace(self, frame, event, arg):
        if event == "line" and self.lean and self.events < self.skip_until:
            # The fast path of a long run's counting (millions of events): a line before the window
            # that no seek looks at is passed() inline, a method call being most of its cost (and a
            # hit of an nth seek's place short of its nth: passes_hit).
            lines = self.seek_lines
            if lines is None or frame.f_lineno not in lines or (self.nth is not None and self.passes_hit(frame)):
                self.events += 1
                if not self.events & 4095:
                    self.limits()
                self.returned = None
                if self.exc_lasti:
                    self.exc_lasti.pop(frame, None)
                return self.local
        if self.stopped:
            return None
        lands = None  # (whether the seek lands here, where a fast seek's start asked: asked once)
        if self.fast is not None and self.events > self.fast:
            if event == "line":
                lands = self.lands_here(frame)
            if not lands and self.go_fast(frame, event == "line"):
                return None
        if event == "line" or event == "return" or event == "exception":
            seek = self.seek
            if (
                seek is not None
                and self.events > seek[0]
                and (self.seek_lines is None or frame.f_lineno in self.seek_lines)
                and (lands if lands is not None else self.seeks(event, self.stack[frame][0], frame.f_lineno, self.files.get(frame.f_code.co_filename), frame))
            ):
                self.record_from = self.skip_until = self.events
                self.seek = None
                # (a fast seek that lands on the first event past where it starts never goes fast)
                self.fast = None
                self.quiet()
                if self.excursions is not None:
                    self.behind = self.behind_landing(self.stack[frame][0])
                    self.excursions = None
            if self.latest is not None:
                self.look(event, self.stack[frame][0])
            if self.events < self.skip_until:
                # Before a window (the fast path of event(): a long run is counted here, millions of events).
                if self.skeleton is not None:
                    self.skeleton.add(event, frame.f_lineno, self.stack[frame][0], self.files.get(frame.f_code.co_filename), self.output + self.stdout.buffer.tell())
                self.passed(frame, event, arg)
            else:
                self.event(frame, event, arg, self.files.get(frame.f_code.co_filename))
        return self.local

    def count_trace(self, frame, event, arg):
        """The local trace function of a frame a seek passes over (see global_trace): its events
        are counted, and once the window has begun, recorded (local_trace). A bounded Continue's
        (the rest of a Step Over past breakpoints) may land on its breakpoints' lines there."""
        if self.events >= self.skip_until or self.stopped:
            return self.local_trace(frame, event, arg)
        if event == "line":
            if self.place_lines is not None and frame.f_lineno in self.place_lines:
                local = self.local_trace(frame, event, arg)
                return self.counting if local is not None and self.events < self.skip_until else local
            # passed(), inline (see local_trace)
            self.events += 1
            if not self.events & 4095:
                self.limits()
            self.returned = None
            if self.exc_lasti:
                self.exc_lasti.pop(frame, None)
        elif event == "return" or event == "exception":
            self.passed(frame, event, arg)
        return self.counting

    def look(self, event, depth):
        """A move back's run (Step Back): the latest event no deeper than its depth, kept until the
        run comes back to where the move began, where it stops. adapter/real/semantics.ts's
        reverse Step Over lands there, or on the event just before."""
        before, at_most = self.latest
        if self.events >= before:
            self.limit("seek")
        if depth <= at_most:
            self.found = (self.events, event, depth)

    def behind_landing(self, depth):
        """The latest event before a Continue's landing (a line event at `depth`) at that depth, none
        of them a return: the one just before, or, where that was a return from a call this line
        made, the event before the first call of those (see excursions); -1 where there is none."""
        returned = self.returned
        if returned is not None and returned[0] == depth + 1 and depth + 1 in self.excursions:
            return self.excursions[depth + 1] - 1
        return self.events - 1

    def seeks(self, event, depth, line, rel, frame=None):
        """Whether a move lands on this event: the seek's form of adapter/real/semantics.ts's
        forward moves (seekOf and lands there): the first line on a breakpoint whose condition
        holds in `frame` (Continue), the first later event no deeper than a depth (Step Over), the
        first that leaves or returns from a frame (Step Out), whichever comes first of a
        Continue's and its bound's (the rest of a Step Over past breakpoints), else the next one
        (Step Into)."""
        _, depth_at_most, return_at, places = self.seek
        if places is not None and event == "line":
            key = (rel or "", line)
            if key in places and self.lands_hit(key, frame):
                return True
        if depth_at_most is not None:
            return depth <= depth_at_most
        if return_at is not None:
            return depth < return_at or (depth == return_at and event == "return")
        return places is None

    def passes_hit(self, frame):
        """Whether this line event, on a line of an nth seek's places, is a hit short of its nth
        past where the seek starts: counted (as lands_hit counts), the seek passes it on the fast
        path. Else the seek looks at it (seeks)."""
        n = self.nth_hits + 1
        if n >= self.nth or self.events <= self.seek[0] or (self.files.get(frame.f_code.co_filename) or "", frame.f_lineno) not in self.seek[3]:
            return False
        self.nth_hits = n
        return True

    def lands_hit(self, key, frame):
        """A line event on one of the seek's places (`key`), past where it starts: a hit, counted
        (an nth seek's, of all its places together). Whether the seek lands on it: its nth hit, for
        a seek with "nth"; else where the place has no condition or one holds in `frame`. Where it
        lands, its hits there are kept for the window record."""
        if self.nth is not None:
            n = self.nth_hits = self.nth_hits + 1
            lands = n >= self.nth
        else:
            n = self.place_hits[key] = self.place_hits.get(key, 0) + 1
            conditions = self.seek[3][key]
            lands = conditions is None or frame is None or self.holds(frame, conditions)
        if lands:
            self.landed_hits = {"place": list(key), "n": n}
        return lands

    def holds(self, frame, conditions):
        """Whether one of a breakpoint's conditions holds in the frame, as debugpy reads it there;
        one that raises lands the move (the engine says it could not be evaluated). What a
        condition writes is not the program's output."""
        mark = self.stdout.buffer.tell()
        values = []
        try:
            for text, code in conditions:
                try:
                    value = eval(code, frame.f_globals, frame.f_locals)
                    truth = bool(value)
                    values.append((text, value, None))
                    if truth:
                        break
                except self.TraceLimit:
                    raise
                except BaseException as e:
                    values.append((text, None, e))
                    break
            else:
                return False
            # Where the move lands: what each condition read there, so that the debugger need not
            # read it again (from the state's reprs, where an object has no value: "held").
            self.held = {"conditions": [text for text, _, _ in values], "results": [self.held_result(value, e) for _, value, e in values]}
            return True
        finally:
            self.taken_back(mark)

    def held_result(self, value, error):
        """What a condition read where the move landed, as a probe answers it: its value, or the
        error it raised (or its repr or str raises)."""
        if error is not None:
            return self.probe_error(error)
        try:
            return self.probe_result(value)
        except self.TraceLimit:
            raise
        except BaseException as e:
            return self.probe_error(e)

    def passed(self, frame, event, arg):
        """A line, return or exception event before the window: counted, and what the next events need of it kept."""
        self.skip()
        self.kept(frame, event, arg)

    def kept(self, frame, event, arg):
        """What the next events need of an event not recorded: the frame leaves the stack at its
        return, which the caller's next event shows (returned); an exception's place, until the
        frame's next line, tells an unwinding return."""
        if event == "return":
            depth = self.stack.pop(frame)[0]
            places = (frame.f_lasti, self.exc_lasti.pop(frame, None))
            self.returned = (depth, frame.f_code, arg, places) if depth else None
            return
        self.returned = None
        if event == "exception":
            self.exc_lasti[frame] = frame.f_lasti
        elif self.exc_lasti:
            self.exc_lasti.pop(frame, None)

    def skip(self):
        """Counts an event before the window; the time and output limits are read every 4096."""
        self.events += 1
        if not self.events & 4095:
            self.limits()

    def limits(self):
        now = _monotonic()
        if now > self.deadline:
            self.limit("time")
        if self.output + self.stdout.buffer.tell() > self.max_output:
            self.limit("output")
        if self.pause is not None and now >= self.next_poll:
            self.next_poll = now + _PAUSE_POLL
            # (a pause lands past where the move began: before it, the run is still on its way
            # there, and the debugger keeps asking until it lands)
            asked = self.pause()
            if asked == "stop":
                # The debugger no longer wants this run (one begun ahead of a question: heldStop.ts):
                # it ends as a held run let go does.
                self.limit("inspect")
            if asked == "pause" and self.seek is not None and self.events > self.seek[0]:
                if self.went_fast:
                    # Where a fast seek is, no counting run lands again (its events were not
                    # counted): the debugger pauses a counting run of the same seek instead.
                    self.limit("pause")
                self.pause_here()

    def rearm(self):
        """The run's time limit, from now: from its start, and again for each question to a run
        held at a stop, whose time waiting for it is no evaluation's (Console.answer_inspect)."""
        self.deadline = _monotonic() + self.timeout
        self.kill_at = self.deadline + _GRACE

    def pause_here(self):
        """The debugger pauses a seek under way: the move lands on the next event, wherever it is
        (an address as good as any other: the same run reaches it again)."""
        self.record_from = self.skip_until = self.events
        self.seek = None
        self.seek_lines = None
        self.excursions = None
        self.lean = False

    def refuse(self):
        """Raises the program's RecursionError where Python would (Python itself has headroom left).

        Raising from a trace function turns tracing off, so a profile hook (called when the refused
        frame unwinds) turns it back on: the unwinding is traced like any other exception. Before
        3.11 a frame whose call event fails gets no profile event: there the refused frame raises at
        its first line instead (one frame deeper, unrecorded)."""

        def rearm(frame, event, arg):
            sys.setprofile(None)
            if not self.stopped:
                sys.settrace(self.global_trace)

        def fail(frame, event, arg):
            sys.setprofile(rearm)
            raise RecursionError("maximum recursion depth exceeded")

        if sys.version_info < (3, 11):
            return fail
        fail(None, "call", None)

    def set_recursion_limit(self, limit):
        # The program's limit counts its own frames; Python's also holds the tracer's frames and,
        # before 3.12, C calls. Python's is kept well above, so the tracer itself never runs out.
        if not isinstance(limit, int):
            raise TypeError("'%s' object cannot be interpreted as an integer" % type(limit).__name__)
        if limit < 1:
            raise ValueError("recursion limit must be greater or equal than 1")
        _real_setrecursionlimit(limit + self.base_level)  # too low for the current depth: RecursionError
        _real_setrecursionlimit(self.base_level + 2 * limit + 100)
        self.user_limit = limit

    def get_recursion_limit(self):
        return self.user_limit

    def event(self, frame, event, arg, rel):
        if self.events >= self.record_from + self.max_events or (self.skeleton is not None and self.events >= self.max_events):
            self.limit("events")
        self.limits()
        self.events += 1
        code = frame.f_code
        place = self.stack.get(frame)
        if place is None:  # a frame whose call event was not seen
            place = self.stack[frame] = (0, 1)
        line = frame.f_lineno
        if not line:  # a <module> call event stands on line 0 from 3.11 on
            line = code.co_firstlineno
        self.changed = None
        statements = self.statements.get(self.events - 1) if self.statements else None
        if statements:
            self.run_statements(frame, place[0], statements)
        if self.events <= self.record_from:
            # Before the window: only what the next events need of this one (and the skeleton).
            if self.skeleton is not None:
                self.skeleton.add(event, line, place[0], rel, self.output + self.stdout.buffer.tell())
            if event != "call":
                self.kept(frame, event, arg)
            return
        record = self.state(frame, event, line, place[0], rel)
        returned, self.returned = self.returned, None
        if returned is not None and returned[0] == place[0] + 1 and event != "call":
            value = self.returned_value(returned)
            if value is not None:
                record["returned"] = {"func": self.func_of(returned[1]), "value": value}
        if self.events - 1 == self.record_from and self.record_from:
            # A window's first state: its callers' states, which the window does not hold.
            record["callers"] = self.callers_of(frame, place[0])
        if event == "return":
            if not _unwound(code, frame.f_lasti, self.exc_lasti.pop(frame, None)):
                record["value"] = self.repr(arg)
            self.returned = (place[0], code, record.get("value"), _WRITTEN) if place[0] else None
            # Its caller as it stands now, on the calling line, the call's effects on its objects
            # seen and its assignment not yet made: where a debugger shows a return (debugpy).
            up = self.caller(frame, place[0], 1) if place[0] else None
            if up is not None:
                record["caller"] = self.state(up, "line", up.f_lineno, place[0] - 1, self.files.get(up.f_code.co_filename))
            # A generator leaves the stack at each yield; its next call event places it anew.
            del self.stack[frame]
        elif event == "exception":
            record["value"] = self.exception_repr(arg)
            self.exc_lasti[frame] = frame.f_lasti
        elif event == "line":
            self.exc_lasti.pop(frame, None)
        text = self.take_stdout()
        if text:
            record["stdout"] = text
        err = self.take_stderr()
        if err:
            record["stderr"] = err
        self.write(record)
        if self.probes is not None and event == "line" and (rel or None, line) in self.probes[0]:
            self.answer_probes(frame)
        inspect = self.inspect
        if inspect is not None and (self.events - 1 == inspect.get("at") or (self.seek is None and self.events - 1 == self.record_from + inspect.get("landing", _NEVER))):
            self.answer_inspect(frame, record)

    def callers_of(self, frame, depth):
        """The states of the traced frames below `frame` (at `depth`), innermost first."""
        callers = []
        depth, f = depth - 1, frame.f_back
        while depth >= 0 and f is not None:
            below = self.stack.get(f)
            if below is not None and below[0] == depth:
                callers.append(self.state(f, "line", f.f_lineno, depth, self.files.get(f.f_code.co_filename)))
                depth -= 1
            f = f.f_back
        return callers

    def returned_value(self, returned):
        """The repr of the value of a return seen just before (self.returned: depth, code, value,
        and where the frame stood and its last exception stood, or _WRITTEN where the value is its
        repr already), None where an exception unwound the frame. No frame is kept (its locals would
        outlive the program's use of them, their finalizers run late), and a value only until the
        caller's next event (the caller has it then)."""
        _, code, value, places = returned
        if places is _WRITTEN:
            return value
        return None if _unwound(code, *places) else self.repr(value)

    def state(self, frame, event, line, depth, rel):
        """A frame's record as a debugger shows it: where it stands, its locals and their objects."""
        record = {"event": event, "line": line, "depth": depth, "func": self.func_of(frame.f_code)}
        if rel:
            record["file"] = rel
        shown = _shown_locals(frame, self.locals_of(frame))
        record["locals"] = {name: self.repr(value) for name, value in shown}
        if self.max_objects > 0:
            ids = {}
            objects = self.objects_of(shown, ids=ids)
            if objects:
                record["objects"] = objects
                record["ids"] = ids
        return record

    # ---- objects, as a debugger opens them ----

    def objects_of(self, roots, budget=None, ids=None):
        """What the Variables view opens: for each object reached from `roots` ((path, value) pairs)
        whose repr is no literal (an instance, a namedtuple, a subclass of a builtin container), its
        attributes or items, as {PATH: [[NAME, REPR, CHILD_PATH], ...]}. Paths are the expressions
        that name them (`cart.items[0].price`); builtin lists, tuples and dicts are looked into (the
        adapter reads their reprs) but not listed. At most `budget` children in all (max_objects),
        _OBJECT_DEPTH steps from a root: a state's objects cost a bounded time to record. `ids`, where
        given, gets each listed object's identity (its id() in hex) by path: the same object seen
        from another frame (`cart` in the caller, `self` in a method) for a data breakpoint."""
        out = {}
        left = [self.max_objects if budget is None else budget]

        def walk(path, value, depth, open_ids):
            if depth > _OBJECT_DEPTH or left[0] <= 0 or id(value) in open_ids:
                return
            t = type(value)
            if t in _ATOMS or isinstance(value, _NOT_OPENED):
                return
            open_ids = open_ids | {id(value)}
            if t in (list, tuple):
                for i, item in enumerate(value[:_OBJECT_ITEMS]):
                    walk("%s[%d]" % (path, i), item, depth + 1, open_ids)
                return
            if t is dict:
                for k, item in itertools.islice(value.items(), _OBJECT_ITEMS):
                    if type(k) in _ATOMS:
                        walk("%s[%s]" % (path, self.repr(k)), item, depth + 1, open_ids)
                return
            if t in (set, frozenset):
                return
            children = _children(value)
            if not children:
                return
            children = children[: left[0]]
            left[0] -= len(children)
            out[path] = [[name, self.repr(child), child_path(path, name)] for name, child in children]
            if ids is not None:
                ids[path] = "%x" % id(value)
            for name, child in children:
                walk(child_path(path, name), child, depth + 1, open_ids)

        def child_path(path, name):
            return path + name if name.startswith("[") else "%s.%s" % (path, name)

        for path, value in roots:
            walk(path, value, 0, frozenset())
        return out

    def caller(self, frame, depth, up):
        """The traced frame `up` levels below `frame` (at `depth`) on the stack, as the debugger
        lists callers (the traced frames alone), or None."""
        if up == 0:
            return frame
        want = depth - up
        f = frame.f_back
        while f is not None:
            p = self.stack.get(f)
            if p is not None and p[0] == want:
                return f
            f = f.f_back
        return None


# Values whose repr says all there is: never opened.
_ATOMS = frozenset((int, float, complex, bool, str, bytes, bytearray, type(None), range, slice, type(Ellipsis), type(NotImplemented)))
_NOT_OPENED = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
               types.BuiltinMethodType, types.CodeType, types.FrameType, types.TracebackType,
               types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType, types.MappingProxyType,
               types.CellType, types.MethodWrapperType)
_OBJECT_DEPTH = 3
_OBJECT_ITEMS = 100


def _shown_locals(frame, locals_=None):
    """The (name, value) pairs a record's locals hold: names starting with "." are skipped, and in
    namespace frames (<module>, class bodies) modules and dunder names other than functions."""
    namespace = not (frame.f_code.co_flags & _CO_OPTIMIZED)
    out = []
    for name, value in _locals_items(frame, locals_):
        if not isinstance(name, str) or name.startswith("."):
            continue
        if namespace and (
            (name[:2] == "__" and name[-2:] == "__" and not isinstance(value, types.FunctionType))
            or isinstance(value, types.ModuleType)
        ):
            continue
        out.append((name, value))
    return out


def _children(value):
    """An object's children as (name, value): a mapping's items ("[key repr]"), a sequence's ("[i]"),
    a namedtuple's fields, else its instance attributes (__dict__ and __slots__, dunders aside).
    Read without running the program's code: no properties, no __getattr__."""
    out = []
    try:
        if isinstance(value, dict):
            for i, (k, v) in enumerate(dict.items(value)):
                if i >= _OBJECT_ITEMS:
                    break
                if type(k) in _ATOMS:
                    out.append(("[%s]" % _ADDRESS.sub(" at 0x...", repr(k)), v))
            return out
        if isinstance(value, tuple) and hasattr(type(value), "_fields"):
            return [(name, tuple.__getitem__(value, i)) for i, name in enumerate(type(value)._fields) if isinstance(name, str)]
        if isinstance(value, (list, tuple)):
            seq = list.__getitem__(value, slice(0, _OBJECT_ITEMS)) if isinstance(value, list) else tuple.__getitem__(value, slice(0, _OBJECT_ITEMS))
            return [("[%d]" % i, v) for i, v in enumerate(seq)]
        if type(value).__name__ == "deque" and type(value).__module__ == "collections":
            return [("[%d]" % i, v) for i, v in enumerate(itertools.islice(value, _OBJECT_ITEMS))]
        try:
            attrs = object.__getattribute__(value, "__dict__")
        except Exception:
            attrs = None
        if isinstance(attrs, dict):
            out.extend((k, v) for k, v in dict.items(attrs) if isinstance(k, str) and k.isidentifier() and not k.startswith("__"))
        for cls in type(value).__mro__:
            slots = cls.__dict__.get("__slots__", ())
            for name in (slots,) if isinstance(slots, str) else slots:
                if isinstance(name, str) and name.isidentifier() and not name.startswith("__"):
                    descriptor = cls.__dict__.get(name)
                    if descriptor is not None and type(descriptor).__name__ == "member_descriptor":
                        try:
                            out.append((name, descriptor.__get__(value, cls)))
                        except AttributeError:
                            pass  # a slot not set yet
    except Exception:
        return []
    return out[:_OBJECT_ITEMS]


# ---- values too large to write whole ----

_TEXT_TYPES = (str, bytes, bytearray)
_CONTAINERS = (list, tuple, set, frozenset, dict)
# Values holding more than this many characters and elements are cut while their repr is written,
# marked with _CUT_MARK (their full length is never computed); smaller ones are written whole, then cut.
_CUT_FROM = 1 << 16
_CUT_MARK = "…(cut)"


_NESTED = frozenset(_TEXT_TYPES + _CONTAINERS)


def _larger_than(value, budget):
    """Whether the builtin strings and containers in value hold more than `budget` characters and
    elements together: then their repr is longer than that. Stops as soon as the budget is spent,
    so a huge value (a 256 MiB bytearray, a list shared a million times) costs no more than a small
    one; the elements of a container are looked at in C (their types, their lengths) where they
    are all atoms or all strings, so a list of numbers costs no Python step per element."""
    stack = [value]
    while stack:
        v = stack.pop()
        t = type(v)
        if t in _TEXT_TYPES:
            budget -= len(v)
        elif t in _CONTAINERS:
            budget -= len(v) + 1
            for part in (v, v.values()) if t is dict else (v,):
                if budget < 0:
                    return True
                kinds = set(map(type, part))
                if kinds.isdisjoint(_NESTED):
                    continue  # atoms: counted with the length
                if kinds == {str}:
                    budget -= sum(map(len, part))
                else:
                    stack.extend(part)
        else:
            budget -= 1
        if budget < 0:
            return True
    return False


def _cut_repr(value, limit):
    """The first `limit` characters of repr(value) and the cut marker, built piece by piece."""
    out, n = [], 0
    for piece in _repr_pieces(value, set(), limit):
        out.append(piece)
        n += len(piece)
        if n > limit:
            return "".join(out)[:limit] + _CUT_MARK
    return "".join(out)


def _repr_pieces(value, open_ids, limit):
    """repr(value) in pieces, as Python writes it for builtin strings and containers."""
    t = type(value)
    if t in _TEXT_TYPES:
        # A slice longer than the limit: its repr reaches past it, the rest is never made.
        yield repr(value[: limit + 1])
        return
    if t not in _CONTAINERS:
        yield repr(value)
        return
    if id(value) in open_ids:  # a container inside itself
        yield "{...}" if t is dict else "[...]"
        return
    if not value:
        yield repr(value)
        return
    open_ids.add(id(value))
    head, tail = {list: ("[", "]"), tuple: ("(", ",)" if len(value) == 1 else ")"), set: ("{", "}"),
                  frozenset: ("frozenset({", "})"), dict: ("{", "}")}[t]
    yield head
    for i, item in enumerate(value.items() if t is dict else value):
        if i:
            yield ", "
        if t is dict:
            for piece in _repr_pieces(item[0], open_ids, limit):
                yield piece
            yield ": "
            item = item[1]
        for piece in _repr_pieces(item, open_ids, limit):
            yield piece
    yield tail
    open_ids.discard(id(value))


# ---- what the program does to the tracer: forks, sys.settrace ----

def _guard_forks(out):
    """A forked child stops writing into its parent's trace: it inherited the stream and the trace
    function, and its events would read as the parent's."""
    if not hasattr(os, "register_at_fork"):
        return

    def child():
        sys.settrace(None)
        out.fd = None

    os.register_at_fork(after_in_child=child)


def _program_settrace(run):
    """sys.settrace and sys.gettrace as the program sees them while traced: its trace function is
    kept, and given back, but never installed (pydevd does the same): turning the tracer off or
    replacing it would blind the debugger for the rest of the run."""
    program = [None]

    def settrace(function):
        if sys._getframe(1).f_code.co_filename == _TRACER_CODE_FILE:
            return _real_settrace(function)
        program[0] = function

    def gettrace():
        return program[0]

    return settrace, gettrace


def _program_signal():
    """signal.signal and signal.getsignal as the program sees them while traced: a handler of the
    runner's tick signal is kept, and given back, but never installed, so that the ticks (of a
    fast seek's runner) never reach the program, as no such signal reaches it under python3."""
    program = [signal.SIG_DFL]

    def signal_(signalnum, handler):
        if signalnum != _TICK:
            return _real_signal(signalnum, handler)
        if handler not in (signal.SIG_DFL, signal.SIG_IGN) and not callable(handler):
            raise TypeError("signal handler must be signal.SIG_IGN, signal.SIG_DFL, or a callable object")
        old, program[0] = program[0], handler
        return old

    def getsignal(signalnum):
        return program[0] if signalnum == _TICK else _real_getsignal(signalnum)

    return signal_, getsignal


def _program_use_tool_id(run):
    """sys.monitoring.use_tool_id as the program sees it while traced: the id a fast seek holds is
    given up first (the seek goes on counting), so that the program gets it as under python3."""

    def use_tool_id(tool_id, name):
        if tool_id == run.monitor:
            run.trace_again(sys._getframe(1))
        return _real_use_tool_id(tool_id, name)

    return use_tool_id


def _stack_level(frame):
    level = 0
    while frame is not None:
        level += 1
        frame = frame.f_back
    return level


_COMPREHENSIONS = ("<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>")


def _qualnames(code, qual=None, names=None):
    """Before 3.11: the qualified names of the code objects compiled from a program, as the compiler
    makes them (functions and lambdas hold "<locals>"; class bodies and comprehensions do not:
    f.<locals>.<listcomp>.<lambda>)."""
    names = {} if names is None else names
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if qual is None:
                child = const.co_name
            elif code.co_flags & _CO_OPTIMIZED and code.co_name not in _COMPREHENSIONS:
                child = "%s.<locals>.%s" % (qual, const.co_name)
            else:
                child = "%s.%s" % (qual, const.co_name)
            names[const] = child
            _qualnames(const, child, names)
    return names


def _qualname(code):
    # Before 3.11, for code not compiled by the tracer (imported user modules): the function object
    # that owns the code has the name.
    import gc

    for ref in gc.get_referrers(code):
        if isinstance(ref, types.FunctionType) and ref.__code__ is code:
            return ref.__qualname__
    return code.co_name


class Watchdog:
    """Ends the process when the program outlives its time in C code or swallows a limit."""

    def __init__(self):
        self.run = None
        self.parent = os.getppid()
        thread = threading.Thread(target=self.loop, name="tracer-watchdog", daemon=True)
        thread.start()

    def loop(self):
        while True:
            time.sleep(0.05)
            if os.getppid() != self.parent:  # the driver is gone: nobody reads the trace
                _end_children()
                os._exit(1)
            run = self.run
            if run is None or _monotonic() <= run.kill_at:
                continue
            if run.finish("limit", reason="time", last=True):
                _end_children()
                os._exit(0)
            # else the main thread has written the exit record: the program is over


_HOLES = []  # holes.py once loaded (a module sys.modules may not keep: the sealed run drops it)


def _holes_module():
    """holes.py, under a name no program imports (the tracer's folder is not on sys.path)."""
    import importlib.util

    if not _HOLES:
        spec = importlib.util.spec_from_file_location("_ndbg_holes", _HOLES_FILE)
        mod = importlib.util.module_from_spec(spec)
        sys.modules["_ndbg_holes"] = mod
        spec.loader.exec_module(mod)
        _HOLES.append(mod)
    return _HOLES[0]


def _run_program(out, watchdog, request_id, program, source, call, opts, cwd=None, hybrid=None):
    """Runs one program under the tracer and writes its records; restores the interpreter's state.

    `hybrid`: (SPEC, the stream the debugger answers holes on), for hybrid mode (holes.py)."""
    run = Run(out, request_id, program, opts)
    # Traces depend on the version (3.12 runs list, dict and set comprehensions inline, in no frame
    # of their own); written before the program runs, so nothing it does can change it.
    run.write({"event": "start", "python": "%d.%d" % sys.version_info[:2]})
    holes = None
    filename, main_dir = run.filename, run.main_dir
    saved = {
        "stdout": sys.stdout, "stderr": sys.stderr, "stdin": sys.stdin, "argv": sys.argv,
        "path": list(sys.path), "modules": set(sys.modules), "main": sys.modules.get("__main__"),
        "limit": _real_getrecursionlimit(), "cwd": os.getcwd(),
    }
    run.base = sys._getframe()
    run.base_level = _stack_level(run.base)
    name = "__main__" if call is None else os.path.splitext(os.path.basename(filename))[0] or "program"
    module = types.ModuleType(name)
    module.__file__ = filename
    module.__builtins__ = __builtins__
    try:
        if cwd:
            os.chdir(cwd)
        if source is None:
            with open(filename, "rb") as f:
                source = f.read()
        sys.argv = [program or filename]
        if main_dir is not None:
            sys.path.insert(0, main_dir)
        if name == "__main__" or name not in sys.modules:
            sys.modules[name] = module
        sys.stdout, sys.stderr = run.stdout, run.stderr
        sys.stdin = io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8")
        run.set_recursion_limit(saved["limit"])
        sys.setrecursionlimit, sys.getrecursionlimit = run.set_recursion_limit, run.get_recursion_limit
        sys.settrace, sys.gettrace = _program_settrace(run)
        if run.ticks:
            signal.signal, signal.getsignal = _program_signal()
            if _monitoring is not None:
                _monitoring.use_tool_id = _program_use_tool_id(run)
        watchdog.run = run
        if hybrid is None:
            code = compile(source, filename, "exec", dont_inherit=True)
        else:
            holes = _holes_module().Holes(run, hybrid[1], hybrid[0].get("predict") or ())
            code = holes.compile(source, filename)
            holes.install(module)
        if not _HAS_QUALNAME:
            run.names.update(_qualnames(code))
        if call is None:
            sys.settrace(run.global_trace)
            exec(code, module.__dict__)
        else:
            exec(code, module.__dict__)
            entry = compile(call, "<call>", "eval", dont_inherit=True)
            sys.settrace(run.global_trace)
            eval(entry, module.__dict__)
        sys.settrace(None)
        run.finish("normal")
    except TraceLimit:
        sys.settrace(None)
        run.finish("limit")  # finish reports the limit that stopped tracing
    except SystemExit as e:
        sys.settrace(None)
        if e.code is None or e.code == 0:
            run.finish("normal")
        else:
            run.finish("error", run.repr(e))
    except BaseException as e:
        sys.settrace(None)
        run.finish("error", run.repr(e))
    finally:
        sys.settrace(None)
        sys.setprofile(None)
        run.quiet()
        # What the program set up in sys.monitoring is its run's, as the rest of its state.
        for tool in range(6) if _monitoring is not None else ():
            if _mon.get_tool(tool) is not None:
                _release_tool(tool)
        watchdog.run = None
        if holes is not None:
            holes.close()
        sys.setrecursionlimit, sys.getrecursionlimit = _real_setrecursionlimit, _real_getrecursionlimit
        sys.settrace, sys.gettrace = _real_settrace, _real_gettrace
        signal.signal, signal.getsignal = _real_signal, _real_getsignal
        if _monitoring is not None:
            _monitoring.use_tool_id = _real_use_tool_id
        _end_children()
        sys.stdout, sys.stderr, sys.stdin, sys.argv = saved["stdout"], saved["stderr"], saved["stdin"], saved["argv"]
        sys.path[:] = saved["path"]
        for key in set(sys.modules) - saved["modules"]:
            mod = sys.modules.get(key)
            file = getattr(mod, "__file__", None)
            if mod is module or (isinstance(file, str) and run.file_of(file) is not None):
                del sys.modules[key]
        if sys.modules.get(name) is module:
            del sys.modules[name]
        if saved["main"] is not None:
            sys.modules["__main__"] = saved["main"]
        try:
            _real_setrecursionlimit(saved["limit"])
        except Exception:
            pass
        try:
            os.chdir(saved["cwd"])
        except OSError:
            pass
    return run


def _options(source):
    opts = dict(DEFAULTS)
    for key in DEFAULTS:
        if source.get(key) is not None:
            opts[key] = source[key]
    return opts


def _parse_args(argv):
    flags = {"--call": "call", "--out": "out", "--max-events": "maxEvents", "--timeout": "timeout",
             "--max-output": "maxOutput", "--max-repr": "maxRepr", "--objects": "objects", "--hybrid": "hybrid",
             "--root": "root"}
    args = {"batch": False, "program": None, "out": "-"}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--batch":
            args["batch"] = True
        elif a in flags:
            if i + 1 >= len(argv):
                raise SystemExit("tracer: %s needs a value" % a)
            args[flags[a]] = argv[i + 1]
            i += 1
        elif a.startswith("--"):
            raise SystemExit("tracer: unknown option %s" % a)
        elif args["program"] is None:
            args["program"] = a
        else:
            raise SystemExit("tracer: unexpected argument %s" % a)
        i += 1
    if not args["batch"] and args["program"] is None:
        raise SystemExit(__doc__)
    if "hybrid" in args:
        try:
            args["hybrid"] = json.loads(args["hybrid"])
            if not isinstance(args["hybrid"], dict):
                raise ValueError("not an object")
        except ValueError as e:
            raise SystemExit("tracer: bad --hybrid %r: %s" % (args["hybrid"], e))
    for key, cast in (("maxEvents", int), ("timeout", float), ("maxOutput", int), ("maxRepr", int), ("objects", int)):
        if key in args:
            try:
                args[key] = cast(args[key])
            except ValueError:
                raise SystemExit("tracer: bad number %r" % args[key])
    return args


def _open_out(path):
    """The record stream's fd. For "-", fd 1 is kept for records and the program's fd 1 goes to stderr."""
    if path == "-":
        fd = os.dup(1)  # not inherited by processes the program starts
        os.dup2(2, 1)
        return fd
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)


def main(argv):
    args = _parse_args(argv)
    # The tracer's own folder must not shadow the program's imports.
    here = os.path.dirname(_TRACER_FILE)
    sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != here]
    requests = None
    if args["batch"] or "hybrid" in args:
        # Batch requests, or the answers to hybrid mode's holes: the program's own stdin is empty.
        requests = io.TextIOWrapper(os.fdopen(os.dup(0), "rb"), encoding="utf-8")
    out = Output(_open_out(args["out"]))
    # Standard input is empty for the program, also at the fd level.
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    _adopt_orphans()
    _guard_forks(out)
    watchdog = Watchdog()
    if args["batch"]:
        for req in _own_module("batch.py").requests(requests, out):
            _run_program(out, watchdog, req.get("id"), req.get("program"), req.get("source"), req.get("call"),
                         _options(req), req.get("cwd"))
    else:
        hybrid = (args["hybrid"], requests) if "hybrid" in args else None
        opts = _options(args)
        opts["root"] = args.get("root")
        _run_program(out, watchdog, None, args["program"], None, args.get("call"), opts, hybrid=hybrid)
    # Threads the program left running must not keep the process alive.
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])

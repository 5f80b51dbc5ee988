"""The worker of training/runner.py: runs one candidate program per request under sys.settrace.

Reads JSON requests from stdin, one a line: {"code", "input", "entry", "max_events", "max_repr",
"raises", "script", "max_stdout"}; executes `code` in a fresh module, calls `entry(<input>)` and writes
one JSON line back:
{"ok": true, "output": repr of the result, "events": events in the program's own code, "stdout":
characters printed} or {"ok": false, "why": reason[, "exc": exception name]}. With "raises", a call
that ends in an Exception passes the same checks and answers {"ok": true, "raised": repr of the
exception, "exc": its name, "events", "stdout"} (what the tracer shows at the exit). With "script", the
code is a script, traced whole from its module level (as a user's script is debugged), its "output" what
it printed, an uncaught exception an error, and a default repr's address fit. Reasons: compile,
events (past max_events), memory, recursion, error, long / address / unordered (a value along the
run whose repr is too long, shows a memory address, or depends on string hashing), stdout (more
than max_stdout characters printed, 300 unless given), worker. Started by Runner with `-I` and PYTHONHASHSEED=0; standard
library only.
"""
import contextlib
import io
import json
import resource
import sys
import types

resource.setrlimit(resource.RLIMIT_AS, (512 << 20, 512 << 20))
FILE = "<program>"  # the filename the candidate is compiled under: the tracer counts only its frames


class Budget(BaseException):
    """Raised inside the traced call when it passes max_events (BaseException: the program cannot catch it)."""


def stable(v, depth=0):
    """Whether v prints the same in every run: hash-ordered containers of str/bytes do not."""
    if isinstance(v, (set, frozenset)):
        return all(isinstance(e, (int, float, bool, type(None))) or (isinstance(e, tuple) and stable(e, depth + 1)) for e in v)
    if depth > 3:
        return True
    if isinstance(v, (list, tuple)):
        return all(stable(e, depth + 1) for e in v)
    if isinstance(v, dict):
        return all(stable(e, depth + 1) for e in v.values()) and stable(list(v), depth + 1)
    return True


def own_function(v):
    """Whether v is a function the program itself defines (a helper defined inside a function, a lambda): its repr
    names it and an address, which the tracer writes as " at 0x...", the same in every run."""
    return isinstance(v, types.FunctionType) and v.__code__.co_filename == FILE


def check(v, limit, addresses=False):
    """Why a value is unfit to show (None when it is fit). addresses: a default repr's memory address is fit (the
    tracer writes it " at 0x...", the same in every run), as it is in a script, where objects are what users debug."""
    try:
        s = repr(v)
    except Exception:
        return None  # e.g. self inside __init__: the tracer shows a marker
    if len(s) > limit:
        return "long"
    if " at 0x" in s and not addresses:
        return "address"
    if not stable(v):
        return "unordered"
    return None


def run(req):
    code, inp, max_events, max_repr = req["code"], req["input"], req["max_events"], req["max_repr"]
    # A real module, registered: code that looks its own module up (a dataclass, typing.get_type_hints,
    # pickle) finds it, as it does when the tracer runs the file.
    mod = types.ModuleType("__program__")
    sys.modules["__program__"] = mod
    ns = mod.__dict__
    script = req.get("script", False)
    try:
        program = compile(code, FILE, "exec")
        if not script:
            exec(program, ns)
            call = compile(req.get("entry", "f") + "(" + inp + ")", "<call>", "eval")
    except BaseException:
        return {"ok": False, "why": "compile"}
    n = [0]
    bad = [None]

    def tr(frame, event, arg):
        if frame.f_code.co_filename != FILE:
            return None
        n[0] += 1
        if n[0] > max_events:
            raise Budget()
        if bad[0] is None:
            for k, v in frame.f_locals.items():
                if k.startswith(".") or own_function(v) or (script and k.startswith("__") and k.endswith("__")):
                    continue  # a comprehension's hidden iterator; a helper the function defines (its name shows);
                    # a module's dunders (__builtins__), which the debugger does not show among a script's globals
                b = check(v, max_repr, script)
                if b:
                    bad[0] = b
                    break
            if bad[0] is None and event in ("return", "exception"):
                b = check(arg if event == "return" else arg[1], max_repr, script)
                if b:
                    bad[0] = b
        return tr

    out = io.StringIO()
    raised = None
    try:
        with contextlib.redirect_stdout(out):
            sys.settrace(tr)
            try:
                res = exec(program, ns) if script else eval(call, ns)
            finally:
                sys.settrace(None)
    except Budget:
        return {"ok": False, "why": "events"}
    except MemoryError:
        return {"ok": False, "why": "memory"}
    except RecursionError:
        return {"ok": False, "why": "recursion"}
    except Exception as e:
        if script or not req.get("raises"):
            return {"ok": False, "why": "error", "exc": type(e).__name__}
        raised = e
    except BaseException as e:
        return {"ok": False, "why": "error", "exc": type(e).__name__}
    if n[0] > max_events:  # Budget raised in a generator's frame can be swallowed (tracing then stops): still too long
        return {"ok": False, "why": "events"}
    if bad[0]:
        return {"ok": False, "why": bad[0]}
    b = check(res if raised is None else raised, max_repr)
    if b:
        return {"ok": False, "why": b}
    if len(out.getvalue()) > req.get("max_stdout", 300):
        return {"ok": False, "why": "stdout"}
    if script:
        return {"ok": True, "output": out.getvalue(), "events": n[0], "stdout": len(out.getvalue())}
    if raised is not None:
        return {"ok": True, "raised": repr(raised), "exc": type(raised).__name__, "events": n[0], "stdout": len(out.getvalue())}
    return {"ok": True, "output": repr(res), "events": n[0], "stdout": len(out.getvalue())}


for line in sys.stdin:
    try:
        r = run(json.loads(line))
    except BaseException as e:
        r = {"ok": False, "why": "worker", "exc": type(e).__name__}
    sys.stdout.write(json.dumps(r) + "\n")
    sys.stdout.flush()

# CRUXEval's assert checker: one JSON item per stdin line (code, call, expected, func), one JSON
# result per stdout line. Run by adapter/tools/asserts.ts as `python -B -s checker.py TIMEOUT`.
#
# Each assert is built as a syntax tree from the two texts, each of which must be
# ONE expression (the call must call f): a prediction cannot smuggle in statements. Each runs in a
# forked child of its own (own process group, limits on memory and CPU, no stdin/stdout), killed
# at its deadline: a hanging, crashing or exiting item fails only itself. One JSON line per item.
import ast, json, os, select, signal, subprocess, sys, time

TIMEOUT = float(sys.argv[1])

def build(item):
    try:
        call = ast.parse(item["call"].strip(), mode="eval").body
    except SyntaxError as e:
        return None, "the call does not parse: %s" % e.msg
    func = item.get("func") or "f"
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == func):
        return None, "the call is not one call of %s" % func
    try:
        expected = ast.parse(item["expected"].strip(), mode="eval").body
    except SyntaxError as e:
        return None, "the expected value does not parse: %s" % e.msg
    test = ast.Compare(left=call, ops=[ast.Eq()], comparators=[expected])
    mod = ast.Module(body=[ast.Assert(test=test, msg=None)], type_ignores=[])
    ast.fix_missing_locations(mod)
    try:
        compile(mod, "<assert>", "exec")
    except Exception as e:
        return None, "the assert does not compile: %s" % e
    return mod, None

def verdict(code, mod):
    try:
        g = {"__name__": "__main__", "__builtins__": __builtins__}
        exec(compile(code, "<program>", "exec"), g)
        exec(compile(mod, "<assert>", "exec"), g)
        return {"pass": True}
    except AssertionError:
        return {"pass": False, "error": "AssertionError"}
    except BaseException as e:
        return {"pass": False, "error": ("%s: %s" % (type(e).__name__, e))[:300]}

def limit_child():
    try:
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
        cpu = int(TIMEOUT) + 2
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    except Exception:
        pass

def run_forked(code, mod):
    r, w = os.pipe()
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            os.setsid()
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            limit_child()
            res = verdict(code, mod)
            os.write(w, json.dumps(res).encode())
        finally:
            os._exit(0)
    os.close(w)
    data = b""
    deadline = time.monotonic() + TIMEOUT
    timed_out = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        ready, _, _ = select.select([r], [], [], left)
        if ready:
            chunk = os.read(r, 65536)
            if not chunk:
                break
            data += chunk
    os.close(r)
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    _, status = os.waitpid(pid, 0)
    if timed_out:
        return {"pass": False, "error": "timeout"}
    try:
        return json.loads(data.decode())
    except Exception:
        how = ("signal %d" % os.WTERMSIG(status)) if os.WIFSIGNALED(status) else ("exit code %d" % os.WEXITSTATUS(status))
        return {"pass": False, "error": "the check ended without a verdict (%s)" % how}

CHILD = "import json, sys\nitem = json.load(sys.stdin)\ng = {'__name__': '__main__'}\nexec(compile(item['code'], '<program>', 'exec'), g)\n" \
        "try:\n    exec(item['assert'], g)\nexcept AssertionError:\n    sys.exit(3)\n"

def run_subprocess(item, mod):
    # No fork (Windows): one interpreter per item, given the assert as the checked tree writes it.
    text = ast.unparse(mod) if hasattr(ast, "unparse") else "assert (%s) == (%s)" % (item["call"], item["expected"])
    try:
        p = subprocess.run([sys.executable, "-c", CHILD], input=json.dumps({"code": item["code"], "assert": text}),
                           capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return {"pass": False, "error": "timeout"}
    if p.returncode == 0:
        return {"pass": True}
    if p.returncode == 3:
        return {"pass": False, "error": "AssertionError"}
    return {"pass": False, "error": (p.stderr.strip().splitlines() or ["exit code %d" % p.returncode])[-1][:300]}

for line in sys.stdin:
    if not line.strip():
        continue
    item = json.loads(line)
    mod, why = build(item)
    if mod is None:
        res = {"pass": False, "error": why}
    elif hasattr(os, "fork"):
        res = run_forked(item["code"], mod)
    else:
        res = run_subprocess(item, mod)
    sys.stdout.write(json.dumps(res) + "\n")
    sys.stdout.flush()

"""Processes that something this debugger ran left behind, found and ended with everything below
them: the tracer (tracer.py) ends those a program started and left running when its run ends,
and the guard (guard.py) those of debugpy's adapter. A process that leaves its session, or whose
parent exits first, escapes a process-group kill; on Linux it comes back here as an orphan
(adopt_orphans), so what is below this process is all there is to end. Python 3.8+, stdlib only."""

import os

try:
    import _signal as signal  # (loaded at start-up: `signal` itself is not, and a program's modules stay its own)
except ImportError:
    signal = None

# Bound now, before any program runs: a program that replaces os.kill, os.listdir or open (in its
# module or in builtins) cannot keep what it started alive past its run.
_getpid, _kill, _listdir, _waitpid, _open = os.getpid, os.kill, os.listdir, getattr(os, "waitpid", None), open
_SIGSTOP, _SIGKILL = getattr(signal, "SIGSTOP", 19), getattr(signal, "SIGKILL", 9)
_WNOHANG = getattr(os, "WNOHANG", 0)


def adopt_orphans():
    """Linux: processes the program starts and abandons (a double fork, a daemon) become this
    process's children instead of init's, so that end_children finds them."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except Exception:
        pass


def _descendants(pid):
    parents = {}
    try:
        names = _listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with _open("/proc/%s/stat" % name, "rb") as f:
                stat = f.read()
            parents.setdefault(int(stat[stat.rindex(b")") + 2:].split()[1]), []).append(int(name))
        except (OSError, ValueError, IndexError):
            pass
    out = []
    todo = [pid]
    while todo:
        for child in parents.get(todo.pop(), ()):
            out.append(child)
            todo.append(child)
    return out


def _kill_trees(pids):
    """Kills each process and everything below it: all are stopped first, so that none starts
    another between the walk and the kill. Reaps those that are this process's children."""
    found = []
    for pid in pids:
        for p in [pid] + _descendants(pid):
            if p not in found and p != _getpid():
                found.append(p)
    for sig in (_SIGSTOP, _SIGKILL):
        for pid in found:
            try:
                _kill(pid, sig)
            except OSError:
                pass
    for pid in found:
        try:
            _waitpid(pid, 0)
        except OSError:
            pass  # not our child: its own parent (also killed) or init reaps it


def _has_children():
    """Whether this process has a child, running or finished (finished ones are reaped). Orphans
    of its children are adopted (adopt_orphans): with no child it has no descendant at all, and
    the /proc walk (milliseconds) is spared to the many programs that start none."""
    if _waitpid is None:  # WebAssembly (the sealed run): no processes at all
        return False
    while True:
        try:
            pid, _ = _waitpid(-1, _WNOHANG)
        except ChildProcessError:
            return False
        except OSError:
            return True
        if pid == 0:
            return True


def end_children():
    """Kills what the program started and left running (also in sessions of their own, which the
    driver's process-group kill does not reach)."""
    # A child may fork between the walk and the kill (a daemon's double fork under way): that
    # orphan comes back to this process (the subreaper), and the next round ends it.
    for _ in range(20):
        if not _has_children():
            return
        _kill_trees(_descendants(_getpid()))

#!/usr/bin/env python3
"""guard.py CMD [ARG ...]: runs CMD as its child and ends everything below it when CMD exits or
when its driver is gone, even killed with no word. Compare mode runs debugpy's adapter under it
(adapter/real/debugpy.ts, outside Windows): debugpy's tree comes apart when its client is killed
(its launcher ends while the program's helpers run on, in sessions of their own), and what it
leaves must not outlive the session. Python 3.8+, stdlib only.

CMD gets this process's stdin, stdout and stderr. Fd 3 is a pipe that only the driver holds open:
its end means the driver is gone. On Linux the guard is a subreaper, so that what CMD's processes
start and abandon is adopted here and ended too, however the tree came apart. Exits as CMD did
(the same code, or the same signal)."""

import importlib.util
import os
import signal
import subprocess
import sys
import threading


def _processes():
    """processes.py beside this file, loaded by its path (this folder need not be on sys.path)."""
    path = os.path.join(os.path.dirname(os.path.realpath(__file__)), "processes.py")
    spec = importlib.util.spec_from_file_location("_ndbg_processes", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def guard(argv):
    """Runs argv below this process; returns its exit code (a signal's: negative)."""
    processes = _processes()
    processes.adopt_orphans()
    try:
        child = subprocess.Popen(argv)  # close_fds: fd 3 stays the driver's and this process's alone
    except OSError as e:
        sys.stderr.write("guard: cannot start %s: %s\n" % (argv[0], e))
        return 127

    def lifeline():
        try:
            while os.read(3, 4096):
                pass
        except OSError:
            pass  # no fd 3: no driver to outlive; CMD's exit alone ends the guard
        else:
            processes.end_children()
            os._exit(1)

    threading.Thread(target=lifeline, daemon=True).start()
    code = child.wait()
    processes.end_children()
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit("usage: guard.py CMD [ARG ...]")
    sys.exit(guard(sys.argv[1:]))

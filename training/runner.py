"""Runs candidate programs once each, in a worker process (training/runner_worker.py), under
sys.settrace with an event budget, a wall-clock timeout and a memory limit; the worker is started
again when a candidate times out or kills it. Used for generated programs (training/programs.py)
and real code (training/realcode.py) alike, so both keep lines by the same rules.
"""
from __future__ import annotations

import json
import os
import select
import subprocess
import time
from pathlib import Path

WORKER = Path(__file__).resolve().parent / "runner_worker.py"


def line_result(res: dict) -> dict:
    """A run's result (or a captured call's) as a program line writes it: {"output": repr} or, for a call that
    raised, {"raises": repr}."""
    return {"raises": res["raised"]} if "raised" in res else {"output": res["output"]}


class Runner:
    """A worker process, restarted when a candidate times out or kills it."""

    def __init__(self, python: str, timeout: float, max_events: int, max_repr: int):
        self.python, self.timeout, self.max_events, self.max_repr = python, timeout, max_events, max_repr
        self.p: subprocess.Popen | None = None
        self.buf = b""

    def start(self) -> None:
        env = dict(os.environ, PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1", OMP_NUM_THREADS="1")
        self.p = subprocess.Popen([self.python, "-I", str(WORKER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env, cwd="/" if os.name != "nt" else None)
        self.buf = b""

    def run(self, code: str, inp: str, entry: str = "f", raises: bool = False, script: bool = False,
            max_stdout: int = 300) -> dict:
        """Runs entry(<inp>) of code once; {"ok", "output", "events", ...} or {"ok": False, "why"}. With raises, a
        call that ends in an Exception is a result too: {"ok", "raised": its repr, "exc", "events", ...}. With
        script, code runs whole from its module level and "output" is what it printed."""
        if self.p is None or self.p.poll() is not None:
            self.start()
        req = json.dumps({"code": code, "input": inp, "entry": entry, "max_events": self.max_events, "max_repr": self.max_repr,
                          "raises": raises, "script": script, "max_stdout": max_stdout})
        try:
            self.p.stdin.write(req.encode() + b"\n")
            self.p.stdin.flush()
        except BrokenPipeError:
            self.kill()
            return {"ok": False, "why": "crash"}
        deadline = time.monotonic() + self.timeout
        fd = self.p.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                self.kill()
                return {"ok": False, "why": "timeout"}
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                self.kill()
                return {"ok": False, "why": "crash"}
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def kill(self) -> None:
        if self.p:
            self.p.kill()
            self.p.wait()
            self._release()

    def close(self) -> None:
        if self.p:
            self.p.stdin.close()
            try:
                self.p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
            self._release()

    def _release(self) -> None:
        for s in (self.p.stdin, self.p.stdout):
            try:
                s.close()
            except OSError:
                pass
        self.p = None

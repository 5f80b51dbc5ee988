"""The batch server's requests: `tracer.py --batch` traces many programs through one process
(data generation, evaluation: TraceBatch in adapter/real/hostRun.ts), one after the other, so that
the interpreter starts once. Python 3.8+, stdlib only.

It reads one JSON request a line on stdin:
  {"id": ANY, "program"?: PATH, "source"?: TEXT, "call"?: EXPR, "cwd"?: DIR,
   "maxEvents"?: N, "timeout"?: S, "maxOutput"?: N, "maxRepr"?: N}
("source" without "program" runs text that has no file) and writes each request's records, each
with its "id". A program that cannot be stopped in time (blocked in C code, or swallowing the limit)
gets its exit record written by a watchdog, marked "last": true, and the process then exits: the
driver starts another."""

import json

# Bound now: a program the batch runs that replaces json.loads cannot blind the requests after it.
_loads = json.loads


def requests(lines, out):
    """The requests read from `lines`, one at a time; a line that is no request is answered at once
    on `out` with an error exit record (its "id" where it has one), and skipped."""
    for line in lines:
        line = line.strip()
        if not line:
            continue
        try:
            req = _loads(line)
            if not isinstance(req, dict):
                raise ValueError("a request is a JSON object")
        except ValueError as e:
            out.write({"id": None, "event": "exit", "status": "error", "value": "bad request: %s" % e})
            continue
        if not req.get("program") and req.get("source") is None:
            out.write({"id": req.get("id"), "event": "exit", "status": "error", "value": "bad request: no program or source"})
            continue
        yield req

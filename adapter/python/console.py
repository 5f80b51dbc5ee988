"""What the debugger runs in the program's own frames while the tracer runs it: expressions
evaluated at a stop (`inspect`: hover, watch and MCP's evaluate in predict mode, answered by the
sealed run stopped at that event), breakpoint conditions and log messages at every hit of a line
(`probes`), and the lines the user ran at stops (`statements`: the Debug
Console, a value set), which are part of the run's input and run again at the same events of every
run. The methods of the tracer's Run (tracer.py) for these, kept apart from its recording: they
read its stack, its captured output, its reprs and objects, and let its limits (Run.TraceLimit)
through. Python 3.8+, stdlib only."""

import re
import traceback

# What an expression or a line asked of a caller the stack does not hold gets.
_NO_FRAME = "there is no such frame on the stack"
# Children listed at most for an evaluated value's objects (a record's own budget where larger).
_INSPECT_OBJECTS = 400
# An expression that names an object as the Variables view does: its objects are rooted at it as
# written, any other's at "(EXPRESSION)".
_SIMPLE_PATH = re.compile(r"^[^\W\d]\w*(?:\.[^\W\d]\w*|\[[^\[\]]*\])*$")


def _error_text(e):
    return "".join(traceback.format_exception_only(type(e), e)).strip()


class Console:
    """Run's methods for what is run in the program's frames (see the module's text)."""

    def answer_inspect(self, frame, record):
        """The expressions of `inspect`, evaluated in the frame it names at this record (`frame`,
        or a caller "up" levels below); the run stops here. A run held here (the sealed runner's
        `hold`) gives each answer to the debugger, which asks the next question at this record in
        its live frames (expressions, or a line of the Debug Console), or lets the run go: no run
        again for each."""
        question = self.inspect
        depth = record["depth"]
        while question is not None:
            if self.hold is not None and "code" in question:
                answer = self.held_statement(frame, record, question)
            else:
                target = self.caller(frame, depth, int(question.get("up") or 0))
                answer = {"results": [self.evaluate(target, e) if target else {"error": _NO_FRAME} for e in question.get("expressions") or ()]}
                if self.hold is None:
                    self.write({"event": "inspect", "results": answer["results"]})
                    break
            question = self.hold(answer)
            self.rearm()
        self.limit("inspect")

    def held_statement(self, frame, record, item):
        """A line of the Debug Console at a held stop ({"code", "up"?}, as a statement), run as
        run_statements runs it (its effects are then the run's, as a re-run with it among the
        statements would have them here), and this record's state again as the line left it, with
        its callers' states."""
        if self.changed is None or self.changed[0] is not frame:
            # (the mapping of a statement run here before, whose changes are not in the frame yet)
            self.changed = (frame, frame.f_locals)
        result = self.statement_result(frame, record["depth"], item)
        state = {k: v for k, v in record.items() if k not in ("locals", "objects", "ids", "callers")}
        state.update(self.state(frame, record["event"], record["line"], record["depth"], record.get("file")))
        state["callers"] = self.callers_of(frame, record["depth"])
        return {"results": [result], "state": state}

    def answer_probes(self, frame):
        """The expressions of the "probes" option, evaluated in the frame of the line event just
        written, each to its repr and truth (a breakpoint's condition, a log message's parts), or
        the error it raised: a {"event": "probe", "at": N, "results": [...]} record. What they
        write is theirs, not the program's output."""
        mark = self.stdout.buffer.tell()
        results = []
        for code in self.probes[1]:
            try:
                if isinstance(code, BaseException):
                    raise code
                results.append(self.probe_result(eval(code, frame.f_globals, self.locals_of(frame))))
            except self.TraceLimit:
                raise
            except BaseException as e:
                results.append(self.probe_error(e))
        self.taken_back(mark)
        self.take_stderr()
        self.write({"event": "probe", "at": self.events - 1, "results": results})

    def probe_result(self, value):
        """A probe's answer for a value (raises where its str or truth does): its repr, str, type and truth."""
        r = self.repr(value)
        # (str for a log message's parts; a container's is its repr, which is bounded)
        text = r if isinstance(value, (list, tuple, dict, set, frozenset)) else str(value)
        if len(text) > self.max_repr:
            text = text[: self.max_repr] + "…"
        return {"value": r, "str": text, "type": type(value).__name__, "truth": bool(value)}

    @staticmethod
    def probe_error(e):
        return {"error": _error_text(e)}

    def evaluate(self, frame, expression):
        """One expression in the program's frame, as a debugger's console evaluates it: its value's
        repr and objects (rooted at the expression), what it wrote, or the error it raised."""
        try:
            code = compile(expression, "<debug console>", "eval", dont_inherit=True)
            value = eval(code, frame.f_globals, self.locals_of(frame))
        except self.TraceLimit:
            raise
        except BaseException as e:
            result = {"error": _error_text(e)}
        else:
            result = self.value_result(expression, value)
        text = self.take_stdout()
        if text:
            result["stdout"] = text
        return result

    def value_result(self, expression, value):
        root = expression.strip() if _SIMPLE_PATH.match(expression.strip()) else "(%s)" % expression.strip()
        result = {"value": self.repr(value), "type": type(value).__name__, "path": root}
        objects = self.objects_of([(root, value)], budget=max(self.max_objects, _INSPECT_OBJECTS))
        if objects:
            result["objects"] = objects
        return result

    def locals_of(self, frame):
        """The frame's locals as a statement run at this event left them. A function's locals go
        back into the frame from the mapping f_locals gave, when the trace function returns; reading
        frame.f_locals again before that would read them anew from the frame, losing the change."""
        changed = self.changed
        if changed is not None and changed[0] is frame:
            return changed[1]
        return frame.f_locals

    def run_statements(self, frame, depth, statements):
        """Runs what the user ran at this stop, in order, before its state is recorded (the state
        shows their effects), and writes their results ({"event": "statements", "at": N, "results":
        [...]}). They are the run's input: each re-run runs them again at the same event, so that
        stepping back and forth over them stays exact. A function frame's locals take the change
        where the statement runs in the current frame; in a caller's, only objects change (Python
        writes a caller's locals back from 3.13 on)."""
        self.changed = (frame, frame.f_locals)
        results = [self.statement_result(frame, depth, item) for item in statements]
        self.write({"event": "statements", "at": self.events - 1, "results": results})

    def statement_result(self, frame, depth, item):
        """One line the user ran ({"code", "up"?}) in the frame it names at this record (`frame`,
        at `depth`, or a caller "up" levels below): its result."""
        target = self.caller(frame, depth, int(item.get("up") or 0))
        return self.execute(target, str(item.get("code") or "")) if target else {"error": _NO_FRAME}

    def execute(self, frame, text):
        """A line of the Debug Console: an expression's value (as evaluate gives it), or a statement
        run (value ""), or the error it raised; what it wrote is its own, not the program's output."""
        mark = self.stdout.buffer.tell()
        try:
            try:
                code = compile(text, "<debug console>", "eval", dont_inherit=True)
            except SyntaxError:
                code = compile(text, "<debug console>", "exec", dont_inherit=True)
                exec(code, frame.f_globals, self.locals_of(frame))
                result = {"value": ""}
            else:
                result = self.value_result(text, eval(code, frame.f_globals, self.locals_of(frame)))
        except self.TraceLimit:
            raise
        except BaseException as e:
            result = {"error": _error_text(e)}
        said = self.taken_back(mark)
        if said:
            result["stdout"] = said.decode("utf-8", "backslashreplace")
        return result

    def taken_back(self, mark):
        """What the debugger's own evaluation wrote to stdout since `mark` (a position in its
        buffer), taken out of it: it is not the program's output, nor counted as it."""
        buf = self.stdout.buffer
        said = buf.getvalue()[mark:]
        if said:
            buf.seek(mark)
            buf.truncate()
        return said

"""The program generator: a grammar of statements over typed variables composes small functions
`def f(...)` (with helpers, a recursive helper or a small class sometimes), their inputs, and the
name a share of them is called by. Valid and terminating by construction: loops run over finite
containers or strictly decreasing counters, and a container is never grown while it is iterated.
Every choice comes from the random.Random given, so a seed gives the same programs. Two mixes
(`style`): "classic", the generator the bundled model was trained on, unchanged draw for draw, and
"real", whose weights and extra productions (guards, early returns, defaults, constants above,
dicts of lists, lists of pairs, `best = None`, averages) follow the real-code corpus
(training/constructs.py measures both).
"""
from __future__ import annotations

import random
import re

# Types. CH is a one-character string, usable wherever a str is.
INT, STR, CH, BOOL, LI, LS, DSI, SI, TI = "int", "str", "ch", "bool", "li", "ls", "dsi", "si", "ti"
# Accumulators of the real style only, built by their own productions and returned, never read by
# other expressions: an int or None (`best = None`), a dict of lists, a list of pairs.
OPT, DL, LP = "opt", "dl", "lp"
# The mix of constructs: "classic" is the generator as the bundled model was trained on it (its
# output, seed for seed, never changes); "real" moves the mix toward the frequencies measured on
# code people write (training/constructs.py, training/README.md "Toward real code").
STYLES = ("classic", "real")
CONTAINERS = (STR, LI, LS, DSI, SI, TI)
ELEM = {STR: CH, CH: CH, LI: INT, LS: STR, DSI: STR, SI: INT, TI: INT}  # what iterating yields

NAMES = {
    INT: ["n", "k", "count", "total", "i", "j", "m", "x", "y", "acc", "num", "idx", "pos", "steps",
          "best", "score", "size", "diff", "val", "cnt", "length", "limit", "start", "end", "a", "b",
          "c", "step", "low", "high", "carry", "value", "width", "offset"],
    STR: ["s", "text", "word", "line", "result", "out", "prefix", "suffix", "name", "msg", "t", "st",
          "string", "sub", "part", "key", "code", "label", "new_text", "res", "token", "tail", "head"],
    CH: ["ch", "c", "char", "sep", "delim", "letter", "sym", "mark", "fill"],
    LI: ["nums", "arr", "xs", "values", "items", "data", "lst", "array", "stack", "queue", "digits",
         "scores", "ys", "output", "buf", "evens", "odds", "result", "vals", "counts", "numbers"],
    LS: ["words", "parts", "names", "tokens", "strs", "lines", "chunks", "letters", "keys", "fields",
         "pieces", "labels"],
    DSI: ["d", "freq", "mapping", "seen", "dic", "table", "index", "scores", "ages", "stock",
          "totals", "memo", "counter", "tally"],
    SI: ["seen", "uniq", "visited", "pool", "found", "marks", "used"],
    TI: ["pair", "point", "coords", "bounds", "triple", "span"],
    BOOL: ["flag", "ok", "found", "done", "valid", "changed", "is_sorted", "match"],
    OPT: ["best", "largest", "smallest", "first", "last", "winner"],
    DL: ["groups", "buckets", "by_key", "table", "index"],
    LP: ["pairs", "found", "matches", "hits", "spans"],
}
HELPER_NAMES = ["helper", "g", "h", "process", "transform", "score", "clean", "normalize", "step",
                "pick", "weight", "combine", "check", "to_key", "fmt", "aux", "update", "convert",
                "measure", "shift", "encode", "merge", "rank", "walk"]
WORDS = ["apple", "bob", "cat", "dog", "echo", "fox", "go", "hat", "ice", "jam", "kit", "lime",
         "moon", "nap", "oak", "pie", "quiz", "red", "sun", "tea", "up", "van", "wax", "yes", "zoo",
         "abc", "hello", "world", "data", "code", "x", "a", "ab", "level", "noon", "test"]
STR_LITS = ["a", "e", "o", "x", " ", "-", "_", ",", "#", "ab", "abc", "hello", "0", "1", "!", ".",
            ":", "*", "", "z", "the", "na", "ok", "|", "="]
CH_LITS = ["a", "e", "o", "x", " ", "-", "_", ",", "#", "0", "1", "!", ".", ":", "*", "z", "|"]

# Expression precedence: larger binds looser. A child is parenthesized when looser than allowed.
ATOM, POW, UNARY, MUL, ADD, CMP, NOT, AND, OR, TERN = 0, 1, 2, 3, 4, 6, 7, 8, 9, 10


STRING_RE = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
# NAME = / NAME op= / NAME.method( / NAME[...] = / for NAMES in: what a line writes, then what it reads
TARGET_RE = re.compile(r"^(?!(?:if|elif|else|return|try|except|finally|del|raise|break|continue|print|while)\b)(?:for )?"
                       r"([\w, *]+?)(?: (?:\*\*|//|[-+*/%])?=(?!=) | in |\.\w+\(|\[)(.*)$")


IDENT_RE = re.compile(r"(?<![.\w])[A-Za-z_]\w*")  # names, not attributes
LITERAL_RE = re.compile(r"-?\d+|'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|True|False|None|\[[^\[\]]*\]|\([-\d, ]*\)|\{\}|dict\(\)|set\(\)")


class Retry(Exception):
    """A production that does not apply in the current scope."""


class E:
    __slots__ = ("s", "p")

    def __init__(self, s: str, p: int = ATOM):
        self.s, self.p = s, p

    def at(self, maxp: int) -> str:
        return self.s if self.p <= maxp else f"({self.s})"


def lit(v) -> E:
    return E(repr(v), UNARY if isinstance(v, int) and v < 0 else ATOM)


# ---------------------------------------------------------------------------------------------
class Scope:
    """Typed variables in definition order (lists, never sets: choices must be deterministic)."""

    def __init__(self):
        self.vars: dict[str, str] = {}
        self.frozen: dict[str, int] = {}   # containers being iterated: never mutated
        self.used: dict[str, str] = {}     # every name ever bound in this function, with its type
        self.derived: dict[str, bool] = {}  # names whose value depends on the inputs

    def of(self, t: str, mutable: bool = False) -> list[str]:
        ok = (STR, CH) if t == STR else (t,)
        return [n for n, vt in self.vars.items() if vt in ok and not (mutable and self.frozen.get(n))]


class FuncGen:
    """Composes one program: optional helpers and a class, then `f`."""

    def __init__(self, rng: random.Random, style: str = "classic"):
        if style not in STYLES:
            raise ValueError(f"style {style!r}: one of {', '.join(STYLES)}")
        self.r = rng
        self.real = style == "real"
        self.defaults: list[tuple[str, str, str]] = []  # f's parameters with a default: (name, type, default text)
        self.ret_type: str | None = None  # what the function being written returns (None: f, anything)
        self.lines: list[str] = []
        self.ind = 0
        self.sc = Scope()
        self.helpers: list[tuple[str, list[str], str]] = []  # (name, param types, return type)
        self.loop = 0          # loop nesting of the current statement
        self.in_while = False  # `continue` would skip a while loop's counter update
        self.block_depth = 0
        self.budget = 0        # statements left for the current function

    # -- emission --------------------------------------------------------------------------
    def emit(self, s: str) -> None:
        self.lines.append("    " * self.ind + s)
        self.track(s)

    def track(self, line: str) -> None:
        """Marks what a line assigns or mutates as input-derived when it reads a derived name."""
        for ln in line.split("\n"):
            ln = STRING_RE.sub("''", ln.strip())
            m = TARGET_RE.match(ln)
            if not m:
                continue
            targets = re.findall(r"[A-Za-z_]\w*", m.group(1))
            reads = set(re.findall(r"[A-Za-z_]\w*", m.group(2)))
            if any(n in self.sc.derived for n in reads):
                for n in targets:
                    self.sc.derived[n] = True

    def w(self, classic: float, real: float) -> float:
        """A production's weight in the current style."""
        return real if self.real else classic

    def chance(self, p: float) -> bool:
        return self.r.random() < p

    def pick(self, seq):
        return seq[self.r.randrange(len(seq))]

    def weighted(self, options):
        total = sum(w for w, _ in options)
        x = self.r.random() * total
        for w, v in options:
            x -= w
            if x < 0:
                return v
        return options[-1][1]

    def var(self, t: str, mutable: bool = False, derived: float = 4.0) -> str:
        """A variable of type t, input-derived ones `derived` times likelier; derived=0: only those."""
        vs = self.sc.of(t, mutable)
        if derived == 0:
            vs = [n for n in vs if n in self.sc.derived]
        if not vs:
            raise Retry
        return self.weighted([(derived if n in self.sc.derived else 1.0, n) for n in vs]) if derived else self.pick(vs)

    def fresh(self, t: str) -> str:
        pool = [n for n in NAMES[t] if n not in self.sc.used and n not in self.sc.vars]
        name = self.pick(pool) if pool else f"{NAMES[t][0]}{len(self.sc.used)}"
        self.sc.used[name] = t
        return name

    def bind(self, name: str, t: str) -> None:
        self.sc.vars[name] = t
        self.sc.used[name] = t

    # -- literals --------------------------------------------------------------------------
    def int_lit(self) -> E:
        return lit(self.weighted([(6, self.r.randint(0, 5)), (3, self.r.randint(6, 12)), (1, self.r.randint(-3, -1))]))

    def small(self, lo: int = 2, hi: int = 5) -> E:
        return lit(self.r.randint(lo, hi))

    # -- expressions -----------------------------------------------------------------------
    def ex(self, t: str, d: int = 0) -> E:
        """An expression of type t; d is the nesting depth (deeper prefers atoms)."""
        for _ in range(30):
            try:
                return self._ex(t, d)
            except Retry:
                continue
        return self.literal(t)

    def literal(self, t: str) -> E:
        r = self.r
        if t == INT:
            return self.int_lit()
        if t == STR:
            return lit(self.pick(STR_LITS))
        if t == CH:
            return lit(self.pick(CH_LITS))
        if t == BOOL:
            return E(self.pick(["True", "False"]))
        if t == LI:
            return E(repr([r.randint(0, 9) for _ in range(r.randint(0, 3))]))
        if t == LS:
            return E(repr([self.pick(WORDS) for _ in range(r.randint(0, 3))]))
        if t == DSI:
            return E(self.pick(["{}", "dict()"]))
        if t == SI:
            return E("set()")
        if t == TI:
            return E(repr(tuple(r.randint(0, 5) for _ in range(2))))
        raise ValueError(t)

    def _ex(self, t: str, d: int) -> E:
        deep = d >= 2
        opts = getattr(self, "ex_" + t)(d)
        # At depth, prefer variables and literals.
        if deep:
            if t == BOOL and self.sc.of(INT) and self.chance(0.7):
                return E(f"{self.var(INT)} {self.pick(['>', '<', '==', '!='])} {self.int_lit().s}", CMP)
            vs = self.sc.of(t)
            return E(self.pick(vs)) if vs and self.chance(0.8) else self.literal(t)
        e = self.weighted(opts)()
        if not LITERAL_RE.fullmatch(e.s) and not self.reads_var(e.s):
            raise Retry  # 5 * 4, 'z' + '_', not False: constants dressed up
        return e

    def reads_var(self, s: str) -> bool:
        return any(n in self.sc.vars for n in IDENT_RE.findall(STRING_RE.sub("''", s)))

    def sub(self, t: str, d: int) -> E:
        return self.ex(t, d + 1)

    def ex_int(self, d):
        v = lambda: E(self.var(INT))
        cont = lambda: self.var(self.pick([STR, LI, LS, DSI, SI]))
        return [
            (4, self.int_lit), (10, v),
            (4, lambda: E(f"len({cont()})")),
            (3, lambda: E(f"{self.sub(INT, d).at(ADD)} {self.pick(['+', '-'])} {self.sub(INT, d).at(MUL)}", ADD)),
            (2, lambda: E(f"{self.sub(INT, d).at(MUL)} {self.pick(['*', '//', '%'])} {self.small().s}", MUL)),
            (2, self._agg),
            (self.w(2, 0.5), lambda: E(f"{(v := self.var(STR))}.{self.pick(['count', 'find', 'rfind'])}({self.other(v, STR, d)})")),
            (1, lambda: E(f"{self.var(LI)}.count({self.sub(INT, d).s})")),
            (1, lambda: E(f"{self.var(LS)}.count({self.sub(STR, d).s})")),
            (self.w(2, 0.4), lambda: E(f"{self.var(DSI)}.get({self.sub(STR, d).s}, {self.int_lit().s})")),
            (1, lambda: E(f"ord({self.var(CH)})")),
            (1, lambda: E(f"len({self.var(STR)}.split({self.pick(['', repr(self.pick(CH_LITS))])}))")),
            (1, lambda: E(f"abs({(v := self.sub(INT, d).s)} - {self.other(v, INT, d)})")),
            (1, lambda: E(f"{self.pick(['max', 'min'])}({(v := self.sub(INT, d).s)}, {self.other(v, INT, d)})")),
            (self.w(2, 3), lambda: self._count_comp(d)),
            (1, lambda: E(f"sum({self.var(DSI)}.values())")),
            (1, lambda: E(f"len(set({self.var(self.pick([LI, STR]))}))")),
            (1, lambda: E(f"{self.var(TI)}[{self.pick(['0', '1', '-1'])}]")),
            (1, lambda: E(f"{self.var(LI)}[{self.pick(['0', '-1', '0', 'len(' + self.var(LI) + ') // 2'])}]")),
            (1, lambda: E(f"{self.var(INT)} ** 2", POW)),
            (1, lambda: E(f"int({self.var(BOOL)})")),
            (2, lambda: self._call_helper(INT, d)),
        ]

    def other(self, first: str, t: str, d: int) -> str:
        """A second operand that is not the first one (no s.find(s), max(x, x))."""
        e = self.sub(t, d).s
        if e == first:
            raise Retry
        return e

    def _other_at(self, first: str, t: str, d: int) -> str:
        e = self.sub(t, d).at(TERN)
        if e == first:
            raise Retry
        return e

    def _agg(self) -> E:
        li = self.var(LI)
        f = self.pick(["sum", "max", "min", "max", "len"])
        if f in ("max", "min"):
            return self.pick([E(f"{f}({li}, default=0)"), E(f"{f}({li}) if {li} else 0", TERN)])
        return E(f"{f}({li})")

    def _count_comp(self, d) -> E:
        t = self.pick([LI, STR, LS])
        src = self.var(t, derived=0)
        x = self.loop_name(ELEM[t])
        self.bind_tmp(x, ELEM[t])
        try:
            cond = self.cond_on(x, ELEM[t])
            body = "1" if self.chance(0.5) or ELEM[t] != INT else x
        finally:
            self.unbind_tmp(x)
        return E(f"sum({body} for {x} in {src} if {cond})")

    def ex_str(self, d):
        s = lambda: self.var(STR)
        return [
            (4, lambda: lit(self.pick(STR_LITS))), (10, lambda: E(s())),
            (self.w(3, 1.5), lambda: E(f"{s()}.{self.pick(['upper', 'lower', 'strip', 'capitalize', 'title', 'swapcase', 'lstrip', 'rstrip', 'casefold'])}()")),
            (self.w(3, 1.5), lambda: E(f"{(v := s())}.replace({(a := self.other(v, STR, d))}, {self.other(a, STR, d)})")),
            (self.w(2, 1), lambda: E(f"{s()}[::-1]")),
            (self.w(3, 1.5), lambda: E(f"{s()}[{self.slice_spec()}]")),
            (5, lambda: E(f"{self.pick([repr(''), repr(''), repr(' '), repr(','), repr('-'), self.var(CH)])}.join({self.var(LS)})")),
            (self.w(1, 0.3), lambda: E(f"''.join(sorted({s()}))")),
            (1, lambda: E(f"''.join(reversed({s()}))")),
            (2, lambda: E(f"str({self.sub(INT, d).s})")),
            (3, lambda: E(f"{self.sub(STR, d).at(ADD)} + {self.sub(STR, d).at(MUL)}", ADD)),
            (1, lambda: E(f"{s()} * {self.small(2, 3).s}", MUL)),
            (2, lambda: E(self._fstring(d))),
            (1, lambda: E(f"{s()}.{self.pick(['center', 'ljust', 'rjust'])}({self.r.randint(3, 12)}, {self.var(CH) if self.chance(0.5) else repr(self.pick(CH_LITS))})")),
            (1, lambda: E(f"{s()}.zfill({self.r.randint(3, 8)})")),
            (1, lambda: E(f"{s()}.partition({self.sub(STR, d).s})[{self.pick(['0', '2'])}]")),
            (1, lambda: E(f"{s()}.split({self.pick([repr(self.pick(CH_LITS)), self.var(CH)]) if self.chance(0.6) else ''})[{self.pick(['0', '-1'])}]")),
            (1, lambda: E(f"{s()}[{self.pick(['0', '-1'])}]")),
            (1, lambda: E(f"{self.var(LS)}[{self.pick(['0', '-1'])}]")),
            (1, lambda: E(f"{s()}.{self.pick(['removeprefix', 'removesuffix', 'strip', 'rstrip'])}({self.sub(STR, d).s})")),
            (1, lambda: E(f"{(a := self.sub(STR, d).at(ATOM))} if {self.sub(BOOL, d).at(OR)} else {self._other_at(a, STR, d)}", TERN)),
            (2, lambda: self._call_helper(STR, d)),
        ]

    def _fstring(self, d) -> str:
        a = self.var(self.pick([INT, STR, LI, DSI, BOOL]))
        b = self.var(self.pick([INT, STR]))
        sep = self.pick([":", "-", " ", "=", "", ", "])
        return "f" + repr(f"{{{a}}}{sep}{{{b}}}") if self.chance(0.7) else "f" + repr(f"<{{{a}}}>")

    def slice_spec(self) -> str:
        i = lambda: self.pick(["1", "2", "-1", "-2", "3", self.var(INT) if self.sc.of(INT) else "1"])
        lo, hi = self.r.randint(0, 2), self.r.randint(3, 6)
        return self.pick([f"{i()}:", f":{i()}", f"{lo}:{hi}", f"{self.var(INT) if self.sc.of(INT) else lo}:{hi}", "::2", "1::2", "::-1", f"{i()}:-1"])

    def ex_ch(self, d):
        s = lambda: self.var(STR)
        return [
            (5, lambda: lit(self.pick(CH_LITS))), (10, lambda: E(self.var(CH))),
            (2, lambda: E(f"{s()}[{self.pick(['0', '-1', '0'])}]")),
            (1, lambda: E(f"chr(ord({self.var(CH)}) + {self.small(1, 3).s})")),
            (1, lambda: E(f"{self.var(CH)}.{self.pick(['upper', 'lower', 'swapcase'])}()")),
            (1, lambda: E(f"{self.pick(['max', 'min'])}({s()})")),
        ]

    def ex_bool(self, d):
        return [
            (2, lambda: E(self.var(BOOL))),
            (5, lambda: self.compare(d)),
            (3, lambda: self.member(d)),
            (self.w(3, 1), lambda: E(f"{(v := self.var(STR))}.{self.pick(['startswith', 'endswith'])}({self.other(v, STR, d)})")),
            (self.w(3, 1), lambda: E(f"{self.var(STR)}.{self.pick(['isdigit', 'isalpha', 'isupper', 'islower', 'isspace', 'isalnum', 'isdecimal', 'istitle', 'isnumeric', 'isidentifier'])}()")),
            (1, lambda: E(f"not {self.var(self.pick(CONTAINERS))}", NOT)),
            (2, lambda: E(f"{self.var(INT)} % {self.small(2, 3).s} == {self.pick(['0', '1'])}", CMP)),
            (self.w(1, 5), lambda: self._andor(d)),
            (1, lambda: E(f"not {self.sub(BOOL, d).at(NOT)}", NOT)),
            (1, lambda: E(f"len({self.var(self.pick([STR, LI, LS, DSI]))}) {self.pick(['>', '<', '=='])} {self.small(0, 4).s}", CMP)),
            (self.w(1, 2), lambda: self._allany(d)),
            (self.w(1, 0.3), lambda: E(f"{self.var(LI)} == sorted({self.var(LI)})", CMP)),
            (1, lambda: E(f"{(v := self.var(STR))} == {v}[::-1]", CMP)),
            (1, lambda: self._call_helper(BOOL, d)),
        ]

    def compare(self, d) -> E:
        a, b = self.sub(INT, d).at(ADD), self.sub(INT, d).at(ADD)
        if a == b or (a[0].isdigit() or a[0] == "-") and (b[0].isdigit() or b[0] == "-"):
            raise Retry  # x < x, 3 < 5: constant conditions
        return E(f"{a} {self.pick(['<', '<=', '>', '>=', '==', '!='])} {b}", CMP)

    def _andor(self, d) -> E:
        a, b = self.sub(BOOL, d).at(NOT), self.sub(BOOL, d).at(NOT)
        if a == b or a in ("True", "False") or b in ("True", "False"):
            raise Retry
        return E(f"{a} {self.pick(['and', 'or'])} {b}", OR)

    def member(self, d) -> E:
        t = self.pick([LI, STR, LS, DSI, SI])
        neg = self.pick(["in", "in", "not in"])
        return E(f"{self.sub(ELEM[t] if t != STR else STR, d).at(ADD)} {neg} {self.var(t)}", CMP)

    def _allany(self, d) -> E:
        t = self.pick([LI, STR, LS])
        src = self.var(t, derived=0)
        x = self.loop_name(ELEM[t])
        self.bind_tmp(x, ELEM[t])
        try:
            cond = self.cond_on(x, ELEM[t])
        finally:
            self.unbind_tmp(x)
        return E(f"{self.pick(['all', 'any'])}({cond} for {x} in {src})")

    def ex_li(self, d):
        l = lambda: self.var(LI)
        return [
            (2, lambda: self.literal(LI)), (8, lambda: E(l())),
            (self.w(2, 0.5), lambda: E(f"sorted({l()}{self.pick(['', ', reverse=True'])})")),
            (self.w(2, 1), lambda: E(f"{l()}[{self.slice_spec()}]")),
            (1, lambda: E(f"{l()}[::-1]")),
            (2, lambda: E(f"list(range({self.pick(['len(' + self.var(self.pick(CONTAINERS)) + ')', str(self.r.randint(2, 6)), self.var(INT) + ' % ' + str(self.r.randint(4, 8))])}))")),
            (self.w(4, 5), lambda: self._list_comp(INT, d)),
            (1, lambda: E(f"{l()} + {self.sub(LI, d).at(MUL)}", ADD)),
            (1, lambda: E(f"list({self.var(DSI)}.values())")),
            (self.w(1, 0.3), lambda: E(f"sorted(set({l()}))")),
            (2, lambda: E(f"{l()}.copy()")),
            (1, lambda: E(f"list(map(abs, {l()}))") if self.chance(0.5) else E(f"list(map(len, {self.var(LS)}))")),
            (1, lambda: E(f"[{self.pick(['int(c)', 'ord(c)'])} for c in {self.var(STR)} if c.isdigit()]")),
            (1, lambda: E(f"[i for i, {(x := self.loop_name(INT))} in enumerate({l()}) if {x} {self.pick(['>', '<', '=='])} {self.int_lit().s}]")),
            (1, lambda: self._call_helper(LI, d)),
        ]

    def _list_comp(self, et, d) -> E:
        t = self.pick([LI, STR, LS]) if et == INT else self.pick([LS, STR, LI])
        src = self.var(t, derived=0)
        x = self.loop_name(ELEM[t])
        self.bind_tmp(x, ELEM[t])
        try:
            body = self.ex(et, 2 if self.chance(0.3) else 1)
            if x not in body.s and self.chance(0.8):
                body = self._elem_expr(x, ELEM[t], et)
            cond = f" if {self.cond_on(x, ELEM[t])}" if self.chance(0.5) else ""
        finally:
            self.unbind_tmp(x)
        return E(f"[{body.at(TERN)} for {x} in {src}{cond}]")

    def _elem_expr(self, x: str, xt: str, want: str) -> E:
        """An expression of type `want` built from the loop element x."""
        if want == INT:
            if xt == INT:
                return self.pick([E(f"{x} * {self.small(2, 3).s}", MUL), E(f"{x} + {self.small(1, 3).s}", ADD), E(f"{x} % {self.small(2, 5).s}", MUL), E(f"{x} ** 2", POW), E(f"abs({x})"), E(f"-{x}", UNARY)])
            return self.pick([E(f"len({x})"), E(f"ord({x}[0])" if xt == STR else f"ord({x})")]) if xt == CH else E(f"len({x})")
        if want in (STR, CH):
            if xt == INT:
                return E(f"str({x})")
            return self.pick([E(f"{x}.upper()"), E(f"{x}.lower()"), E(f"{x} * 2", MUL), E(f"{x}[::-1]"), E(f"{x}.strip()"), E(f"{x}.capitalize()")])
        raise Retry

    def cond_on(self, x: str, xt: str) -> str:
        if xt == INT and self.real and self.chance(0.4):
            lo = self.r.randint(-2, 3)
            return f"{lo} {self.pick(['<', '<='])} {x} {self.pick(['<', '<='])} {lo + self.r.randint(3, 9)}"
        if xt == INT:
            return self.pick([f"{x} % 2 == 0", f"{x} % 2 == 1", f"{x} > {self.int_lit().s}", f"{x} < {self.int_lit().s}",
                              f"{x} != {self.int_lit().s}", f"{x} >= {self.var(INT) if self.sc.of(INT) and self.chance(0.5) else self.int_lit().s}",
                              f"{x} in {self.var(LI) if self.sc.of(LI) else '(1, 2, 3)'}"])
        if xt == CH:
            return self.pick([f"{x}.isdigit()", f"{x}.isalpha()", f"{x}.isupper()", f"{x} in 'aeiou'", f"{x} != {repr(self.pick(CH_LITS))}",
                              f"{x} == {self.var(CH) if self.sc.of(CH) else repr(self.pick(CH_LITS))}", f"{x}.islower()", f"{x} not in {self.var(STR)}"])
        return self.pick([f"len({x}) > {self.small(1, 4).s}", f"{x}.startswith({repr(self.pick(STR_LITS[:12]))})", f"{x}.isalpha()",
                          f"{x} != {repr(self.pick(WORDS))}", f"{self.pick(['a', 'e', 'o'])!r} in {x}", f"{x}.islower()", f"len({x}) % 2 == 0"])

    def ex_ls(self, d):
        s = lambda: self.var(STR)
        return [
            (2, lambda: self.literal(LS)), (6, lambda: E(self.var(LS))),
            (3, lambda: E(f"{s()}.split({self.pick(['', repr(' '), repr(','), repr('-'), self.var(CH) if self.sc.of(CH) else repr('a')])})")),
            (2, lambda: E(f"list({s()})")),
            (self.w(2, 0.5), lambda: E(f"sorted({self.var(LS)}{self.pick(['', ', key=len', ', reverse=True', ', key=lambda w: (len(w), w)', ', key=str.lower'])})")),
            (self.w(3, 4), lambda: self._list_comp(STR, d)),
            (1, lambda: E(f"list({self.var(DSI)}{self.pick(['', '.keys()'])})")),
            (1, lambda: E(f"{self.var(LS)}[{self.slice_spec()}]")),
            (1, lambda: E(f"[{(v := s())}[i:i + {self.small(2, 3).s}] for i in range(0, len({v}), {self.small(2, 3).s})]")),
            (1, lambda: E(f"[str(x) for x in {self.var(LI)}]")),
            (1, lambda: E(f"{s()}.rsplit({self.pick(CH_LITS)!r}, 1)")),
            (1, lambda: self._call_helper(LS, d)),
        ]

    def ex_dsi(self, d):
        return [
            (3, lambda: self.literal(DSI)), (6, lambda: E(self.var(DSI))),
            (self.w(2, 0.4), lambda: E(f"{{w: len(w) for w in {self.var(LS)}}}")),
            (self.w(2, 0.4), lambda: E(f"{{{(c := self.loop_name(CH))}: {(v := self.var(STR))}.count({c}) for {c} in {v}}}")),
            (2, lambda: E(f"dict(zip({self.var(LS)}, {self.var(LI)}))")),
            (self.w(2, 0.4), lambda: E(f"{{k: v for k, v in {self.var(DSI)}.items() if v {self.pick(['>', '<', '!=', '>='])} {self.int_lit().s}}}")),
            (1, lambda: E(f"dict.fromkeys({self.var(self.pick([LS, STR]))}, {self.int_lit().s})")),
            (1, lambda: E(f"{self.var(DSI)}.copy()")),
            (1, lambda: E(f"dict(sorted({self.var(DSI)}.items(){self.pick(['', ', key=lambda kv: kv[1]', ', reverse=True'])}))")),
            (1, lambda: E(f"{{k: v {self.pick(['*', '+', '-'])} {self.small(1, 3).s} for k, v in {self.var(DSI)}.items()}}")),
            (1, lambda: E(f"{{str(x): x for x in {self.var(LI)}}}")),
        ]

    def ex_si(self, d):
        return [
            (3, lambda: E("set()")), (4, lambda: E(self.var(SI))),
            (4, lambda: E(f"set({self.var(LI)})")),
            (2, lambda: E(f"{{x % {self.small(2, 5).s} for x in {self.var(LI)}}}")),
            (2, lambda: E(f"{self.var(SI)} {self.pick(['&', '|', '-', '^'])} {self.pick(['set(' + self.var(LI) + ')', self.var(SI)])}", ADD)),
            (1, lambda: E(f"set(range({self.small(2, 6).s}))")),
            (1, lambda: E(f"{{len(w) for w in {self.var(LS)}}}")),
        ]

    def ex_ti(self, d):
        return [
            (2, lambda: self.literal(TI)), (4, lambda: E(self.var(TI))),
            (3, lambda: E(f"({self.sub(INT, d).s}, {self.sub(INT, d).s})")),
            (2, lambda: E(f"tuple({self.var(LI)})")),
            (2, lambda: E(f"divmod({self.sub(INT, d).s}, {self.small(2, 7).s})")),
            (1, lambda: E(f"tuple(sorted({self.var(LI)}))")),
        ]

    def _call_helper(self, t: str, d: int) -> E:
        hs = [h for h in self.helpers if h[2] == t or (t == STR and h[2] == CH)]
        if not hs:
            raise Retry
        name, pts, _ = self.pick(hs)
        return E(f"{name}({', '.join(self.sub(pt, d).s for pt in pts)})")

    # -- loop variables --------------------------------------------------------------------
    def loop_name(self, t: str) -> str:
        pools = {INT: ["x", "n", "v", "num", "item", "i", "val", "e"], CH: ["c", "ch", "char", "letter"],
                 STR: ["w", "word", "s", "part", "token", "item", "key", "name"]}
        pool = [n for n in pools[t] if n not in self.sc.vars and self.sc.used.get(n, t) == t]
        if not pool:
            raise Retry
        return self.pick(pool)

    def bind_tmp(self, x: str, t: str) -> None:
        self.sc.vars[x] = t

    def unbind_tmp(self, x: str) -> None:
        self.sc.vars.pop(x, None)

    # -- statements ------------------------------------------------------------------------
    def block(self, n: int, loop_vars: tuple[str, ...] = ()) -> None:
        """n statements in a nested block; names first bound here do not outlive it."""
        before = dict(self.sc.vars)
        self.ind += 1
        self.block_depth += 1
        start = len(self.lines)
        for k in range(n):
            self.stmt(loop_vars, first=k == 0)
        if len(self.lines) == start:
            self.emit("pass")
        self.block_depth -= 1
        self.ind -= 1
        self.sc.vars = {k: v for k, v in self.sc.vars.items() if k in before}

    def stmt(self, loop_vars=(), first=False) -> None:
        self.budget -= 1
        nested_ok = self.block_depth < 3 and self.budget > 0
        opts = [
            (6, self.s_assign), (3, self.s_reassign), (self.w(5, 1.2), self.s_aug), (self.w(5, 4), self.s_mutate),
            (3 if nested_ok else 0, self.s_if),
            (3 if nested_ok and self.loop < 2 else 0, self.s_for),
            (1 if nested_ok and self.loop < 1 else 0, self.s_while),
            (self.w(1.5, 0.2) if nested_ok else 0, self.s_try),
            (self.w(0.2, 0.05), self.s_print), (self.w(0.7, 2), self.s_unpack), (self.w(3, 0.3), self.s_transform),
        ]
        if self.real and self.ret_type is None:
            opts += [(0.5 if self.block_depth else 0, self.s_early_return)]
        if self.loop:
            opts += [(self.w(2, 0.8) if not first else 0, self.s_break),
                     (self.w(1.5, 0.4) if not first and not self.in_while else 0, self.s_continue)]
        if loop_vars:
            opts += [(8, lambda: self.s_use_loop_var(loop_vars))]
        for _ in range(20):
            state = self.save()
            try:
                self.weighted(opts)()
                return
            except Retry:
                self.restore(state)  # a production that failed halfway leaves nothing behind
        self.s_assign()

    def save(self):
        sc = self.sc
        return (len(self.lines), self.ind, dict(sc.vars), dict(sc.frozen), dict(sc.used), dict(sc.derived), self.loop, self.in_while, self.block_depth)

    def restore(self, state) -> None:
        n, self.ind, v, fz, u, dv, self.loop, self.in_while, self.block_depth = state
        del self.lines[n:]
        self.sc.vars, self.sc.frozen, self.sc.used, self.sc.derived = v, fz, u, dv

    def s_assign(self) -> None:
        t = self.weighted([(5, INT), (4, STR), (3, LI), (2, LS), (2, DSI), (1, SI), (1, TI), (1, BOOL), (1, CH)])
        e = self.ex(t)
        name = self.fresh(t)
        self.emit(f"{name} = {e.s}")
        self.bind(name, t)

    def s_reassign(self) -> None:
        t = self.pick([INT, STR, LI, LS, DSI, BOOL])
        name = self.var(t, mutable=True)
        if self.sc.vars[name] == CH:
            t = CH
        e = self.ex(t)
        if e.s == name:
            raise Retry
        self.emit(f"{name} = {e.s}")

    def s_transform(self) -> None:
        """A string rebuilt by its own methods, the commonest line of string code."""
        v = self.var(STR, mutable=True)
        if self.sc.vars[v] == CH:
            raise Retry
        a = lambda: self.other(v, STR, 1)
        rhs = self.weighted([
            (4, lambda: f"{v}.replace({(x := a())}, {self.other(x, STR, 1)})"),
            (3, lambda: f"{v}.{self.pick(['upper', 'lower', 'strip', 'capitalize', 'title', 'swapcase', 'lstrip', 'rstrip'])}()"),
            (3, lambda: f"{self.pick([repr(''), repr(' '), repr('-'), repr(',')])}.join({self.pick([f'reversed({v})', f'sorted({v})', self.var(LS, derived=0)])})"),
            (2, lambda: f"{v}[{self.slice_spec()}]"),
            (1, lambda: f"{v}.{self.pick(['strip', 'rstrip', 'lstrip', 'removeprefix', 'removesuffix'])}({a()})"),
            (1, lambda: f"{v}.{self.pick(['ljust', 'rjust', 'center'])}({self.r.randint(4, 12)}, {self.pick(CH_LITS)!r})"),
        ])()
        self.emit(f"{v} = {rhs}")

    def s_aug(self) -> None:
        t = self.pick([INT, INT, STR, LI, LS])
        name = self.var(t, mutable=True)
        if self.sc.vars[name] == CH:
            raise Retry
        if t == INT:
            op = self.weighted([(5, "+="), (3, "-="), (1, "*="), (1, "//="), (1, "%=")])
            rhs = self.small(2, 4) if op in ("*=", "//=", "%=") else self.ex(INT, 1)
            self.emit(f"{name} {op} {rhs.s}")
        elif t == STR:
            self.emit(f"{name} += {self.ex(STR, 1).s}")
        else:
            self.emit(f"{name} += {self.pick(['[' + self.ex(ELEM[t], 1).s + ']', self.ex(t, 1).s])}")

    def s_mutate(self) -> None:
        t = self.weighted([(5, LI), (2, LS), (self.w(4, 1.5), DSI), (self.w(2, 1), SI)])
        name = self.var(t, mutable=True)
        et = ELEM[t]
        if t in (LI, LS):
            e = lambda: self.ex(et, 1).s
            form = self.weighted([
                (6, lambda: f"{name}.append({e()})"), (self.w(2, 0.5), lambda: f"{name}.insert({self.pick(['0', '1', '-1', 'len(' + name + ') // 2'])}, {e()})"),
                (self.w(2, 1), lambda: f"if {name}:\n    {name}.pop({self.pick(['', '0', '-1'])})"),
                (self.w(1, 0.4), lambda: f"{name}.pop({self.pick(['', '0'])})"),
                (self.w(2, 0.5), lambda: f"if {(v := e())} in {name}:\n    {name}.remove({v})"),
                (2, lambda: f"{name}.sort({self.pick(['', 'reverse=True', 'key=abs' if t == LI else 'key=len'])})"),
                (1.5, lambda: f"{name}.reverse()"), (1, lambda: f"{name}.extend({self.ex(t, 1).s})"),
                (1, lambda: f"{name}.insert({name}.index({(v := self.ex(et, 2).at(ADD))}) if {v} in {name} else 0, {e()})"),
                (1, lambda: f"del {name}[{self.pick(['0', '-1', ':1', '::2'])}]"),
                (1, lambda: f"{name}[{self.pick(['0', '-1'])}] = {e()}"), (0.6, lambda: f"{name}.clear()"),
            ])()
        elif t == DSI:
            k = lambda: self.ex(STR, 1).s
            form = self.weighted([
                (4, lambda: f"{name}[{k()}] = {self.ex(INT, 1).s}"),
                (4, lambda: f"{name}[{(kk := k())}] = {name}.get({kk}, 0) + {self.pick(['1', '1', self.ex(INT, 1).s])}"),
                (1, lambda: f"{name}.setdefault({k()}, {self.int_lit().s})"),
                (1, lambda: f"{name}.update({{{k()}: {self.ex(INT, 1).s}}})"),
                (1, lambda: f"{name}.update({self.var(DSI)})"),
                (1, lambda: f"{name}.pop({k()}, None)"),
                (1, lambda: f"if {(kk := k())} in {name}:\n    del {name}[{kk}]"),
                (0.5, lambda: f"{name}.clear()"),
            ])()
        else:
            form = self.pick([f"{name}.add({self.ex(INT, 1).s})", f"{name}.discard({self.ex(INT, 1).s})",
                              f"{name}.update({self.var(LI)})", f"{name}.add({self.ex(INT, 1).s})"])
        for ln in form.split("\n"):
            self.emit(ln)

    def s_if(self) -> None:
        cond = self.ex(BOOL)
        self.emit(f"if {cond.s}:")
        self.block(self.r.randint(1, 2))
        if self.chance(0.3):
            self.emit(f"elif {self.ex(BOOL).s}:")
            self.block(1)
        if self.chance(0.4):
            self.emit("else:")
            self.block(self.r.randint(1, 2))

    def s_for(self) -> None:
        kind = self.weighted([(5, "elem"), (self.w(2, 12), "range"), (2, "enumerate"), (self.w(2, 0.6), "items"), (1, "zip"),
                              (self.w(0.5, 0.2), "sorted")])
        if kind == "items":
            d = self.var(DSI, derived=0)
            k, v = self.pick([("k", "v"), ("key", "value"), ("name", "cnt"), ("word", "n")])
            if any(n in self.sc.vars or self.sc.used.get(n, t) != t for n, t in ((k, STR), (v, INT))):
                raise Retry
            head, binds, frz = f"for {k}, {v} in {d}.items():", ((k, STR), (v, INT)), d
        elif kind == "range":
            i = self.pick([n for n in ("i", "j", "idx") if n not in self.sc.vars] or ["_r"])
            if self.sc.used.get(i, INT) != INT:
                raise Retry
            c = self.var(self.pick([STR, LI, LS]), derived=0)
            self.sc.used[i] = INT
            spans = ['len(' + c + ')', '1, len(' + c + ')', 'len(' + c + ') - 1, -1, -1', str(self.r.randint(2, 5))]
            if self.real and self.sc.of(INT) and self.chance(0.3):  # range(1, n + 1) over a counted int
                spans = [f"{self.r.randint(1, 2)}, {self.var(INT)} % {self.r.randint(6, 12)} + 1"]
            head = f"for {i} in range({self.pick(spans)}):"
            binds, frz = ((i, INT),), c
            self._loop(head, binds, frz, extra=(c, i))
            return
        elif kind == "enumerate":
            t = self.pick([LI, STR, LS])
            c = self.var(t, derived=0)
            i, x = self.pick(["i", "idx", "pos"]), self.loop_name(ELEM[t])
            if i in self.sc.vars or self.sc.used.get(i, INT) != INT:
                raise Retry
            head, binds, frz = f"for {i}, {x} in enumerate({c}{self.pick(['', '', ', 1'])}):", ((i, INT), (x, ELEM[t])), c
        elif kind == "zip":
            a, b = self.var(self.pick([LI, STR, LS]), derived=0), self.var(self.pick([LI, STR, LS]))
            ta, tb = self.sc.vars[a], self.sc.vars[b]
            x = self.loop_name(ELEM[ta])
            self.bind_tmp(x, ELEM[ta])
            try:
                y = self.loop_name(ELEM[tb])
            finally:
                self.unbind_tmp(x)
            if x == y:
                raise Retry
            head, binds, frz = f"for {x}, {y} in zip({a}, {b}):", ((x, ELEM[ta]), (y, ELEM[tb])), a
            self.sc.frozen[b] = self.sc.frozen.get(b, 0) + 1
            try:
                self._loop(head, binds, frz)
            finally:
                self.sc.frozen[b] -= 1
            return
        else:
            t = self.weighted([(4, LI), (4, STR), (3, LS), (1, DSI), (0.5, SI)])
            c = self.var(t, derived=0)
            x = self.loop_name(ELEM[t])
            src = f"sorted({c})" if kind == "sorted" or t == SI else c
            head, binds, frz = f"for {x} in {src}:", ((x, ELEM[t]),), c
        self._loop(head, binds, frz)

    def _loop(self, head, binds, frz, extra=None) -> None:
        self.emit(head)
        for n, t in binds:
            self.sc.used[n] = t
        self.sc.frozen[frz] = self.sc.frozen.get(frz, 0) + 1
        self.loop += 1
        was_while, self.in_while = self.in_while, False
        outer = dict(self.sc.vars)
        for n, t in binds:
            self.sc.vars[n] = t
        if extra:  # a range over a container's indices: its elements are usable as c[i]
            c, i = extra
            et = ELEM[self.sc.vars[c]] if self.sc.vars[c] != CH else CH
            name = self.fresh(et) if self.chance(0.6) else None
            if name:
                self.ind += 1
                self.emit(f"{name} = {c}[{i}]")
                self.ind -= 1
                self.sc.vars[name] = et
                binds = binds + ((name, et),)
        try:
            self.block(self.r.randint(1, 3), tuple(n for n, _ in binds))
        finally:
            self.sc.vars = {k: v for k, v in self.sc.vars.items() if k in outer}
            self.loop -= 1
            self.in_while = was_while
            self.sc.frozen[frz] -= 1
        if self.chance(0.08):
            self.emit("else:")
            self.block(1)

    def s_while(self) -> None:
        kind = self.pick(["index", "pop", "digits", "true", "shrink", "count"])
        outer = dict(self.sc.vars)
        keep: list[str] = []
        self.loop += 1
        was, self.in_while = self.in_while, True
        try:
            if kind == "index":
                t = self.pick([LI, STR, LS])
                c = self.var(t, derived=0)
                i = self.pick([n for n in ("i", "j", "idx", "pos") if n not in self.sc.vars and self.sc.used.get(n, INT) == INT] or ["_"])
                if i == "_":
                    raise Retry
                self.emit(f"{i} = 0")
                self.bind(i, INT)
                keep.append(i)
                self.emit(f"while {i} < len({c}){'' if self.chance(0.7) else ' and ' + self.ex(BOOL, 1).s}:")
                self.sc.frozen[c] = self.sc.frozen.get(c, 0) + 1
                x = self.fresh(ELEM[t])
                self.ind += 1
                self.emit(f"{x} = {c}[{i}]")
                self.ind -= 1
                self.sc.vars[x] = ELEM[t]
                self._while_body((x,), tail=f"{i} += {self.pick(['1', '1', '1', '2'])}")
                self.sc.frozen[c] -= 1
            elif kind == "pop":
                t = self.pick([LI, LS])
                c = self.var(t, mutable=True, derived=0)
                self.emit(f"while {c}:")
                self.sc.frozen[c] = self.sc.frozen.get(c, 0) + 1
                x = self.fresh(ELEM[t])
                self.ind += 1
                self.emit(f"{x} = {c}.pop({self.pick(['', '0'])})")
                self.ind -= 1
                self.sc.vars[x] = ELEM[t]
                self._while_body((x,))
                self.sc.frozen[c] -= 1
            elif kind == "digits":
                n = self.var(INT, mutable=True, derived=0)
                self.emit(f"{n} = abs({n})")
                self.emit(f"while {n} > 0:")
                self.sc.frozen[n] = self.sc.frozen.get(n, 0) + 1
                dg = self.fresh(INT)
                base = self.pick(["10", "10", "2", "3"])
                self.ind += 1
                self.emit(f"{dg} = {n} % {base}")
                self.ind -= 1
                self.sc.vars[dg] = INT
                self._while_body((dg,), tail=f"{n} //= {base}")
                self.sc.frozen[n] -= 1
            elif kind == "true":
                k = self.fresh(INT)
                self.emit(f"{k} = 0")
                self.bind(k, INT)
                keep.append(k)
                self.emit("while True:")
                self.sc.frozen[k] = self.sc.frozen.get(k, 0) + 1
                self.ind += 1
                self.emit(f"{k} += 1")
                self.emit(f"if {k} {self.pick(['>=', '>'])} {self.pick([str(self.r.randint(2, 6)), 'len(' + self.var(self.pick([STR, LI, LS])) + ')'])}:")
                self.emit("    break")
                self.ind -= 1
                self._while_body((k,))
                self.sc.frozen[k] -= 1
            elif kind == "shrink":
                s = self.var(self.pick([STR, LI, LS]), mutable=True, derived=0)
                if self.sc.vars[s] == CH:
                    raise Retry
                cond = self.pick([f"len({s}) > {self.small(1, 4).s}", f"{s} and {s}[0] {self.pick(['!=', '=='])} {self.ex(ELEM[self.sc.vars[s]], 2).s}",
                                  f"{s} and {s}[-1] {self.pick(['!=', '=='])} {self.ex(ELEM[self.sc.vars[s]], 2).s}"])
                self.emit(f"while {cond}:")
                self.sc.frozen[s] = self.sc.frozen.get(s, 0) + 1
                self._while_body((), tail=f"{s} = {s}[{self.pick(['1:', ':-1', '2:'])}]")
                self.sc.frozen[s] -= 1
            else:  # count down
                n = self.var(INT, mutable=True, derived=0)
                self.emit(f"while {n} > {self.pick(['0', '1'])}:")
                self.sc.frozen[n] = self.sc.frozen.get(n, 0) + 1
                self._while_body((n,), tail=f"{n} -= {self.pick(['1', '1', '2', '3'])}")
                self.sc.frozen[n] -= 1
        finally:
            # a counter bound before the loop header outlives it; names bound inside do not
            self.sc.vars = {k: v for k, v in self.sc.vars.items() if k in outer or k in keep}
            self.loop -= 1
            self.in_while = was

    def _while_body(self, loop_vars, tail=None) -> None:
        before = dict(self.sc.vars)
        self.ind += 1
        self.block_depth += 1
        for k in range(self.r.randint(1, 2)):
            self.stmt(loop_vars, first=k == 0)
        if tail:
            self.emit(tail)
        self.block_depth -= 1
        self.ind -= 1
        self.sc.vars = {k: v for k, v in self.sc.vars.items() if k in before}

    def s_use_loop_var(self, loop_vars) -> None:
        """Accumulate something from the loop element: what most real loop bodies do."""
        x = self.pick(list(loop_vars))
        xt = self.sc.vars.get(x)
        if xt is None:
            raise Retry
        kind = self.weighted([(3, "append"), (self.w(3, 1.5), "count"), (2, "ifacc"), (self.w(2, 1), "dict"), (1, "concat"), (1, "set"), (1, "max"),
                              # an accumulator of the real style is declared for this production: it is used, or dropped
                              (self.w(0, 6 if self.sc.of(OPT) else 0), "opt"), (self.w(0, 8 if self.sc.of(DL) else 0), "group"),
                              (self.w(0, 8 if self.sc.of(LP) else 0), "pair")])
        if kind == "append":
            t = LI if xt == INT else LS
            acc = self.var(t, mutable=True)
            val = self._elem_expr(x, xt, ELEM[t]).s if self.chance(0.5) else x
            line = f"{acc}.append({val})"
            if self.chance(0.5):
                self.emit(f"if {self.cond_on(x, xt)}:")
                self.emit(f"    {line}")
            else:
                self.emit(line)
        elif kind == "count":
            acc = self.var(INT, mutable=True)
            if acc == x:
                raise Retry
            inc = x if xt == INT and self.chance(0.5) else self.pick(["1", "1", self._elem_expr(x, xt, INT).s if xt != CH else "1"])
            self.emit(f"if {self.cond_on(x, xt)}:")
            self.emit(f"    {acc} += {inc}")
            if self.chance(0.3):
                self.emit("else:")
                self.emit(f"    {acc} -= 1")
        elif kind == "ifacc":
            acc = self.var(STR, mutable=True)
            if self.sc.vars[acc] == CH or acc == x:
                raise Retry
            val = x if xt != INT else f"str({x})"
            self.emit(f"if {self.cond_on(x, xt)}:")
            self.emit(f"    {acc} += {self._elem_expr(x, xt, STR).s if xt != INT and self.chance(0.5) else val}")
            if self.chance(0.5):
                self.emit("else:")
                self.emit(f"    {acc} += {self.pick([repr(self.pick(CH_LITS)), val])}")
        elif kind == "dict":
            d = self.var(DSI, mutable=True)
            key = x if xt != INT else f"str({x})"
            self.emit(self.pick([f"{d}[{key}] = {d}.get({key}, 0) + 1", f"{d}[{key}] = {d}.get({key}, 0) + {x if xt == INT else 'len(' + x + ')'}",
                                 f"if {key} not in {d}:\n    {d}[{key}] = 0\n{d}[{key}] += 1", f"{d}.setdefault({key}, {self.int_lit().s})"]).replace("\n", "\n" + "    " * self.ind))
        elif kind == "concat":
            acc = self.var(STR, mutable=True)
            if self.sc.vars[acc] == CH:
                raise Retry
            self.emit(f"{acc} = {self.pick([f'{acc} + ' + (x if xt != INT else f'str({x})'), (x if xt != INT else f'str({x})') + f' + {acc}'])}")
        elif kind == "opt":  # best = None before the loop: the first element, or a better one
            o = self.var(OPT, mutable=True)
            if xt == INT:
                self.emit(f"if {o} is None or {x} {self.pick(['>', '<'])} {o}:")
            else:
                self.emit(f"if {o} is None and {self.cond_on(x, xt)}:")
            self.emit(f"    {o} = {x}")
        elif kind == "group":  # a dict of lists: the nested container people build most
            g = self.var(DL, mutable=True)
            key = self.pick([f"{x} % {self.small(2, 4).s}", f"{x} > 0"]) if xt == INT else f"len({x})" if xt == STR else self.pick([f"{x}.isalpha()", x])
            val = self._elem_expr(x, xt, INT).s if self.chance(0.3) else x
            self.emit(f"{g}.setdefault({key}, []).append({val})")
        elif kind == "pair":  # a list of tuples
            p = self.var(LP, mutable=True)
            other = [n for n in loop_vars if n != x] or [self._elem_expr(x, xt, INT).s if xt in (INT, STR) else f"ord({x})"]
            line = f"{p}.append(({x}, {self.pick(other)}))"
            if self.chance(0.5):
                self.emit(f"if {self.cond_on(x, xt)}:")
                self.emit(f"    {line}")
            else:
                self.emit(line)
        elif kind == "set":
            st = self.var(SI, mutable=True)
            if xt != INT:
                raise Retry
            self.emit(f"if {x} in {st}:")
            self.ind += 1
            self.stmt((), first=True)
            self.ind -= 1
            self.emit(f"{st}.add({x})")
        else:
            acc = self.var(INT, mutable=True)
            if xt != INT or acc == x:
                raise Retry
            self.emit(self.pick([f"{acc} = max({acc}, {x})", f"{acc} = min({acc}, {x})", f"if {x} > {acc}:\n    {acc} = {x}".replace("\n", "\n" + "    " * self.ind)]))

    def s_early_return(self) -> None:
        """`if cond: return value` inside f's loops and branches: real functions return early."""
        cond = self.ex(BOOL, 1)
        vs = [n for n in self.sc.vars if self.sc.vars[n] not in (OPT, DL, LP) and n not in self.param_names]
        value = self.pick(vs) if vs and self.chance(0.6) else self.literal(self.pick([INT, STR, BOOL, LI])).s
        self.emit(f"if {cond.s}:")
        self.emit(f"    return {value}")

    def guard(self, params: list[tuple[str, str]]) -> None:
        """The checks real functions open with: a wrong type raises, an empty input returns early."""
        name, t = self.pick(params)
        py = {INT: "int", STR: "str", CH: "str", LI: "list", LS: "list", DSI: "dict", SI: "set", TI: "tuple", BOOL: "bool"}[t]
        if t == INT and self.chance(0.5):  # a value check: inputs it refuses are not kept
            self.emit(f"if {name} < 0:")
            self.emit(f"    raise ValueError({self.pick([repr(name + ' must be non-negative'), 'f' + repr(name + '={' + name + '} is negative')])})")
        elif t in (INT, BOOL) or self.chance(0.4):
            msg = self.pick([f"'{name} must be a {py}'", f"f'expected {py}, got {{type({name}).__name__}}'", f"'invalid {name}'"])
            self.emit(f"if not isinstance({name}, {py}):")
            self.emit(f"    raise {self.pick(['TypeError', 'ValueError'])}({msg})")
        elif self.chance(0.3):
            self.emit(f"if not {name}:")
            self.emit(f"    raise ValueError({self.pick([repr(name + ' is empty'), repr('empty input')])})")
        else:
            self.emit(f"if {self.pick([f'not {name}', f'len({name}) == 0', f'not {name} or len({name}) < 2'])}:")
            self.emit(f"    return {self.literal(self.pick([INT, STR, LI, BOOL])).s if self.chance(0.7) else 'None'}")

    def s_break(self) -> None:
        self.emit(f"if {self.ex(BOOL, 1).s}:")
        self.emit("    break")

    def s_continue(self) -> None:
        self.emit(f"if {self.ex(BOOL, 1).s}:")
        self.emit("    continue")

    def s_try(self) -> None:
        """An operation that may raise, caught: try / except [as e] [/ else] [/ finally]."""
        kind = self.pick(["int", "index", "key", "div", "raise", "getitem"])
        risky = None
        if kind == "int":
            risky, exc = f"int({self.var(STR)})", "ValueError"
        elif kind == "index":
            t = self.pick([LI, STR, LS])
            c = self.var(t)
            risky, exc = f"{c}.index({self.ex(ELEM[t] if t != STR else STR, 1).s})", "ValueError"
        elif kind == "key":
            risky, exc = f"{self.var(DSI)}[{self.ex(STR, 1).s}]", "KeyError"
        elif kind == "div":
            risky, exc = f"{self.ex(INT, 1).at(MUL)} // {self.ex(INT, 1).at(UNARY)}", "ZeroDivisionError"
        elif kind == "getitem":
            risky, exc = f"{self.var(LI)}[{self.ex(INT, 1).s}]", "IndexError"
        else:
            exc = self.pick(["ValueError", "KeyError", "RuntimeError"])
        name = self.fresh(INT)
        self.emit("try:")
        self.ind += 1
        if risky is None:
            self.emit(f"if {self.ex(BOOL, 1).s}:")
            self.emit(f"    raise {exc}({self.ex(self.pick([STR, INT]), 1).s})")
            self.emit(f"{name} = {self.ex(INT, 1).s}")
        else:
            self.emit(f"{name} = {risky}")
        self.ind -= 1
        as_e = self.chance(0.3) and "e" not in self.sc.used
        self.emit(f"except {exc if self.chance(0.8) else '(' + exc + ', TypeError)'}{' as e' if as_e else ''}:")
        self.ind += 1
        if as_e:
            self.sc.used["e"] = "exc"
            msg = self.fresh(STR)
            self.emit(f"{msg} = {self.pick(['str(e)', 'repr(e)', 'type(e).__name__'])}")
        self.emit(f"{name} = {self.ex(INT, 2).s}")
        self.ind -= 1
        self.bind(name, INT)  # bound on both paths
        if self.chance(0.15):
            self.emit("else:")
            self.block(1)
        if self.chance(0.1):
            self.emit("finally:")
            self.block(1)

    def s_print(self) -> None:
        self.emit(f"print({self.ex(self.pick([STR, INT, LI]), 1).s})")

    def s_unpack(self) -> None:
        kind = self.pick(["swap", "divmod", "tuple", "star"])
        if kind == "swap":
            ints = self.sc.of(INT, mutable=True)
            if len(ints) < 2:
                raise Retry
            a, b = self.r.sample(ints, 2)
            self.emit(self.pick([f"{a}, {b} = {b}, {a}", f"{a}, {b} = {b}, {a} + {b}", f"{a}, {b} = {b}, {a} * 2"]))
        elif kind == "divmod":
            q, r_ = self.fresh(INT), self.fresh(INT)
            self.emit(f"{q}, {r_} = divmod({self.ex(INT, 1).s}, {self.small(2, 9).s})")
            self.bind(q, INT)
            self.bind(r_, INT)
        elif kind == "tuple":
            tv = self.var(TI)
            a = self.fresh(INT)
            self.emit(f"{a}, *_ = {tv}" if self.chance(0.3) else f"{a} = {tv}[0]")
            self.bind(a, INT)
        else:
            t = self.pick([LI, LS])
            c = self.var(t)
            h, rest = self.fresh(ELEM[t]), self.fresh(t)
            self.emit(f"{h}, *{rest} = {c}" if self.chance(0.5) else f"*{rest}, {h} = {c}")
            self.bind(h, ELEM[t])
            self.bind(rest, t)

    # -- functions -------------------------------------------------------------------------
    def params(self, n: int) -> list[tuple[str, str]]:
        out = []
        for _ in range(n):
            t = self.weighted([(self.w(6, 2), STR), (self.w(5, 5.5), LI), (self.w(2, 1.5), LS), (self.w(3, 5), INT),
                               (self.w(2, 1), DSI), (self.w(1.5, 0.7), CH), (0.5, TI), (0.3, SI), (0.3, BOOL)])
            nm = self.fresh(t)
            out.append((nm, t))
        return out

    def ret_expr(self, t: str | None = None) -> E:
        """The value returned: mostly a variable the body built from the inputs."""
        if t:
            return self.ex(t)
        if self.real and self.chance(0.4):  # an average, the commonest true division
            ints = [n for n in self.sc.of(INT) if n in self.sc.derived and n not in self.param_names]
            cs = self.sc.of(LI) + self.sc.of(LS)
            if ints and cs:
                c = self.pick(cs)
                a = self.pick(ints)
                return self.pick([E(f"round({a} / len({c}), 2) if {c} else 0.0", TERN), E(f"{a} / max(len({c}), 1)", MUL),
                                  E(f"round({a} / max(len({c}), 1), 2)")])
        vs = [n for n in self.sc.vars if self.sc.vars[n] != BOOL or self.chance(0.3)]
        assigned = [n for n in vs if n not in self.param_names]
        good = [n for n in assigned if n in self.sc.derived]
        r = self.r.random()
        if good and r < 0.6:
            return E(self.pick(good[-2:] if self.chance(0.5) else good))
        joinable = [n for n in good if self.sc.vars[n] == LS]
        if joinable and r < 0.75:
            return E(f"{self.pick([repr(''), repr(' '), repr(', '), repr('-')])}.join({self.pick(joinable)})")
        if good and len(vs) >= 2 and r < 0.8:
            a = self.pick(good)
            b = self.pick([n for n in vs if n != a])
            return E(f"{a}, {b}" if self.chance(0.5) else f"{b}, {a}")
        if assigned and r < 0.85:
            return E(self.pick(assigned))
        return self.ex(self.pick([INT, STR, LI, LS, DSI, BOOL, TI]))

    def function(self, name: str, params: list[tuple[str, str]], n_stmts: int, ret: str | None = None, indent: int = 0) -> None:
        saved = (self.sc, self.loop, self.in_while, self.block_depth, self.budget, self.ret_type)
        self.ret_type = ret
        self.sc = Scope()
        self.loop, self.in_while, self.block_depth, self.budget = 0, False, 0, n_stmts
        for nm, t in params:
            self.bind(nm, t)
            self.sc.derived[nm] = True
        self.param_names = [p for p, _ in params]
        self.ind = indent
        self.emit(f"def {name}({', '.join(p for p, _ in params)}):")
        self.ind += 1
        while self.budget > 0:
            self.stmt()
        self.emit(f"return {self.ret_expr(ret).s}")
        self.ind = indent
        self.sc, self.loop, self.in_while, self.block_depth, self.budget, self.ret_type = saved

    def helper(self) -> None:
        """A small helper that f may call, sometimes raising."""
        name = self.pick([h for h in HELPER_NAMES if h not in [x[0] for x in self.helpers]])
        ps = self.params(self.r.randint(1, 2))
        ret = self.weighted([(4, INT), (3, STR), (2, LI), (2, BOOL), (1, LS)])
        if self.chance(self.w(0.15, 0.05)):  # a validator that raises: f must catch it
            self.sc = Scope()
            for nm, t in ps:
                self.bind(nm, t)
                self.sc.derived[nm] = True
            self.param_names = [p for p, _ in ps]
            self.emit(f"def {name}({', '.join(p for p, _ in ps)}):")
            self.ind = 1
            self.emit(f"if {self.ex(BOOL).s}:")
            self.emit(f"    raise {self.pick(['ValueError', 'KeyError', 'IndexError'])}({self.ex(STR, 1).s})")
            self.emit(f"return {self.ex(ret).s}")
            self.ind = 0
            self.raising.append((name, [t for _, t in ps], ret))
        else:
            self.function(name, ps, self.r.randint(1, 3), ret)
            self.helpers.append((name, [t for _, t in ps], ret))
        self.emit("")

    def recursive(self) -> None:
        """A recursive helper from one of a few shapes; f calls it."""
        name = self.pick(["rec", "solve", "walk", "helper", "go", "count_down", "fold", "build"])
        shape = self.pick(["list_sum", "list_map", "str_rev", "int_dec", "str_count", "index", "memo", "gcd", "pal"])
        op = self.pick
        if shape == "list_sum":
            comb = op([f"xs[0] + {name}(xs[1:])", f"max(xs[0], {name}(xs[1:]))", f"(xs[0] if xs[0] % 2 else 0) + {name}(xs[1:])",
                       f"{name}(xs[1:]) * 2 + xs[0]", f"min(xs[0], {name}(xs[1:]))"])
            src = [f"def {name}(xs):", f"    if {op(['not xs', 'len(xs) == 0'])}:", f"        return {op(['0', '0', '-1'])}", f"    return {comb}"]
            sig = ([LI], INT)
        elif shape == "list_map":
            comb = op([f"[xs[0] * 2] + {name}(xs[1:])", f"{name}(xs[1:]) + [xs[0]]", f"([xs[0]] if xs[0] > 0 else []) + {name}(xs[1:])",
                       f"[xs[0] + len(xs)] + {name}(xs[1:])"])
            src = [f"def {name}(xs):", "    if not xs:", "        return []", f"    return {comb}"]
            sig = ([LI], LI)
        elif shape == "str_rev":
            comb = op([f"{name}(s[1:]) + s[0]", f"s[-1] + {name}(s[:-1])", f"s[0].upper() + {name}(s[1:])", f"(s[0] if s[0] not in 'aeiou' else '') + {name}(s[1:])",
                       f"s[0] + '-' + {name}(s[1:])"])
            src = [f"def {name}(s):", f"    if {op(['len(s) <= 1', 'not s'])}:", "        return s", f"    return {comb}"]
            sig = ([STR], STR)
        elif shape == "int_dec":
            comb = op([f"n * {name}(n - 1)", f"n + {name}(n - 1)", f"{name}(n // 2) + n % 2", f"{name}(n - 1) + {name}(n - 2)", f"1 + {name}(n // 10)"])
            base = op(["1", "n", "0"])
            src = [f"def {name}(n):", f"    if n <= {op(['0', '1'])}:", f"        return {base}", f"    return {comb}"]
            sig = ([INT], INT)
        elif shape == "str_count":
            src = [f"def {name}(s, c):", "    if not s:", "        return 0", f"    return (1 if s[0] == c else 0) + {name}(s[1:], c)"]
            sig = ([STR, CH], INT)
        elif shape == "index":
            src = [f"def {name}(xs, i):", "    if i >= len(xs):", f"        return {op(['0', '1'])}", f"    return {op(['xs[i] * (i + 1)', 'xs[i]', 'xs[i] % 3'])} {op(['+', '-', '+'])} {name}(xs, i + {op(['1', '2'])})"]
            sig = ([LI, INT], INT)
        elif shape == "memo":
            src = [f"def {name}(n, memo):", "    if n in memo:", "        return memo[n]", "    if n < 2:", "        return n",
                   f"    memo[n] = {name}(n - 1, memo) + {name}(n - 2, memo)", "    return memo[n]"]
            sig = ([INT, "memo"], INT)
        elif shape == "gcd":
            src = [f"def {name}(a, b):", "    if b == 0:", "        return a", f"    return {name}(b, a % b)"]
            sig = ([INT, INT], INT)
        else:
            src = [f"def {name}(s, lo, hi):", "    if lo >= hi:", "        return True", "    if s[lo] != s[hi]:", "        return False",
                   f"    return {name}(s, lo + 1, hi - 1)"]
            sig = ([STR, "lohi"], BOOL)
        self.lines += src + [""]
        self.rec = (name, shape, sig)

    def rec_call(self) -> E:
        name, shape, (pts, ret) = self.rec
        if shape == "memo":
            return E(f"{name}({self.ex(INT, 1).at(MUL)} % {self.r.randint(8, 20)}, {{}})", ATOM)
        if shape == "int_dec":
            return E(f"{name}({self.ex(INT, 1).at(MUL)} % {self.r.randint(5, 7) if 'n - 2' not in ''.join(self.lines) else 6})")
        if shape == "index":
            return E(f"{name}({self.var(LI)}, 0)")
        if shape == "pal":
            s = self.var(STR)
            return E(f"{name}({s}, 0, len({s}) - 1)")
        if shape == "gcd":
            return E(f"{name}({self.ex(INT, 1).s}, {self.ex(INT, 1).s})")
        return E(f"{name}({', '.join(self.ex(t, 1).s if t != LI else self.var(LI) for t in pts)})")

    def klass(self) -> None:
        """A small class with state; f drives it."""
        cname = self.pick(["Counter", "Stack", "Box", "Acc", "Tracker", "Buffer", "Ledger", "Bag"])
        kind = self.pick(["stack", "counter", "acc"])
        L = self.lines
        L.append(f"class {cname}:")
        if kind == "stack":
            L += ["    def __init__(self):", "        self.items = []", "",
                  "    def push(self, x):", f"        {self.pick(['self.items.append(x)', 'self.items.insert(0, x)'])}", "",
                  "    def pop(self):", f"        return self.items.pop() if self.items else {self.pick(['None', '0', '-1'])}", "",
                  "    def __repr__(self):", f"        return f'{cname}({{self.items}})'", ""]
            self.cls = (cname, kind, "push", "pop", LI)
        elif kind == "counter":
            L += ["    def __init__(self):", "        self.counts = {}", "",
                  "    def add(self, key):", f"        self.counts[key] = self.counts.get(key, 0) + {self.pick(['1', '1', '2'])}", "",
                  "    def top(self):", f"        return {self.pick(['max(self.counts, key=self.counts.get)', 'sorted(self.counts.items())', 'len(self.counts)'])} if self.counts else None", "",
                  "    def __repr__(self):", f"        return f'{cname}({{self.counts}})'", ""]
            self.cls = (cname, kind, "add", "top", STR)
        else:
            L += ["    def __init__(self, start):", "        self.total = start", "        self.history = []", "",
                  "    def apply(self, x):", f"        if x {self.pick(['> 0', '% 2 == 0', '< 5'])}:", f"            self.total {self.pick(['+=', '-=', '+='])} x", "        else:",
                  f"            self.total {self.pick(['-= 1', '*= 2', '+= 1'])}", "        self.history.append(self.total)", "        return self.total", "",
                  "    def __repr__(self):", f"        return f'{cname}({{self.total}}, {{self.history}})'", ""]
            self.cls = (cname, kind, "apply", None, INT)

    def class_use(self) -> None:
        cname, kind, put, get, et = self.cls
        obj = self.pick(["obj", "box", "acc", "st", "tracker", "c"])
        if obj in self.sc.used:
            obj = "obj"
        src_t = {INT: LI, STR: self.pick([STR, LS]), LI: LI}[et]
        try:
            src = self.var(src_t)
        except Retry:
            src = self.literal(src_t).s
        x = {LI: "x", LS: "w", STR: "ch"}[src_t]
        self.emit(f"{obj} = {cname}({self.ex(INT, 1).s if kind == 'acc' else ''})")
        self.emit(f"for {x} in {src}:")
        self.emit(f"    {obj}.{put}({x})")
        self.sc.used[obj] = "obj"
        if get:
            r = self.fresh(self.pick([INT]) if kind == "stack" else INT)
            self.emit(f"{r} = {obj}.{get}()")
            self.sc.used[r] = "any"
            self.result_hint = f"{r}, {obj}" if self.chance(0.4) else r
        else:
            self.result_hint = self.pick([f"{obj}.total", f"{obj}.history", f"{obj}", f"{obj}.total, len({obj}.history)"])

    def program(self) -> str:
        r = self.r
        self.lines, self.helpers, self.raising = [], [], []
        self.rec = self.cls = None
        self.result_hint = None
        self.param_names = []
        self.ret_type = None
        consts = []
        if self.real and self.chance(0.25):  # a module constant above everything, which f reads
            name, t, value = self.pick([("LIMIT", INT, str(self.r.randint(2, 10))), ("BASE", INT, self.pick(["2", "10", "16"])),
                                        ("THRESHOLD", INT, str(self.r.randint(0, 5))), ("VOWELS", STR, "'aeiou'"),
                                        ("SEPARATOR", STR, self.pick(["', '", "'-'", "' '"])), ("DIGITS", STR, "'0123456789'"),
                                        ("ALPHABET", STR, "'abcdefghijklmnopqrstuvwxyz'"), ("PUNCTUATION", STR, "'.,;:!?'")])
            self.lines += [f"{name} = {value}", ""]
            consts.append((name, t))
        plan = r.random()
        if plan < self.w(0.08, 0.06):
            self.klass()
            self.lines.append("")
        elif plan < self.w(0.2, 0.26):
            self.recursive()
        for _ in range(self.weighted([(6, 0), (3, 1), (1, 2)])):
            self.helper()
        # f itself
        ps = self.params(self.weighted([(4, 1), (4, 2), (2, 3)]))
        self.sc = Scope()
        for nm, t in ps:
            self.bind(nm, t)
            self.sc.derived[nm] = True
        self.param_names = [p for p, _ in ps]
        for name, t in consts:  # readable, never assigned: an assignment would make it local to f
            self.bind(name, t)
            self.sc.frozen[name] = 1
        self.loop, self.in_while, self.block_depth = 0, False, 0
        self.budget = self.weighted([(1, 2), (3, 3), (3, 4), (2, 5), (1, 7)])
        self.ind = 0
        self.defaults = []
        if self.real and self.chance(0.3):  # a parameter with a default, which most calls leave out
            t = self.pick([INT, INT, STR, CH, BOOL])
            nm = self.fresh(t)
            self.defaults.append((nm, t, self.pick({INT: ["0", "1", "2", "3", "10"], STR: ["' '", "','", "'-'", "''"],
                                                    CH: ["' '", "','", "'*'"], BOOL: ["False", "True"]}[t])))
            self.bind(nm, t)
            self.sc.derived[nm] = True
            self.param_names.append(nm)
        self.emit(f"def f({', '.join([p for p, _ in ps] + [f'{n}={v}' for n, _, v in self.defaults])}):")
        self.ind = 1
        if self.real and self.chance(0.3):
            self.guard(ps)
        # accumulators first, as people write them
        kinds = [(4, LI), (3, INT), (3, STR), (2, DSI), (1, LS), (0.5, SI)] + ([(1.2, OPT), (2, DL), (2, LP)] if self.real else [])
        for _ in range(self.weighted([(2, 0), (4, 1), (2, 2)])):
            t = self.weighted(kinds)
            nm = self.fresh(t)
            self.emit(f"{nm} = {ex if (ex := self.pick({INT: ['0', '0', '1'], STR: [repr(''), repr('')], LI: ['[]'], LS: ['[]'], DSI: ['{}'], SI: ['set()'], OPT: ['None'], DL: ['{}'], LP: ['[]']}[t])) else ''}")
            self.bind(nm, t)
        if self.cls:
            self.class_use()
        elif self.chance(0.75):  # most functions worth debugging loop over their input
            self.budget -= 1
            for _ in range(10):
                state = self.save()
                try:
                    (self.s_for if self.chance(0.8) else self.s_while)()
                    break
                except Retry:
                    self.restore(state)
        special = self.raising or self.rec
        while self.budget > 0:
            if special and self.chance(0.5):
                try:
                    self.use_special()
                    special = None
                    continue
                except Retry:
                    pass
            self.stmt()
        if special:
            try:
                self.use_special()
            except Retry:
                pass
        if self.result_hint:
            self.emit(f"return {self.result_hint}")
        else:
            self.emit(f"return {self.ret_expr().s}")
        self.ps = ps
        return "\n".join(self.lines) + "\n"

    def use_special(self) -> None:
        if self.rec:
            e = self.rec_call()
            t = self.rec[2][1]
            nm = self.fresh(t)
            self.emit(f"{nm} = {e.s}")
            self.bind(nm, t)
        if self.raising:
            name, pts, ret = self.raising[0]
            nm = self.fresh(ret)
            self.emit("try:")
            self.emit(f"    {nm} = {name}({', '.join(self.ex(t, 1).s for t in pts)})")
            exc = self.pick(["ValueError", "KeyError", "IndexError", "Exception"])
            self.emit(f"except {exc}{self.pick(['', ' as e'])}:")
            self.emit(f"    {nm} = {self.literal(ret).s}")
            self.bind(nm, ret)


# ---------------------------------------------------------------------------------------------
# Inputs of each type, in styles that CRUXEval-like functions meet.
def gen_value(r: random.Random, t: str):
    if t == INT:
        return r.choice([r.randint(0, 9), r.randint(0, 30), r.randint(-10, 10), r.randint(10, 999)])
    if t == CH:
        return r.choice("aeioxz -_,#.:1!" + "bcdlmnrst")
    if t == BOOL:
        return r.random() < 0.5
    if t == STR:
        style = r.random()
        n = r.choice([0, 1, 3, 4, 5, 6, 7, 8, 10, 12])
        if style < 0.3:  # random letters, sometimes from a small alphabet so counts repeat
            alpha = r.choice(["abcdefghijklmnopqrstuvwxyz", "abcde", "aeiouxyz", "abAB", "xyz"])
            return "".join(r.choice(alpha) for _ in range(n))
        if style < 0.5:  # words
            return r.choice([" ", " ", ",", "-", ", ", "_"]).join(r.choice(WORDS) for _ in range(r.randint(1, 4)))
        if style < 0.6:
            return "".join(r.choice("0123456789") for _ in range(r.randint(1, 5)))
        if style < 0.75:  # mixed case and punctuation
            return "".join(r.choice("aBcDeFgH123 -_.!#") for _ in range(n))
        if style < 0.85:
            w = r.choice(WORDS)
            return r.choice([w.upper(), w.title(), " " + w + " ", w + "!", w + w[::-1], w + "123"])
        return "".join(r.choice("abcxyz ") for _ in range(n)).strip() or r.choice(WORDS)
    if t == LI:
        n = r.choice([0, 1, 2, 3, 4, 4, 5, 5, 6, 7, 8])
        hi = r.choice([5, 9, 20, 100])
        return [r.randint(-3 if r.random() < 0.2 else 0, hi) for _ in range(n)]
    if t == LS:
        n = r.choice([0, 1, 2, 3, 3, 4, 5])
        if r.random() < 0.25:
            return [r.choice("abcxyz") for _ in range(n)]
        return [r.choice(WORDS) for _ in range(n)]
    if t == DSI:
        return {r.choice(WORDS): r.randint(-2, 12) for _ in range(r.choice([0, 1, 2, 3, 3, 4, 5]))}
    if t == SI:
        return set(r.randint(0, 9) for _ in range(r.randint(0, 5)))
    if t == TI:
        return tuple(r.randint(0, 9) for _ in range(r.choice([2, 2, 3])))
    raise ValueError(t)


def gen_input(r: random.Random, types: list[str], defaults: list[tuple[str, str, str]] = ()) -> str:
    """An argument text for parameters of these types; now and then a defaulted one given by keyword."""
    text = ", ".join(repr(gen_value(r, t)) for t in types)
    if defaults and r.random() < 0.3:
        name, t, _ = r.choice(defaults)
        value = {INT: lambda: r.randint(1, 4), STR: lambda: r.choice("-,_ "), CH: lambda: r.choice("-,_*"), BOOL: lambda: True}[t]()
        text += f"{', ' if text else ''}{name}={value!r}"
    return text


# ---------------------------------------------------------------------------------------------
# Entry names. CRUXEval calls its function `f`, a user's functions have names: a share of the
# generated functions is renamed (after every check, which sees `f`), so the model learns to
# follow the name in the call frame instead of expecting `f`.
ENTRY_VERBS = ["count", "find", "build", "merge", "parse", "clean", "split", "group", "scan", "normalize",
               "encode", "summarize", "collect", "rotate", "compress", "check", "update", "render", "transform",
               "process", "solve", "compute", "apply", "extract", "tally", "shift", "pack", "rank", "dedupe",
               "score", "convert", "strip", "balance", "match", "walk", "fold", "pick", "trim", "expand", "mask"]
ENTRY_NOUNS = ["words", "items", "values", "text", "tokens", "pairs", "counts", "data", "records", "chars",
               "digits", "lines", "scores", "names", "keys", "entries", "parts", "list", "string", "numbers"]


def entry_name(r: random.Random, code: str) -> str:
    """A function name for the entry that clashes with no word of the program and no builtin."""
    import builtins
    used = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", code)) | set(dir(builtins))
    while True:
        name = r.choice(ENTRY_VERBS) + ("_" + r.choice(ENTRY_NOUNS) if r.random() < 0.7 else "")
        if name not in used:
            return name

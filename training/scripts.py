"""Scripts as users write them, for training: classes with `__init__`, methods and attributes, instances
with readable reprs (a `__repr__`, a dataclass), helper functions, `try` / `except` / `raise` across calls,
`print` with f-strings, and module-level code that builds objects and calls their methods. Python 3,
standard library only.

  python3 -m training.scripts --count N --seed S --out DIR [--max-events 400] [--raising 0.1] [--quiet]

Writes DIR/s<seed>_<k>.py, one script each, which `ndbg data --programs DIR` runs whole (its module
level traced, as a user's script is debugged). The generated functions of training/programs.py are
calls of one function; a user's script is a module, and the adapter shows the model its
`<module>` frame, its objects' reprs and its exceptions. Each script is composed from a few
domains (an account, an inventory of records, a queue, points, a parser, grades, a state machine):
names, values, guards, the repr's style and the order of the module's statements are drawn from the
seed. Every script is run once here (in this process, under sys.settrace, its output captured) and
kept only when it ends within `--max-events` events of its own code, prints at most 600 characters,
shows no memory address (every class has a readable repr, but for one in 10 that keeps the
default) and, unless it is one of the `--raising` share, ends without an uncaught exception. The
same seed gives the same files, byte for byte. No line comes from an evaluation set: the domains
are written here, and `test/python/test_scripts.py` checks that no script is one of
test/fixtures/userstyle.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import re
import sys
from pathlib import Path

OWNERS = ["ada", "bo", "cy", "dee", "eli", "fay", "gus", "hana", "ivo", "jo", "kim", "lu", "max", "noa", "ola", "pia"]
ITEMS = ["apple", "bread", "cheese", "eggs", "flour", "grapes", "honey", "jam", "kiwi", "lemon", "milk", "nuts",
         "oats", "pears", "rice", "salt", "tea", "yogurt", "pen", "book", "lamp", "cup", "fork", "plate"]
WORDS = ["alpha", "beta", "gamma", "delta", "red", "green", "blue", "north", "south", "fast", "slow", "open", "closed"]


class Writer:
    def __init__(self):
        self.lines: list[str] = []

    def add(self, *lines: str) -> None:
        self.lines.extend(lines)

    def blank(self, n: int = 1) -> None:
        self.lines.extend([""] * n)

    def text(self) -> str:
        while self.lines and not self.lines[-1]:
            self.lines.pop()
        return "\n".join(self.lines) + "\n"


class Script:
    """One script: definitions of one or two domains, then module-level code that uses them."""

    def __init__(self, r: random.Random, raising: bool):
        self.r = r
        self.raising = raising
        self.defs = Writer()
        self.main: list[str] = []        # module-level statements (or main()'s body)
        self.uses_dataclass = False
        self.printed = 0

    def pick(self, seq):
        return self.r.choice(seq)

    def chance(self, p: float) -> bool:
        return self.r.random() < p

    def names(self, pool, k):
        return self.r.sample(pool, k)

    def repr_lines(self, cls: str, fields: list[str]) -> list[str]:
        """A __repr__ in one of the styles people write, or nothing (the default object repr) one time in 10."""
        if self.chance(0.1):
            return []
        style = self.r.random()
        if style < 0.5:
            inner = ", ".join(f"{{self.{f}!r}}" for f in fields)
        elif style < 0.8:
            inner = ", ".join(f"{f}={{self.{f}!r}}" for f in fields)
        else:
            inner = ", ".join(f"{{self.{f}}}" for f in fields)
        return ["", "    def __repr__(self):", f"        return f\"{cls}({inner})\""]

    def out(self, expr: str) -> str:
        self.printed += 1
        return f"print({expr})"

    # ---- domains: each writes its definitions and returns module-level statements using them ----

    def account(self) -> list[str]:
        C = self.pick(["Account", "Wallet", "Budget", "PiggyBank", "Card"])
        bal = self.pick(["balance", "funds", "total", "amount"])
        dep, wd = self.pick([("deposit", "withdraw"), ("add", "spend"), ("put", "take"), ("credit", "debit")])
        err = self.pick(["InsufficientFunds", "OverdraftError", "BalanceError", None])
        hist = self.chance(0.5)
        D = self.defs
        if err:
            if self.chance(0.5):
                D.add(f"class {err}(Exception):", "    pass")
            else:
                D.add(f"class {err}(Exception):", "    def __init__(self, needed):",
                      "        super().__init__(f\"short by {needed}\")", "        self.needed = needed")
            D.blank(2)
        D.add(f"class {C}:", f"    def __init__(self, owner, {bal}=0):", "        self.owner = owner", f"        self.{bal} = {bal}")
        if hist:
            D.add("        self.history = []")
        D.blank()
        D.add(f"    def {dep}(self, value):")
        if self.chance(0.6):
            D.add("        if value <= 0:", f"            raise ValueError(f\"{dep}: {{value}} is not positive\")")
        D.add(f"        self.{bal} += value")
        if hist:
            D.add(f"        self.history.append(('{dep}', value))")
        D.add(f"        return self.{bal}")
        D.blank()
        D.add(f"    def {wd}(self, value):", f"        if value > self.{bal}:")
        if err and "needed" in "\n".join(D.lines):
            D.add(f"            raise {err}(value - self.{bal})")
        else:
            D.add(f"            raise {err or 'ValueError'}(f\"cannot {wd} {{value}}, only {{self.{bal}}} left\")")
        D.add(f"        self.{bal} -= value")
        if hist:
            D.add(f"        self.history.append(('{wd}', value))")
        D.add(f"        return self.{bal}")
        D.add(*self.repr_lines(C, ["owner", bal]))
        D.blank(2)
        o1, o2 = self.names(OWNERS, 2)
        a, b = f"{o1}_acct" if self.chance(0.5) else "acct", f"{o2}_acct"
        if a == b:
            b = "other"
        s = [f"{a} = {C}({o1!r}, {self.r.randint(0, 50)})"]
        if self.chance(0.6):
            s.append(f"{b} = {C}({o2!r})")
            two = True
        else:
            two = False
        catch = err or "ValueError"
        ops = [(self.pick([dep, wd]), self.r.randint(1, 40) * self.pick([1, 1, 1, -1])) for _ in range(self.r.randint(2, 5))]
        if self.chance(0.5):
            s.append(f"for kind, value in {ops!r}:")
            s.append("    try:")
            s.append(f"        if kind == {dep!r}:")
            s.append(f"            {a}.{dep}(value)")
            s.append("        else:")
            s.append(f"            {a}.{wd}(value)")
            exc = self.pick([f"({catch}, ValueError) as e" if catch != "ValueError" else "ValueError as e", "Exception as e"])
            s.append(f"    except {exc}:")
            s.append("        " + self.out(f"f\"skipped {{kind}} {{value}}: {{e}}\""))
        else:
            for k, v in ops[:3]:
                s.append("try:")
                s.append(f"    {a}.{k}({v})")
                s.append(f"except {'Exception' if self.chance(0.3) else ('(' + catch + ', ValueError)' if catch != 'ValueError' else 'ValueError')} as e:")
                s.append("    " + self.out(f"f\"{k} {v} failed: {{e}}\""))
        if two:
            amt = self.r.randint(1, 30)
            fn = self.pick(["transfer", "move", "send"])
            self.defs.add(f"def {fn}(src, dst, value):", f"    src.{wd}(value)", f"    dst.{dep}(value)", "    return src, dst")
            self.defs.blank(2)
            if self.raising and self.chance(0.5):
                s.append(f"{fn}({a}, {b}, {amt + 1000})")
                return s
            s.append("try:")
            s.append(f"    {fn}({a}, {b}, {amt})")
            s.append(f"except {catch} as e:")
            s.append("    " + self.out("f\"transfer refused: {e}\""))
            s.append(self.out(f"{a}, {b}"))
        s.append(self.out(f"f\"{{{a}.owner}} has {{{a}.{bal}}}\""))
        if hist and self.chance(0.5):
            s.append(self.out(f"len({a}.history)"))
        return s

    def inventory(self) -> list[str]:
        rec = self.pick(["Item", "Product", "Entry", "Line"])
        box = self.pick(["Inventory", "Cart", "Order", "Basket", "Stock"])
        price_t = self.pick(["float", "int"])
        D = self.defs
        if self.chance(0.65):
            self.uses_dataclass = True
            D.add("@dataclass", f"class {rec}:", "    name: str", f"    price: {price_t}", "    qty: int = 1")
            if self.chance(0.7):
                D.blank()
                D.add("    def cost(self):", "        return self.price * self.qty")
                has_cost = True
            else:
                has_cost = False
        else:
            D.add(f"class {rec}:", "    def __init__(self, name, price, qty=1):", "        self.name = name", "        self.price = price",
                  "        self.qty = qty", "", "    def cost(self):", "        return self.price * self.qty")
            D.add(*self.repr_lines(rec, ["name", "price", "qty"]))
            has_cost = True
        D.blank(2)
        add, remove = self.pick([("add", "remove"), ("put", "drop"), ("add_item", "remove_item")])
        D.add(f"class {box}:", "    def __init__(self):", "        self.items = []", "",
              f"    def {add}(self, item):")
        if self.chance(0.5):
            D.add("        for existing in self.items:", "            if existing.name == item.name:",
                  "                existing.qty += item.qty", "                return existing")
        D.add("        self.items.append(item)", "        return item", "",
              f"    def {remove}(self, name):", "        for i, item in enumerate(self.items):", "            if item.name == name:",
              "                return self.items.pop(i)", f"        raise KeyError(name)", "",
              "    def total(self):")
        if has_cost:
            D.add("        return sum(item.cost() for item in self.items)" if self.chance(0.5) else
                  "        t = 0\n        for item in self.items:\n            t += item.cost()\n        return t")
        else:
            D.add("        return sum(item.price * item.qty for item in self.items)")
        if self.chance(0.5):
            D.add("", "    def __len__(self):", "        return len(self.items)")
        D.add(*self.repr_lines(box, ["items"]))
        D.blank(2)
        v = self.pick(["cart", "inv", "order", "basket", "stock"])
        names = self.names(ITEMS, self.r.randint(2, 4))

        def price():
            return repr(round(self.r.uniform(0.5, 9.5), self.pick([1, 2]))) if price_t == "float" else str(self.r.randint(1, 20))
        s = [f"{v} = {box}()"]
        if self.chance(0.5):
            rows = [(n, price(), self.r.randint(1, 4)) for n in names]
            s.append(f"for name, price, qty in [{', '.join(f'({n!r}, {p}, {q})' for n, p, q in rows)}]:")
            s.append(f"    {v}.{add}({rec}(name, price, qty))")
        else:
            for n in names:
                q = self.r.randint(1, 4)
                s.append(f"{v}.{add}({rec}({n!r}, {price()}{', ' + str(q) if q > 1 else ''}))")
        if self.chance(0.5):
            s.append(f"{v}.{add}({rec}({names[0]!r}, {price()}, {self.r.randint(1, 3)}))")
        gone = self.pick(names + [self.pick(ITEMS)])
        if self.raising and gone not in names and self.chance(0.5):
            s.append(f"{v}.{remove}({gone!r})")
        else:
            s += ["try:", f"    removed = {v}.{remove}({gone!r})", "    " + self.out("f\"removed {removed}\""),
                  "except KeyError as e:", "    " + self.out("f\"no such item: {e}\"")]
        s.append(self.out(self.pick([f"{v}", f"{v}.items", f"f\"total: {{{v}.total()}}\"", f"round({v}.total(), 2)"])))
        if self.chance(0.4):
            s.append(f"names = [item.name for item in {v}.items]")
            s.append(self.out("names"))
        return s

    def queue(self) -> list[str]:
        C = self.pick(["Queue", "Stack", "TaskList", "Pipeline"])
        fifo = C in ("Queue", "TaskList", "Pipeline") if self.chance(0.8) else C == "Stack"
        push, pop = self.pick([("push", "pop"), ("enqueue", "dequeue"), ("add", "next"), ("put", "get")])
        err = self.pick(["EmptyError", None])
        D = self.defs
        if err:
            D.add(f"class {err}(Exception):", "    pass")
            D.blank(2)
        D.add(f"class {C}:", "    def __init__(self, limit=None):", "        self.items = []", "        self.limit = limit", "",
              f"    def {push}(self, x):", "        if self.limit is not None and len(self.items) >= self.limit:",
              f"            raise OverflowError(f\"{C.lower()} is full ({{self.limit}})\")", "        self.items.append(x)", "",
              f"    def {pop}(self):", "        if not self.items:", f"            raise {err or 'IndexError'}(\"{pop} from an empty {C.lower()}\")",
              f"        return self.items.pop({'0' if fifo else ''})", "", "    def is_empty(self):", "        return not self.items")
        D.add(*self.repr_lines(C, ["items"]))
        D.blank(2)
        v = self.pick(["q", "tasks", "jobs", "work"])
        limit = self.r.randint(2, 5) if self.chance(0.5) else None
        xs = self.names(WORDS, self.r.randint(2, 4)) if self.chance(0.5) else [self.r.randint(1, 9) for _ in range(self.r.randint(2, 5))]
        s = [f"{v} = {C}({limit if limit is not None else ''})"]
        s += [f"for x in {xs!r}:", "    try:", f"        {v}.{push}(x)", "    except OverflowError as e:", "        " + self.out("e")]
        s.append("done = []")
        if self.chance(0.5):
            s += [f"while not {v}.is_empty():", f"    done.append({v}.{pop}())"]
        else:
            n = len(xs) + self.r.randint(0, 1)
            s += [f"for _ in range({n}):", "    try:", f"        done.append({v}.{pop}())",
                  f"    except {err or 'IndexError'} as e:", "        " + self.out("f\"stopped: {e}\""), "        break"]
        s.append(self.out(self.pick(["done", f"done, {v}", "f\"{len(done)} done\""])))
        if self.raising and self.chance(0.5):
            s.append(f"{v}.{pop}()")
        return s

    def points(self) -> list[str]:
        C = self.pick(["Point", "Vector", "Pos"])
        D = self.defs
        if self.chance(0.6):
            self.uses_dataclass = True
            D.add("@dataclass", f"class {C}:", "    x: int", "    y: int")
        else:
            D.add(f"class {C}:", "    def __init__(self, x, y):", "        self.x = x", "        self.y = y")
            D.add(*(self.repr_lines(C, ["x", "y"]) or ["", "    def __repr__(self):", f"        return f\"{C}({{self.x}}, {{self.y}})\""]))
        D.blank()
        D.add("    def moved(self, dx, dy):", f"        return {C}(self.x + dx, self.y + dy)", "",
              "    def dist2(self, other):", "        return (self.x - other.x) ** 2 + (self.y - other.y) ** 2")
        D.blank(2)
        fn = self.pick(["path_length", "walk", "route"])
        D.add(f"def {fn}(start, steps):", "    here = start", "    visited = [here]", "    for dx, dy in steps:",
              "        here = here.moved(dx, dy)", "        visited.append(here)", "    return visited")
        D.blank(2)
        steps = [(self.r.randint(-3, 3), self.r.randint(-3, 3)) for _ in range(self.r.randint(2, 4))]
        s = [f"origin = {C}({self.r.randint(-2, 2)}, {self.r.randint(-2, 2)})", f"trail = {fn}(origin, {steps!r})",
             "far = max(trail, key=lambda p: p.dist2(origin))" if self.chance(0.5) else "last = trail[-1]"]
        s.append(self.out(self.pick(["trail", "f\"farthest: {far}\"" if "far =" in s[-1] else "f\"ended at {last}\"",
                                     "len(trail)"])))
        return s

    def parser(self) -> list[str]:
        fn = self.pick(["parse_pair", "parse_line", "read_setting", "split_entry"])
        sep = self.pick(["=", ":", ","])
        D = self.defs
        D.add(f"def {fn}(text):", f"    if {sep!r} not in text:", f"        raise ValueError(f\"no {sep!r} in {{text!r}}\")",
              f"    key, value = text.split({sep!r}, 1)", "    return key.strip(), int(value)")
        D.blank(2)
        loader = self.pick(["load", "parse_all", "read_config"])
        D.add(f"def {loader}(lines):", "    result = {}", "    errors = []", "    for line in lines:", "        try:",
              f"            key, value = {fn}(line)", "        except ValueError as e:", "            errors.append(str(e))",
              "            continue", "        result[key] = value", "    return result, errors")
        D.blank(2)
        lines = []
        for w in self.names(WORDS, self.r.randint(2, 4)):
            kind = self.r.random()
            if kind < 0.6:
                lines.append(f"{w}{sep}{self.r.randint(0, 99)}")
            elif kind < 0.8:
                lines.append(f"{w}{sep}{self.pick(['x', 'ten', '4.5', ''])}")
            else:
                lines.append(w)
        s = [f"settings, problems = {loader}({lines!r})", self.out("settings")]
        s.append(self.out("f\"{len(problems)} bad lines\"") if self.chance(0.5) else "for p in problems:\n    " + self.out("p"))
        return s

    def grades(self) -> list[str]:
        D = self.defs
        avg = self.pick(["average", "mean", "avg"])
        D.add(f"def {avg}(scores):", "    if not scores:", f"        raise ValueError(\"{avg} of no scores\")",
              "    return sum(scores) / len(scores)")
        D.blank(2)
        cut = sorted(self.r.sample(range(50, 95), 3), reverse=True)
        D.add("def letter(score):", f"    if score >= {cut[0]}:", "        return 'A'", f"    elif score >= {cut[1]}:",
              "        return 'B'", f"    elif score >= {cut[2]}:", "        return 'C'", "    return 'D'")
        D.blank(2)
        people = self.names(OWNERS, self.r.randint(2, 4))
        book = {p: [self.r.randint(40, 100) for _ in range(self.r.randint(0 if self.chance(0.3) else 1, 3))] for p in people}
        s = [f"scores = {book!r}", "report = {}", "for name, marks in scores.items():", "    try:",
             f"        report[name] = letter({avg}(marks))", "    except ValueError as e:", "        " + self.out("f\"{name}: {e}\""),
             "        report[name] = None"]
        s.append(self.out(self.pick(["report", "f\"report: {report}\""])))
        return s

    def machine(self) -> list[str]:
        C = self.pick(["Door", "Order", "Ticket", "Light", "Task"])
        states = {"Door": ["closed", "open", "locked"], "Order": ["new", "paid", "shipped"], "Ticket": ["open", "doing", "done"],
                  "Light": ["off", "on", "broken"], "Task": ["todo", "doing", "done"]}[C]
        moves = {states[0]: [states[1]], states[1]: [states[2], states[0]], states[2]: [states[1]] if C != "Order" else []}
        D = self.defs
        D.add(f"class {C}:", f"    MOVES = {moves!r}", "", "    def __init__(self, name):", "        self.name = name",
              f"        self.state = {states[0]!r}", "        self.log = []", "",
              "    def go(self, new):", "        if new not in self.MOVES[self.state]:",
              "            raise RuntimeError(f\"{self.name}: cannot go from {self.state} to {new}\")",
              "        self.log.append((self.state, new))", "        self.state = new", "        return self")
        D.add(*self.repr_lines(C, ["name", "state"]))
        D.blank(2)
        v = C.lower()
        seq = [self.pick(states) for _ in range(self.r.randint(2, 4))]
        s = [f"{v} = {C}({self.pick(WORDS)!r})", f"for target in {seq!r}:", "    try:", f"        {v}.go(target)",
             "    except RuntimeError as e:", "        " + self.out("e")]
        s.append(self.out(self.pick([f"{v}", f"{v}.log", f"f\"{{{v}.name}} is {{{v}.state}}\""])))
        return s

    DOMAINS = ("account", "inventory", "queue", "points", "parser", "grades", "machine")

    def build(self) -> str:
        k = 1 if self.chance(0.6) else 2
        chosen = self.r.sample(self.DOMAINS, k)
        body: list[str] = []
        for d in chosen:
            body += getattr(self, d)()
        head = []
        if self.uses_dataclass:
            head = ["from dataclasses import dataclass", "", ""]
        text = "\n".join(head) + "\n" if head else ""
        text += self.defs.text()
        style = self.r.random()
        if style < 0.6:  # module-level code
            text += "\n\n" + "\n".join(body) + "\n"
        else:  # a main() that the module calls
            ind = ["    " + ln.replace("\n", "\n    ") if ln else ln for ln in body]
            call = "main()" if style < 0.8 else 'if __name__ == "__main__":\n    main()'
            text += "\n\ndef main():\n" + "\n".join(ind) + "\n\n\n" + call + "\n"
        return text


# ---- running a script once, here ----

_ADDRESS = re.compile(r" at 0x[0-9a-f]+>")


def check(code: str, max_events: int, max_print: int = 600) -> dict:
    """Runs the script in this process under sys.settrace with a fresh module namespace: {"ok", "events", "raised"?,
    "output"} or {"ok": False, "why"}."""
    events = 0

    class Budget(Exception):
        pass

    def tr(frame, event, arg):
        nonlocal events
        if frame.f_code.co_filename != "<script>":
            return None
        events += 1
        if events > max_events:
            raise Budget()
        return tr

    buf = io.StringIO()
    g = {"__name__": "__main__", "__builtins__": __builtins__}
    raised = None
    mod = sys.modules["__main__"]
    try:
        code_obj = compile(code, "<script>", "exec")
    except SyntaxError as e:
        return {"ok": False, "why": f"syntax: {e}"}
    # dataclasses reads the class's module from sys.modules: give it this script's namespace while it runs
    fake = type(sys)("__main__")
    fake.__dict__.update(g)
    g = fake.__dict__
    sys.modules["__main__"] = fake
    try:
        with contextlib.redirect_stdout(buf):
            sys.settrace(tr)
            try:
                exec(code_obj, g)
            except Budget:
                return {"ok": False, "why": "events"}
            except Exception as e:  # noqa: BLE001 - the script's own exception is a result
                raised = repr(e)
            finally:
                sys.settrace(None)
    finally:
        sys.modules["__main__"] = mod
    out = buf.getvalue()
    if len(out) > max_print:
        return {"ok": False, "why": "output"}
    if _ADDRESS.search(out):
        return {"ok": False, "why": "address"}
    if events < 10:
        return {"ok": False, "why": "few-events"}
    return {"ok": True, "events": events, "output": out, **({"raised": raised} if raised else {})}


def generate(count: int, seed: int, max_events: int, raising: float) -> tuple[list[tuple[str, str]], dict]:
    """[(name, code)] of `count` scripts and a summary."""
    r = random.Random(seed)
    kept, seen = [], set()
    why: dict[str, int] = {}
    n_raise, events = 0, []
    tries = 0
    while len(kept) < count and tries < count * 20:
        tries += 1
        want_raise = n_raise < raising * count and r.random() < raising * 1.5
        code = Script(random.Random(r.getrandbits(64)), want_raise).build()
        if code in seen:
            why["duplicate"] = why.get("duplicate", 0) + 1
            continue
        res = check(code, max_events)
        if not res["ok"]:
            why[res["why"]] = why.get(res["why"], 0) + 1
            continue
        if "raised" in res:
            if n_raise >= raising * count:
                why["raises"] = why.get("raises", 0) + 1
                continue
            n_raise += 1
        seen.add(code)
        events.append(res["events"])
        kept.append((f"s{seed}_{len(kept)}", code))
    events.sort()
    summary = {"scripts": len(kept), "candidates": tries, "raising": n_raise, "rejected": why,
               "events": {"mean": round(sum(events) / max(len(events), 1), 1), "median": events[len(events) // 2] if events else 0,
                          "max": events[-1] if events else 0}}
    return kept, summary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m training.scripts", description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--out", required=True,
                    help="a folder (one NAME.py a script), or FILE.jsonl: one line a script, as `ndbg eval` reads them")
    ap.add_argument("--max-events", type=int, default=400)
    ap.add_argument("--raising", type=float, default=0.1, help="share of scripts that may end in an uncaught exception")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)
    kept, summary = generate(a.count, a.seed, a.max_events, a.raising)
    out = Path(a.out)
    if out.suffix == ".jsonl":
        # Data, not code: the scripts in name order, as a folder of them is read.
        lines = [json.dumps({"id": name, "code": code, "input": "", "script": True}) + "\n" for name, code in sorted(kept)]
        out.write_text("".join(lines))
    else:
        out.mkdir(parents=True, exist_ok=True)
        for old in out.glob("*.py"):
            old.unlink()
        for name, code in kept:
            (out / f"{name}.py").write_text(code)
    if not a.quiet:
        print(json.dumps(summary), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

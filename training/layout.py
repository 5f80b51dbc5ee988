"""The layout people write, put back on a generated program (programs.py --layout real).

The generator prints every program in the canonical layout (training/printer.py), the one the
adapter shows the model. `real_layout` writes the same program the way people do: a docstring with
`>>>` examples of the function's own calls, type annotations (builtin generics, or names from
`typing` imported above it, sometimes under `from __future__ import annotations`), comments on
their own lines and after code, blank lines inside functions and between them, and long calls and
displays over several lines. It adds nothing the canonical layout keeps (no decorator, no import
the code reads), so the adapter's canonical() of the result is the canonical program again, byte
for byte: every change is checked so, and one that would not be is left out.
"""
from __future__ import annotations

import ast
import io
import random
import re
import tokenize

from training.grammar import BOOL, CH, DSI, INT, LI, LS, SI, STR, TI
from training.printer import canonical

BUILTIN = {INT: "int", STR: "str", CH: "str", BOOL: "bool", LI: "list[int]", LS: "list[str]", DSI: "dict[str, int]",
           SI: "set[int]", TI: "tuple[int, ...]"}
TYPING = {LI: "List[int]", LS: "List[str]", DSI: "Dict[str, int]", SI: "Set[int]", TI: "Tuple[int, ...]"}
COMMENTS = {
    "for": ["go through every item", "one pass over the input", "walk the values in order", "look at each element"],
    "while": ["repeat until the condition fails", "keep going while there is work", "loop until done"],
    "if": ["the special case", "only when it applies", "check before going on", "handle this case first"],
    "return": ["the result", "done", "hand back what was built"],
    "try": ["this may fail", "guard against bad input"],
    "=": ["start here", "keep a running value", "remember it for later", "what we build up"],
}
EOL_COMMENTS = ["the usual case", "may be empty", "one more", "keep it", "update", "see above", "edge case"]


def _annotation(t: str, typing_style: bool) -> str | None:
    return TYPING[t] if typing_style and t in TYPING else BUILTIN.get(t)


def _return_annotation(outputs: list[str], typing_style: bool) -> str | None:
    """The type of every value the function returned in its examples, when they agree."""
    kinds = set()
    for out in outputs:
        try:
            v = ast.literal_eval(out)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
        if isinstance(v, list) and v and all(type(e) is type(v[0]) for e in v) and type(v[0]) in (int, str):
            kinds.add((list, type(v[0])))
        else:
            kinds.add(type(v))
    if len(kinds) != 1:
        return None
    k = kinds.pop()
    if isinstance(k, tuple):
        return f"{'List' if typing_style else 'list'}[{k[1].__name__}]"
    return {int: "int", str: "str", bool: "bool", float: "float", list: "list", dict: "dict", tuple: "tuple", set: "set",
            type(None): "None"}.get(k)


def _summary(r: random.Random, entry: str, params: list[str]) -> str:
    words = entry.split("_")
    what = params[0] if params else "the input"
    if entry != "f" and len(words) > 1:
        return f"{words[0].capitalize()} the {' '.join(words[1:])} of {what}."
    if entry != "f":
        return f"{words[0].capitalize()} {what}."
    return r.choice([f"Return a value computed from {what}.", f"Compute the result for {what}.", f"Work through {what}."])


def _docstring(r: random.Random, indent: str, summary: str, examples: list[tuple[str, str]]) -> list[str]:
    lines = [f'{indent}"""{summary}']
    if examples:
        lines.append("")
        for call, out in examples:
            lines += [f"{indent}>>> {call}", f"{indent}{out}"]
        lines.append(f'{indent}"""')
    else:
        lines[0] += '"""'
    if any("\\" in ln for ln in lines):  # reprs carry backslashes: a raw docstring keeps them as written
        lines[0] = lines[0].replace('"""', 'r"""', 1)
    return lines


def _split_long(line: str) -> list[str] | None:
    """A line's first bracket whose items fit on one line each, opened over several lines (None: none to split)."""
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(line + "\n").readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    if any(tokenize.tok_name[t.type] == "FSTRING_START" for t in toks):
        return None  # Python 3.12 opens f-strings into tokens: their braces are no brackets to break at
    indent = line[: len(line) - len(line.lstrip())]
    for i, t in enumerate(toks):
        if t.type != tokenize.OP or t.string not in "([{":
            continue
        depth, commas, close = 0, [], None
        for u in toks[i:]:
            if u.type == tokenize.OP and u.string in "([{":
                depth += 1
            elif u.type == tokenize.OP and u.string in ")]}":
                depth -= 1
                if depth == 0:
                    close = u
                    break
            elif u.type == tokenize.OP and u.string == "," and depth == 1:
                commas.append(u)
            elif u.type == tokenize.NAME and u.string == "for" and depth == 1:
                return None  # a comprehension: people break those otherwise
        if close is None or not commas:
            continue
        starts = [t.end[1]] + [c.end[1] for c in commas]
        ends = [c.start[1] for c in commas] + [close.start[1]]
        items = [line[a:b].strip() for a, b in zip(starts, ends)]
        inner = indent + "    "
        return [line[: t.end[1]]] + [inner + it + ("," if k < len(items) - 1 else "") for k, it in enumerate(items)] + [indent + line[close.start[1]:]]
    return None


def real_layout(code: str, r: random.Random, entry: str, params: list[tuple[str, str]],
                defaults: list[tuple[str, str, str]], helpers: list[tuple[str, list[str], str]],
                examples: list[tuple[str, str]]) -> str | None:
    """The program `code` (canonical layout) as people write it: canonical() of the result is `code`
    (None where it would not map back so: the caller keeps the canonical text).

    entry: the entry function's name; params: its (name, type) parameters, then defaults (name, type,
    default text); helpers: (name, parameter types, return type) of the generated helpers; examples:
    (input, output repr) of its calls."""
    typing_style = r.random() < 0.1
    sigs = {entry: ([t for _, t in params] + [t for _, t, _ in defaults], _return_annotation([o for _, o in examples], typing_style))}
    for name, pts, ret in helpers:
        sigs[name] = (pts, _annotation(ret, typing_style))
    out: list[str] = []
    in_function = False  # past the first top-level def: blank lines may go into bodies
    opens_block = False  # the line before opens a block: no blank line right under it
    for line in code.rstrip("\n").split("\n"):
        stripped = line.lstrip()
        indent = line[: len(line) - len(stripped)]
        m = re.match(r"def (\w+)\((.*)\):$", stripped)
        if m and not indent:
            if out and out[-1] == "":
                out.append("")  # two blank lines between top-level functions
            name, args = m.group(1), m.group(2)
            pts, ret = sigs.get(name, (None, None))
            names = [a.split("=")[0] for a in args.split(", ")] if args else []
            if pts is not None and len(pts) == len(names) and r.random() < 0.85:
                parts = []
                for a, t in zip(args.split(", "), pts):
                    n, _, default = a.partition("=")
                    ann = _annotation(t, typing_style)
                    parts.append(f"{n}: {ann} = {default}" if default and ann else f"{n}: {ann}" if ann else a)
                line = f"def {name}({', '.join(parts)})" + (f" -> {ret}" if ret else "") + ":"
            out.append(line)
            if name == entry and r.random() < 0.9:
                calls = [(f"{entry}({inp})", o) for inp, o in examples] if r.random() < 0.9 else []
                out += _docstring(r, "    ", _summary(r, entry, names), calls)
            elif name != entry and r.random() < 0.5:
                out += _docstring(r, "    ", f"Helper for {entry}.", [])
            in_function = opens_block = True
            continue
        head = stripped.split(" ", 1)[0].rstrip(":")
        if in_function and indent and not opens_block and head in ("for", "while", "if", "return", "try") and r.random() < 0.3:
            out.append("")
        key = head if head in COMMENTS else "=" if re.match(r"\w+ = ", stripped) else None
        if key and r.random() < 0.08:
            out.append(f"{indent}# {r.choice(COMMENTS[key])}")
        if len(line) > 40 and r.random() < 0.8 and (split := _split_long(line)):
            out += split
        elif not stripped.endswith(":") and r.random() < 0.025:
            out.append(f"{line}  # {r.choice(EOL_COMMENTS)}")
        else:
            out.append(line)
        opens_block = stripped.endswith(":")
    text = "\n".join(out) + "\n"
    used = sorted(set(re.findall(r"\b(List|Dict|Set|Tuple)\[", "\n".join(ln for ln in out if ln.startswith("def ")))))
    if used:
        text = f"from typing import {', '.join(used)}\n\n\n" + text
    if r.random() < 0.15:
        text = "from __future__ import annotations\n\n\n" + text
    try:
        return text if canonical(text)["canonical"] == code else None
    except (SyntaxError, ValueError):
        return None

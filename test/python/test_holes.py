"""Hybrid mode's hole finding (adapter/python/holes.py): which functions are stubs, which names
are bound nowhere, where a missing call's value can be read, and how a prediction becomes a value
(literals only)."""

import ast
import importlib.util
import os
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("holes_under_test", os.path.join(HERE, "..", "..", "adapter", "python", "holes.py"))
holes = importlib.util.module_from_spec(spec)
spec.loader.exec_module(holes)

PROGRAM = '''
from abc import ABC, abstractmethod
from typing import Protocol, overload


def dots(x):
    ...


def passes(x):
    """Doc."""
    pass


def documented(x):
    """Only a docstring."""


def unwritten(x):
    raise NotImplementedError("later")


def todo(items):
    total = 0
    # TODO: apply the discount
    for i in items:
        total += i


def todo_done(items):
    # TODO: faster
    return sum(items)


def real(x):
    return x + 1


class Shape(ABC):
    @abstractmethod
    def area(self):
        ...

    def name(self):
        raise NotImplementedError


class Greeter(Protocol):
    def greet(self) -> str:
        ...


@overload
def conv(x: int) -> int: ...


def outer():
    def inner():
        pass
    return inner
'''


def stubs(source):
    tree = ast.parse(source)
    todo = holes._todo_lines(source)
    return sorted(q for q, fn in holes._functions(tree) if holes._is_stub(fn, todo))


class StubTest(unittest.TestCase):
    def test_stub_kinds(self):
        self.assertEqual(
            stubs(PROGRAM),
            ["Shape.name", "documented", "dots", "outer.<locals>.inner", "passes", "todo", "unwritten"],
        )

    def test_declarations_are_not_stubs(self):
        found = stubs(PROGRAM)
        for declared in ("Shape.area", "Greeter.greet", "conv", "todo_done", "real"):
            self.assertNotIn(declared, found)


class NamesTest(unittest.TestCase):
    def test_free_names(self):
        source = "import os\nfrom x import y as z\n\ndef f(a, *rest, k=1):\n    for i in a:\n        b = compute(i) + z + len(rest)\n    try:\n        pass\n    except ValueError as err:\n        print(err)\n    return missing_helper(b, __name__)\n"
        self.assertEqual(holes._free_names(ast.parse(source)), ["compute", "missing_helper"])

    def test_assigned_calls(self):
        source = "x = mod.f(1)\ny: int = g()\nz = h(1) + 1\na, b = k()\n"
        self.assertEqual(holes._assigned_calls(ast.parse(source)), {1: ("x", "mod.f"), 2: ("y", "g")})


class ValueTest(unittest.TestCase):
    def setUp(self):
        self.h = holes.Holes(run=None, replies=None)

    def test_literals(self):
        self.assertEqual(self.h.value_of("[1, 'a', {'k': (2.5, None)}]", "f()"), [1, "a", {"k": (2.5, None)}])
        self.assertEqual(self.h.value_of(" -3 ", "f()"), -3)

    def test_object_repr_stands_in(self):
        v = self.h.value_of("<Response [200]>", "fetch()")
        self.assertIsInstance(v, holes.StandIn)
        self.assertEqual(repr(v), "<Response [200]>")
        self.assertIsInstance(v.json, holes.StandIn)

    def test_code_is_refused(self):
        for text in ("__import__('os').system('touch /tmp/x')", "open('/etc/passwd').read()", "[x for x in ()]", "lambda: 0"):
            with self.assertRaises(holes.HoleError) as cm:
                self.h.value_of(text, "f()")
            self.assertIn("refused", str(cm.exception))

    def test_huge_answer_refused_unparsed(self):
        with self.assertRaises(holes.HoleError):
            self.h.value_of("[" + "1, " * 100000 + "]", "f()")


if __name__ == "__main__":
    unittest.main()

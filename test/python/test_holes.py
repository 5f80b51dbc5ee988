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


DOCUMENTED = '''
def to_f(c: float, *, offset=32) -> float:
    """Celsius to Fahrenheit.

    >>> to_f(100)
    212.0
    >>> to_f(0, offset=0)
    0.0
    >>> to_f(1.5)
    Traceback (most recent call last):
    ValueError: no halves
    >>> to_f(open("x"))
    1.0
    """
'''


def examples(source, name):
    fn = next(node for q, node in holes._functions(ast.parse(source)) if q == name)
    return holes._Examples.of(fn, in_class=False)


class DocstringTest(unittest.TestCase):
    """A stub's docstring example answers the call that binds its parameters to the same values."""

    def test_matching_call(self):
        ex = examples(DOCUMENTED, "to_f")
        self.assertEqual(ex.answer({"c": 100, "offset": 32}), {"repr": "212.0", "line": 5})
        self.assertEqual(ex.answer({"c": 0, "offset": 0}), {"repr": "0.0", "line": 7})

    def test_values_compare_by_type(self):
        ex = examples(DOCUMENTED, "to_f")
        for values in ({"c": 100.0, "offset": 32}, {"c": True, "offset": 32}, {"c": 100, "offset": 31}, {"c": 37, "offset": 32}):
            self.assertIsNone(ex.answer(values), values)

    def test_no_answer_from_a_raise_or_a_call_that_is_no_literal(self):
        ex = examples(DOCUMENTED, "to_f")
        self.assertEqual([e[2] for e in ex.examples], ["212.0", "0.0"])

    def test_binding_as_python_binds(self):
        ex = examples("def f(a, b=2, *rest, k, **kw):\n    \"\"\"\n    >>> f(1, k=3)\n    1\n    >>> f(1, 5, 6, k=3, z=0)\n    2\n    >>> f(1, a=2, k=3)\n    3\n    \"\"\"\n", "f")
        self.assertEqual(ex.answer({"a": 1, "b": 2, "rest": (), "k": 3, "kw": {}}), {"repr": "1", "line": 3})
        self.assertEqual(ex.answer({"a": 1, "b": 5, "rest": (6,), "k": 3, "kw": {"z": 0}}), {"repr": "2", "line": 5})
        self.assertIsNone(ex.answer({"a": 2, "b": 2, "rest": (), "k": 3, "kw": {}}), "a given twice binds nothing")

    def test_methods_are_not_read(self):
        fn = next(node for q, node in holes._functions(ast.parse("class C:\n    def m(self):\n        \"\"\"\n        >>> C().m()\n        1\n        \"\"\"\n")) if q == "C.m")
        self.assertIsNone(holes._Examples.of(fn, in_class=True))


class AnnotationTest(unittest.TestCase):
    def test_literal_types(self):
        read = lambda text: holes._value_type(ast.parse(text, mode="eval").body)
        self.assertEqual(read("float"), ["float"])
        self.assertEqual(read("list[str]"), ["list", ["str"]])
        self.assertEqual(read("Dict[str, int]"), ["dict", ["str"], ["int"]])
        self.assertEqual(read("Optional[int]"), ["union", ["int"], ["None"]])
        self.assertEqual(read("int | None"), ["union", ["int"], ["None"]])
        self.assertEqual(read("tuple[int, ...]"), ["tuple...", ["int"]])
        self.assertEqual(read("tuple[int, str]"), ["tuple", ["int"], ["str"]])
        self.assertEqual(read("'list[int]'"), ["list", ["int"]])
        self.assertEqual(read("list[Point]"), ["list", None])
        self.assertIsNone(read("Point"))
        self.assertIsNone(read("Optional[Point]"), "a union with a part unread is unread")
        # The program's own class, as the whole value only.
        own = lambda text: holes._value_type(ast.parse(text, mode="eval").body, {"Point"})
        self.assertEqual(own("Point"), ["class", "Point"])
        self.assertEqual(own("'Point'"), ["class", "Point"])
        self.assertEqual(own("list[Point]"), ["list", None])
        self.assertIsNone(own("Optional[Point]"))

    def test_an_instance_is_built_by_its_own_class_from_literals(self):
        class Point:
            def __init__(self, x, y=0):
                self.x, self.y = x, y
        h = holes.Holes(run=None, replies=None)
        p = h.value_of("Point(x=1, y=2.5)", "f()", Point)
        self.assertIsInstance(p, Point)
        self.assertEqual((p.x, p.y), (1, 2.5))
        self.assertEqual(h.value_of("Point(3)", "f()", Point).x, 3)
        for text in ("Point(x=__import__('os').getcwd())", "Point(*[1, 2])", "Other(1)", "Point(x=1).y"):
            with self.assertRaises(holes.HoleError, msg=text):
                h.value_of(text, "f()", Point)


class DocumentedFixturesTest(unittest.TestCase):
    """test/fixtures/hybrid-documented: each stub's docstring examples are true of its completed form,
    so an answer read from them is the right one."""

    def test_examples_hold(self):
        import doctest
        import json
        root = os.path.join(HERE, "..", "fixtures", "hybrid-documented")
        checked = 0
        for name in sorted(os.listdir(root)):
            case = json.load(open(os.path.join(root, name, "case.json")))
            main = open(os.path.join(root, name, "main.py")).read()
            completed = {}
            exec(compile(open(os.path.join(root, name, "complete.py")).read(), name, "exec"), completed)
            stubs = dict(holes._functions(ast.parse(main)))
            for hole in case["holes"]:
                examples = holes._Examples.of(stubs[hole], in_class=False)
                self.assertIsNotNone(examples, "%s: %s has docstring examples" % (name, hole))
                test = doctest.DocTestParser().get_doctest(ast.get_docstring(stubs[hole]), dict(completed), hole, name, 0)
                runner = doctest.DocTestRunner(verbose=False)
                runner.run(test, out=lambda _: None)
                self.assertEqual(runner.failures, 0, "%s: %s's examples hold for its completed form" % (name, hole))
                checked += len(test.examples)
        self.assertGreaterEqual(checked, 15)


if __name__ == "__main__":
    unittest.main()

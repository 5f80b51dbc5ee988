"""Runs the tests of one imported test module, without pytest, under a trace function.

Imported by training/realcode_capture.py in its child process, never by the builder. Two styles
are run, in a fixed order, each test with a CPU-time budget of its own and each class or function
with `random` seeded first:

- unittest: every `unittest.TestCase` subclass the module defines, one class at a time (its
  `setUpClass`, `setUp` and `tearDown` run as unittest runs them);
- plain functions: every module-level `test_*` function of the module that takes no argument
  (pytest's style without fixtures: `assert f(...) == ...`).

A failing or erroring test is simply over: the calls it made before are kept, as the doctest
runner keeps those of a failing example. A test that needs pytest (fixtures, `pytest.raises`,
parametrize) does not run, since pytest is not imported: its module fails to import, or the
function takes arguments and is skipped. Standard library only.
"""
from __future__ import annotations

import inspect
import random
import signal
import sys
import unittest

TEST_CPU_SECONDS = 2.0  # one test's budget: a slow test ends, the file's others still run


class OutOfTime(Exception):
    pass


def _out_of_time(signum, frame):
    raise OutOfTime("test over its CPU budget")


def test_cases(mod) -> list[unittest.TestSuite]:
    """One suite per TestCase class the module itself defines, in name order."""
    loader = unittest.TestLoader()
    classes = sorted((v for v in vars(mod).values() if isinstance(v, type) and issubclass(v, unittest.TestCase)
                      and v.__module__ == mod.__name__), key=lambda c: c.__name__)
    return [loader.loadTestsFromTestCase(c) for c in classes]


def test_functions(mod) -> list:
    """The module's own `test_*` functions that take no argument, in name order."""
    out = []
    for name, v in sorted(vars(mod).items()):
        if name.startswith("test") and inspect.isfunction(v) and v.__module__ == mod.__name__ \
                and not inspect.isgeneratorfunction(v) and not inspect.signature(v).parameters:
            out.append(v)
    return out


def budgeted(run):
    """run, with the CPU-time budget armed while it runs and disarmed after."""
    def armed(*args):
        signal.setitimer(signal.ITIMER_PROF, TEST_CPU_SECONDS)
        try:
            return run(*args)
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
    return armed


def run_tests(mod, hook) -> None:
    """Runs every test of mod with `hook` as the trace function while each runs."""
    signal.signal(signal.SIGPROF, _out_of_time)
    runs = []
    for suite in test_cases(mod):
        for case in suite:
            case.run = budgeted(case.run)  # the suite runs the class's fixtures, each test under its own budget
        runs.append(lambda s=suite: s.run(unittest.TestResult()))
    runs += [budgeted(f) for f in test_functions(mod)]
    for run in runs:
        random.seed(0)  # tests that draw random inputs draw the same ones every build
        sys.settrace(hook)
        try:
            run()
        except Exception:  # an assertion that failed, an error, or OutOfTime: this test is over
            pass
        finally:
            sys.settrace(None)

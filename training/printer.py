"""The training layout's printer: the one predict mode shows the model a user's program with
(adapter/python/canonical.py), so that generated programs, re-printed real code and a user's file
reach the model alike. Every module of training/ that prints code takes it from here.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "adapter" / "python"))
from canonical import canonical, unparse  # noqa: E402,F401

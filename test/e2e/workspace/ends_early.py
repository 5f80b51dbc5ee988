# Ends early when it is not run under debugpy: compare mode's recording (the tracer's run) says
# the program ended at line 6, where the real program under debugpy goes on.
import sys

if "pydevd" not in sys.modules:
    raise SystemExit(0)
total = 1
total += 2
print("total", total)

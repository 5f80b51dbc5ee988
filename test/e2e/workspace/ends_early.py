# Ends early when it is not run under debugpy: compare mode's recording (the tracer's run) says
# the program ended at line 6, where the real program under debugpy goes on through a loop.
import sys

if "pydevd" not in sys.modules:
    raise SystemExit(0)
total = 0
for n in range(4):
    total += n
print("total", total)

"""Re-prints the code of a programs file (JSONL lines with "code") in the layout the adapter shows the
model (adapter/python/canonical.py: no docstrings, annotations or comments), so that training on
real code sees it as the model will at inference. Lines whose code does not parse are left out.

  python3 training/canonical_programs.py IN.jsonl OUT.jsonl

Run it with the Python the sessions are traced with: ast.unparse's output follows its version.
"""
import json
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make "training" importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from training.printer import canonical  # noqa: E402


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    kept = dropped = 0
    with open(argv[0], encoding="utf-8") as src, open(argv[1], "w", encoding="utf-8") as out:
        for line in src:
            rec = json.loads(line)
            try:
                rec["code"] = canonical(rec["code"])["canonical"]
            except SyntaxError:
                dropped += 1
                continue
            out.write(json.dumps(rec, ensure_ascii=False) + "\n")
            kept += 1
    print(json.dumps({"kept": kept, "dropped": dropped}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The claim check on the same SciFact dev claims before the rule (a record of the code before) and after it:
claims whose gold stances or verdict changed, and the report of the after run.

    python compare.py BEFORE.json AFTER.json
"""

import json
import sys

before, after = (json.load(open(p))["figures"]["rows"] for p in sys.argv[1:3])
by_id = {r["id"]: r for r in before}
same = changed = 0
for r in after:
    b = by_id.get(r["id"])
    if b is None:
        continue
    keys = ("gold stances", "gold decided", "verdict")
    if all(b[k] == r[k] for k in keys):
        same += 1
        continue
    changed += 1
    print(r["id"], r["label"], {k: (b[k], r[k]) for k in keys if b[k] != r[k]}, "not asked:", r.get("not asked"))
print(f"{same} claims the same, {changed} changed, of {len(after)}")

"""summary.json of this folder: call 1's (all 201 tasks) with the tasks call 2 validated again alone
replaced by call 2's results, totals and per-category counts recomputed from the per-task ones.
Run from this folder: python3 merge.py"""
import json

KEYS = ("positive_controls", "positive_rejected", "negative_controls", "negative_accepted")
first, second = (json.load(open(f"{c}/summary.json" if c == "call1" else f"{c}/summary2.json")) for c in ("call1", "call2"))
again = {t["task"]: t for t in second["tasks_detail"]}
detail = [dict(again[t["task"]], call=2) if t["task"] in again else dict(t, call=1) for t in first["tasks_detail"]]
per_category: dict = {}
for t in detail:
    cat = per_category.setdefault(t["category"], {"tasks": 0, "tasks_ok": 0, **dict.fromkeys(KEYS, 0)})
    cat["tasks"] += 1
    cat["tasks_ok"] += int(t["ok"])
    for k in KEYS:
        cat[k] += t[k]
out = {k: first[k] for k in ("device", "torch", "device_kind", "gpus", "shape_roles", "seeds", "with_compile")}
out.update(complete=len(detail) == first["tasks"], tasks=len(detail), tasks_ok=sum(t["ok"] for t in detail),
           **{k: sum(t[k] for t in detail) for k in KEYS}, revalidated_alone=sorted(again),
           per_category=dict(sorted(per_category.items())), tasks_detail=detail)
json.dump(out, open("summary.json", "w"), indent=1)
print({k: out[k] for k in ("device", "tasks", "tasks_ok", *KEYS)})

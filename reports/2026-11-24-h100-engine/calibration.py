"""The CUDA-L1 calibration table: one line per imported KernelBench candidate from a store written
by `mkbench run --backend cuda --method cuda-l1-h100` (see README.md), with a second store's rows
(a re-run of some tasks after a fix) taking precedence. Reads stores only.

    python reports/2026-11-24-h100-engine/calibration.py STORE [RERUN_STORE] > calibration.md

"KernelBench tolerance" is CUDA-L1's own check (``torch.allclose(atol=1e-2, rtol=1e-2)``, in
CUDA-L1's eval/eval_cuda.py): a row counts as within it when its largest absolute error is at most
1e-2, which is sufficient for allclose at those tolerances (not necessary: the count is a floor).
"""

from __future__ import annotations

import collections
import json
import sqlite3
import statistics
import sys


def rows(path: str, method: str) -> dict[str, dict]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    out = {}
    for r in con.execute("SELECT * FROM results WHERE method = ? ORDER BY id", (method,)):
        out[r["task"]] = dict(r)
    return out


def reason_class(r: dict) -> str:
    v, err, extra = r["verdict"], r["error"] or "", json.loads(r["extra"] or "{}")
    if v == "framework":
        built = "candidate's own build" in (extra.get("compile_checks") or {})
        return "its load_inline build failed, fallback ran" if built else "no kernel of its own ran"
    if v == "incorrect":
        if "aliases an input" in err:
            return "output aliases its input (in-place)"
        if r["max_abs_err"] is not None and r["max_abs_err"] <= 1e-2:
            return "outside mkbench's contract, within KernelBench tolerance"
        return "wrong beyond KernelBench tolerance"
    if v == "error":
        return "the judge failed (reference)" if "the judge failed" in err else "raised"
    if v == "hack":
        if "under a quarter" in err:
            return "timed calls did no device work (cached output)"
        if "before the timed calls" in err:
            return "answers changed after the timed calls"
        if "thread" in err:
            return "started a thread"
        return "other runtime evidence"
    return "-"


def main(argv: list[str]) -> int:
    store, rerun = argv[1], (argv[2] if len(argv) > 2 else None)
    cand = rows(store, "cuda-l1-h100")
    eager = rows(store, "eager")
    if rerun:
        cand.update(rows(rerun, "cuda-l1-h100"))
    present = {t: r for t, r in cand.items() if r["verdict"] != "missing"}
    counts = collections.Counter(r["verdict"] for r in present.values())
    classes = collections.Counter((r["verdict"], reason_class(r)) for r in present.values())
    print(f"# CUDA-L1 H100 candidates under mkbench\n\n{len(cand)} tasks, {len(present)} with a candidate "
          f"({len(cand) - len(present)} missing from h100.json); eager baseline: "
          + ", ".join(f"{v} {n}" for v, n in collections.Counter(r["verdict"] for r in eager.values()).most_common()) + "\n")
    print("| verdict | candidates |\n|---|---|")
    for v, n in counts.most_common():
        print(f"| {v} | {n} |")
    print("\n| verdict | why | candidates |\n|---|---|---|")
    for (v, why), n in sorted(classes.items(), key=lambda kv: (-counts[kv[0][0]], -kv[1])):
        print(f"| {v} | {why} | {n} |")
    timed = [(r["speedup_eager"], json.loads(r["extra"] or "{}").get("import", {}).get("recorded", {}).get("score_default"))
             for r in present.values() if r["speedup_eager"]]
    if timed:
        print(f"\nTimed candidates: {len(timed)}; median mkbench speedup vs eager {statistics.median(s for s, _ in timed):.2f}x; "
              f"median CUDA-L1 recorded score_default for them "
              f"{statistics.median(d for _, d in timed if d is not None):.2f}x\n")
    print("## Per kernel\n\n| task | verdict | why | framework share | speedup vs eager (mkbench) | CUDA-L1 score_default | evidence |")
    print("|---|---|---|---|---|---|---|")
    for task in sorted(present):
        r = present[task]
        extra = json.loads(r["extra"] or "{}")
        share = extra.get("framework_share")
        score = extra.get("import", {}).get("recorded", {}).get("score_default")
        err = (r["error"] or "").replace("|", "/").replace("\n", " ")[:160]
        share_s = "" if share is None else f"{share:.2f}"
        speed_s = f"{r['speedup_eager']:.2f}" if r["speedup_eager"] else ""
        score_s = "" if score is None else str(score)
        print(f"| {task} | {r['verdict']} | {reason_class(r)} | {share_s} | {speed_s} | {score_s} | {err} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

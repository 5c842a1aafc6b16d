"""Two stores' timings of the same rows side by side: samples, medians, the spin, each unit's timed
step. python3 compare.py BEFORE.sqlite AFTER.sqlite"""

import json
import math
import sqlite3
import statistics
import sys


def rows(path):
    con = sqlite3.connect(path)
    out = {}
    for task, shape, dtype, method, n, med, iqr, extra in con.execute(
            "select task, shape, dtype, method, time_n, time_median_us, time_iqr_us, extra from results "
            "where time_n is not null"):
        e = json.loads(extra or "{}")
        out[(task, shape, dtype, method)] = dict(
            n=n, median=med, iqr=iqr, spin=e.get("run_ahead_us"), host_bound=e.get("host_bound_samples"),
            time_step=(e.get("unit_seconds") or {}).get("steps", {}).get("time_step"),
            cpu=e.get("host_cpu_share"), invol=e.get("switches_involuntary"), vol=e.get("switches_voluntary"),
            plain=e.get("launch_bound_median_us"), lane=e.get("lane"))
    return out


def _f(v, digits=0):
    return "-" if v is None else f"{v:.{digits}f}"


a, b = rows(sys.argv[1]), rows(sys.argv[2])
both = sorted(set(a) & set(b))
ratios = [b[k]["median"] / a[k]["median"] for k in both if a[k]["median"] and b[k]["median"]]
logs = sorted(abs(math.log(r)) for r in ratios)
print(f"rows timed in both: {len(both)} (before only {len(set(a) - set(b))}, after only {len(set(b) - set(a))})")
print(f"samples: before {sum(a[k]['n'] for k in both)}, after {sum(b[k]['n'] for k in both)}")
print(f"sample time (n x median), s: before {sum(a[k]['n'] * a[k]['median'] for k in both) / 1e6:.1f}, "
      f"after {sum(b[k]['n'] * b[k]['median'] for k in both) / 1e6:.1f}")
if logs:
    print(f"|log(after/before)| of the medians: median {statistics.median(logs):.4f}, "
          f"p95 {logs[min(len(logs) - 1, math.ceil(0.95 * len(logs)) - 1)]:.4f}")
spun_at_cap = [k for k in both if a[k]["spin"] == 20000.0]
print(f"rows spun at the 20 ms cap before: {len(spun_at_cap)}; after: {sum(b[k]['spin'] == 20000.0 for k in both)}")
print()
print("| task | method | dtype | n before | n after | median us before | after | after/before | spin us before | after "
      "| unspun median us before / after | CPU share before / after | involuntary switches before / after |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for k in sorted(both, key=lambda k: -a[k]["n"] * a[k]["median"]):
    x, y = a[k], b[k]
    print(f"| {k[0]} | {k[3]} | {k[2]} | {x['n']} | {y['n']} | {x['median']:.1f} | {y['median']:.1f} | "
          f"{y['median'] / x['median']:.3f} | {x['spin']} | {y['spin']} | {_f(x['plain'])} / {_f(y['plain'])} | "
          f"{_f(x['cpu'], 2)} / {_f(y['cpu'], 2)} | {x['invol']} / {y['invol']} |")

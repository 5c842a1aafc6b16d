"""Sum py-spy's raw stacks (``stacks.txt.gz``, 40 samples/s of every process the run forked) by role
and by step, and list the heaviest functions of each role. Usage: python profile.py CALL_DIR"""

from __future__ import annotations

import collections
import gzip
import re
import sys
from pathlib import Path

RATE = 40.0  # samples per second (run.sh: --rate 40)
OPS = ("setup", "compile", "prewarm", "warm", "run", "call", "time", "answers", "trace", "probe", "overhead")


def frames(line: str) -> tuple[str, list[str], int]:
    stack, count = line.rsplit(" ", 1)
    parts = stack.split(";")
    pids = [p for p in parts if p.startswith("process ")]
    pid = re.match(r"process (\d+)", pids[-1]).group(1) if pids else "?"
    return pid, [p for p in parts if not p.startswith("process ")], int(count)


def role_of(fs: list[str]) -> str:
    text = ";".join(fs)
    if "(core/judge.py" in text:
        return "judge"
    if "entry (core/worker.py" in text:
        return "worker"
    if "forkserver.py" in text:
        return "fork server"
    if "spawn_main" in text:
        return "spawned (prepare pool)"
    return "orchestrator"


def step_of(fs: list[str]) -> str:
    for f in fs:
        m = re.match(r"Steps\.(\w+) \(core/worker.py|(\w+) \(core/worker.py", f)
        if m:
            name = m.group(1) or m.group(2)
            if name in OPS:
                return name
    return "other"


def main(call: Path) -> None:
    lines = gzip.open(call / "stacks.txt.gz", "rt").read().splitlines()
    parsed = [frames(line) for line in lines if line.strip()]
    # a worker that ran ``prewarm`` is a compile-ahead worker, the others are lane workers
    prewarmers = {pid for pid, fs, _ in parsed if any(f.startswith(("prewarm (core/worker", "Steps.prewarm")) for f in fs)}
    by_role: collections.Counter = collections.Counter()
    by_step: collections.Counter = collections.Counter()
    inclusive: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    leaf: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    pids: dict[str, set] = collections.defaultdict(set)
    for pid, fs, n in parsed:
        role = role_of(fs)
        if role == "worker":
            role = "compile-ahead worker" if pid in prewarmers else "lane worker"
            by_step[(role, step_of(fs))] += n
        by_role[role] += n
        pids[role].add(pid)
        for f in {re.sub(r":\d+\)", ")", f) for f in fs}:
            inclusive[role][f] += n
        if fs:
            leaf[role][fs[-1]] += n
    total = sum(by_role.values())
    print(f"{total} samples = {total / RATE:.0f} CPU-seconds of Python stacks\n")
    print("| role | processes | CPU s | share |\n|---|---|---|---|")
    for role, n in by_role.most_common():
        print(f"| {role} | {len(pids[role])} | {n / RATE:.0f} | {n / total:.0%} |")
    print("\n| worker role | step | CPU s | per process |\n|---|---|---|---|")
    for (role, step), n in sorted(by_step.items(), key=lambda kv: -kv[1]):
        print(f"| {role} | {step} | {n / RATE:.1f} | {n / RATE / max(1, len(pids[role])):.2f} |")
    for role in by_role:
        print(f"\n### {role}: heaviest functions (inclusive CPU s)\n")
        for f, n in inclusive[role].most_common(45):
            print(f"  {n / RATE:7.1f}  {f[:150]}")
        print(f"\n### {role}: leaf frames (self CPU s)\n")
        for f, n in leaf[role].most_common(20):
            print(f"  {n / RATE:7.1f}  {f[:150]}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))

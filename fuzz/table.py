#!/usr/bin/env python3
"""Prints the fuzzing depth table of fuzz/README.md from what scripts/fuzz-all.sh keeps.

    fuzz/table.py [GOAL]        (run from anywhere; GOAL defaults to 10000000)

One row per target that has a stats file (fuzz/stats/TARGET: one line per run, "date
executions cov ft corpus outcome build"): total executions over every run, the executions of
runs built without comparison tracing ("-ntc" builds, scripts/fuzz-all.sh -n), the coverage of
the last run (libFuzzer's cov and ft, the corpus size), the builds used, the last run's
executions per second from its log (fuzz/logs/TARGET.log: libFuzzer's own average, a nice -n 19
process's share of the machine), and findings: failed runs and the files in
fuzz/artifacts/TARGET. A last line counts the targets at the goal.
"""

import re
import sys
from pathlib import Path

FUZZ = Path(__file__).resolve().parent


def last_exec_rate(target):
    log = FUZZ / "logs" / f"{target}.log"
    if not log.exists():
        return "-"
    rates = re.findall(r"exec/s: (\d+)", log.read_text(errors="replace"))
    return rates[-1] if rates else "-"


def row(stats_file):
    target = stats_file.name
    runs = [line.split() for line in stats_file.read_text().splitlines() if line.strip()]
    runs = [r for r in runs if len(r) >= 7]
    total = sum(int(r[1]) for r in runs)
    without_cmp = sum(int(r[1]) for r in runs if r[6].endswith("-ntc"))
    failed = sum(1 for r in runs if r[5] != "ok")
    builds = sorted({r[6] for r in runs})
    artifacts = FUZZ / "artifacts" / target
    found = sum(1 for f in artifacts.iterdir() if f.is_file()) if artifacts.is_dir() else 0
    last = runs[-1] if runs else ["-"] * 7
    findings = "none" if failed == 0 and found == 0 else f"{failed} failed runs, {found} artifacts"
    return target, total, without_cmp, last[2], last[3], last[4], "+".join(builds), \
        last_exec_rate(target), findings


def main():
    goal = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000
    rows = [row(f) for f in sorted((FUZZ / "stats").iterdir()) if f.is_file()]
    print("| target | executions | of which without cmp tracing | cov | ft | corpus | builds "
          "| exec/s (last run) | findings |")
    print("|---|---:|---:|---:|---:|---:|---|---:|---|")
    for r in rows:
        print(f"| `{r[0]}` | {r[1]:,} | {r[2]:,} | {r[3]} | {r[4]} | {r[5]} | {r[6]} | {r[7]} "
              f"| {r[8]} |")
    at_goal = sum(1 for r in rows if r[1] >= goal)
    print(f"\n{at_goal} of {len(rows)} targets at {goal:,} executions or more.")


if __name__ == "__main__":
    main()

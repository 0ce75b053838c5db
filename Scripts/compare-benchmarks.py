#!/usr/bin/env python3
"""Compares two builds of the benchmark suite in one run: the engines' child processes of the
BEFORE and AFTER binaries run alternately, round by round, on fresh files, and each operation's
median rate is printed with the ratio AFTER / BEFORE (a ratio below 0.95 is a slowdown past the
5 % budget). SQLite runs in the same rounds as a yardstick for the machine's noise.

    swift build -c release --package-path Benchmarks --product LMDBRealmBenchmarks   # in each tree
    Scripts/compare-benchmarks.py BEFORE/Benchmarks/.build/release/LMDBRealmBenchmarks \\
        Benchmarks/.build/release/LMDBRealmBenchmarks [--n 100000] [--rounds 5]
"""
import argparse
import statistics
import subprocess
import sys


def run(binary, engine, n):
    out = subprocess.run([binary, "--child", engine, "--n", str(n)], capture_output=True, text=True, check=True).stdout
    rates = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4:
            op, seconds, count = parts[0], float(parts[1]), float(parts[2])
            rates[op] = count / seconds if seconds > 0 else float("inf")
    return rates


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--engine", default="LMDBRealm")
    args = parser.parse_args()
    samples = {"before": {}, "after": {}, "sqlite": {}}
    for r in range(args.rounds):
        print(f"round {r + 1}/{args.rounds}", file=sys.stderr)
        order = [("before", args.before), ("after", args.after)]
        if r % 2:
            order.reverse()
        for label, binary in order:
            for op, rate in run(binary, args.engine, args.n).items():
                samples[label].setdefault(op, []).append(rate)
        for op, rate in run(args.after, "SQLite", args.n).items():
            samples["sqlite"].setdefault(op, []).append(rate)
    print(f"{args.engine}, N = {args.n}, medians of {args.rounds} rounds (operations per second)")
    print(f"{'operation':<24}{'before':>14}{'after':>14}{'after/before':>14}{'SQLite':>14}")
    for op in samples["before"]:
        b = statistics.median(samples["before"][op])
        a = statistics.median(samples["after"].get(op, [float("nan")]))
        s = statistics.median(samples["sqlite"].get(op, [float("nan")]))
        print(f"{op:<24}{b:>14.4g}{a:>14.4g}{a / b:>14.3f}{s:>14.4g}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Per-kernel GPU time of one steady decode step, from an Nsight Compute CSV.

  ncu --graph-profiling node --metrics gpu__time_duration.sum --csv \
      ./build-gpu/bin/tandem-bench --batch=1 --modes=double_buffered_graphs \
      --new_tokens=4 > ncu.csv
  python3 scripts/bench/kernel_times.py ncu.csv --last 160

Groups the last --last kernels by name and prints count, total and mean µs.
"""
import argparse
import collections
import csv
import io


def main():
    p = argparse.ArgumentParser()
    p.add_argument("csv")
    p.add_argument("--last", type=int, default=160)
    p.add_argument("--order", help="also write the kernels in launch order to this file")
    args = p.parse_args()
    text = open(args.csv).read()
    text = text[text.index('"ID"'):]
    rows = [r for r in csv.DictReader(io.StringIO(text)) if r["Metric Name"] == "gpu__time_duration.sum"]
    print(f"{len(rows)} kernels profiled")
    rows = rows[-args.last:]
    groups = collections.OrderedDict()
    total = 0.0
    for r in rows:
        value = float(r["Metric Value"].replace(",", ""))
        us = value / 1000.0 if r["Metric Unit"] in ("nsecond", "ns") else value * (1000.0 if r["Metric Unit"] in ("msecond", "ms") else 1.0)
        name = r["Kernel Name"][:90]
        g = groups.setdefault(name, [0, 0.0])
        g[0] += 1
        g[1] += us
        total += us
    if args.order:
        with open(args.order, "w") as f:
            for r in rows:
                f.write(f"{r['Metric Value']:>10} {r['Metric Unit']} {r['Kernel Name'][:120]}\n")
    print(f"last {len(rows)} kernels: {total:.1f} us of kernel time")
    for name, (n, us) in sorted(groups.items(), key=lambda kv: -kv[1][1]):
        print(f"{n:4d} {us:8.1f} us {us / n:6.2f} us/each  {name}")


if __name__ == "__main__":
    main()

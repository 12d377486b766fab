#!/usr/bin/env python3
"""How a step's tokens spread on their way to the client, from tandem-loadgen's
--token_times JSON lines (plain or gzipped) of streams that decode together
(e.g. poisson_itl.sh's 64-at-once run).

  python3 scripts/bench/arrival_spread.py probe-64-0.5.jsonl[.gz] [--gap-us 120]

Groups every token arrival of every stream into bursts (arrivals less than
--gap-us apart); a burst with one token from each of the N streams is one
step's delivery. Prints, over those bursts, how long each took from its first
token to its last, and how far each stream's offset within the burst moved
from one burst to the next (what turns a steady step period into ITL jitter).
"""
import argparse
import gzip
import json


def percentiles(values, ps=(50, 90, 99)):
    values = sorted(values)
    return [values[min(len(values) - 1, int(p / 100 * len(values)))] for p in ps]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("jsonl")
    p.add_argument("--gap-us", type=float, default=120.0)
    args = p.parse_args()
    opener = gzip.open if args.jsonl.endswith(".gz") else open
    with opener(args.jsonl, "rt") as f:
        rows = [json.loads(line) for line in f]
    streams = [r for r in rows if r.get("token_times_s")]
    if not streams:
        raise SystemExit("no token_times_s in the file (run tandem-loadgen with --token_times)")
    arrivals = sorted((t + r["start_s"], i) for i, r in enumerate(streams) for t in r["token_times_s"])
    bursts = [[arrivals[0]]]
    for a in arrivals[1:]:
        if (a[0] - bursts[-1][-1][0]) * 1e6 > args.gap_us:
            bursts.append([a])
        else:
            bursts[-1].append(a)
    n = len(streams)
    full = [b for b in bursts if len(b) == n and len({i for _, i in b}) == n]
    if len(full) < 2:
        raise SystemExit(f"{len(full)} bursts hold one token of each of the {n} streams: "
                         f"too few (a larger --gap-us merges steps, a smaller one splits them)")
    widths = [(b[-1][0] - b[0][0]) * 1e6 for b in full]
    moves = []
    for a, b in zip(full, full[1:]):
        offset_a = {i: t - a[0][0] for t, i in a}
        moves += [abs(t - b[0][0] - offset_a[i]) * 1e6 for t, i in b]
    print(f"{n} streams, {len(bursts)} bursts, {len(full)} with one token of every stream")
    print("burst length us (p50 / p90 / p99):        " + " / ".join(f"{v:.0f}" for v in percentiles(widths)))
    print("a stream's offset move us (p50 / p90 / p99): " + " / ".join(f"{v:.0f}" for v in percentiles(moves)))


if __name__ == "__main__":
    main()

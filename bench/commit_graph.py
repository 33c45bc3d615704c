#!/usr/bin/env python3
"""`commit-graph write --reachable`: Sluice beside git, in turn, on the same repository.

Each round writes the graph afresh with each tool (a different order each round; the file is
removed before each run) and checks that Sluice's file is byte for byte git's. Reports median
wall time, CPU time and peak memory, and the ratio to git.

    python3 bench/commit_graph.py <repository> [--runs 5] [--git /usr/bin/git --git /usr/local/bin/git]
        [--changed-paths]

`--changed-paths` writes the changed-path Bloom filters too (every filter computed: the file
is removed before each run, so none is reused).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from common import run  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--git", action="append")
    parser.add_argument("--sluice", default="target/release/sluice")
    parser.add_argument("--results", default="bench/results/commit-graph.jsonl")
    parser.add_argument("--changed-paths", action="store_true")
    args = parser.parse_args()
    extra = ["--changed-paths"] if args.changed_paths else []
    gits = args.git or ["/usr/bin/git"]
    sluice = os.path.abspath(args.sluice)
    git_dir = subprocess.run(["git", "-C", args.repo, "rev-parse", "--absolute-git-dir"],
                             capture_output=True, text=True, check=True).stdout.strip()
    graph = os.path.join(git_dir, "objects", "info", "commit-graph")
    tools = [(f"git {subprocess.run([g, 'version'], capture_output=True, text=True).stdout.split()[-1]}",
              [g, "-C", git_dir, "commit-graph", "write", "--reachable", "--no-progress"] + extra)
             for g in gits]
    tools.append(("sluice", [sluice, "-C", git_dir, "commit-graph", "write", "--reachable"] + extra))
    results = {name: [] for name, _ in tools}
    written = {}
    for round_ in range(args.runs):
        k = round_ % len(tools)
        for name, argv in tools[k:] + tools[:k]:
            if os.path.exists(graph):
                os.unlink(graph)
            results[name].append(run(argv))
            written[name] = open(graph, "rb").read()
    for name in results:
        if name != "sluice" and written[name] != written["sluice"]:
            print(f"warning: sluice's file differs from {name}'s")
    print(f"{args.repo}: {args.runs} runs, medians")
    print(f"{'tool':<12} {'wall s':>8} {'CPU s':>8} {'peak MB':>8}")
    rows = []
    for name, runs in results.items():
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] + r[2] for r in runs)
        peak = statistics.median(r[3] for r in runs) / 1024
        rows.append({"tool": name, "wall": wall, "cpu": cpu, "peak_mb": peak})
        print(f"{name:<12} {wall:>8.3f} {cpu:>8.3f} {peak:>8.0f}")
    ours = rows[-1]
    for row in rows[:-1]:
        print(f"sluice / {row['tool']}: wall {ours['wall'] / row['wall']:.2f}x, "
              f"CPU {ours['cpu'] / row['cpu']:.2f}x")
    with open(args.results, "a") as f:
        for row in rows:
            row.update(repo=os.path.basename(os.path.abspath(args.repo).rstrip("/")),
                       runs=args.runs, changed_paths=args.changed_paths,
                       time=time.strftime("%Y-%m-%dT%H:%M:%S"))
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()

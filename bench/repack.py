#!/usr/bin/env python3
"""`repack -a -d -b`: Sluice beside git, in turn, on copies of the same repository.

Every run repacks a fresh copy of the input (copied and synced before the clock starts), each
tool in turn, a different order each round. `--pushes N` first adds N commits to the input
copy, packing every fifth (as pushes leave small packs and loose objects beside the big pack).
`--full-search` runs `repack -a -d -b -f` instead (every delta searched anew, git's default
window 10 and depth 50), the long step of an aggressive maintenance.
Reports median wall time, CPU time, peak memory, the size of the pack written, and the ratio to
git; checks Sluice's result with `git rev-list --test-bitmap` on every branch and `git fsck`.

    python3 bench/repack.py <bare repository> [--runs 3] [--pushes 0] [--full-search]
        [--git /usr/bin/git --git /usr/local/bin/git] [--scratch /tmp]
"""

import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from common import (PORTABLE_LABEL, PORTABLE_SHA1_HELP, add_commit, git_out, portable_sha1,  # noqa: E402
                    run)


def add_pushes(repo, count):
    """`count` commits on HEAD's branch, each adding a file; every fifth the loose objects
    are packed (`git repack -d`), as a series of pushes leaves them."""
    for i in range(1, count + 1):
        add_commit(repo, i)
        if i % 5 == 0:
            git_out(repo, "repack", "-d", "-q")


def pack_bytes(repo):
    return sum(os.path.getsize(p) for p in glob.glob(os.path.join(repo, "objects/pack/*.pack")))


def check(repo):
    """git's judgement of a repacked repository: every branch's bitmap, and fsck."""
    for tip in git_out(repo, "for-each-ref", "--format=%(objectname)", "refs/heads").split():
        out = subprocess.run(["git", "-C", repo, "rev-list", "--test-bitmap", tip],
                             capture_output=True, text=True)
        if out.returncode != 0 or "OK!" not in out.stdout + out.stderr:
            sys.exit(f"--test-bitmap {tip} failed: {out.stderr[-300:]}")
    subprocess.run(["git", "-C", repo, "fsck", "--no-progress", "--connectivity-only"], check=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pushes", type=int, default=0)
    parser.add_argument("--full-search", action="store_true")
    parser.add_argument("--portable-sha1", action="store_true", help=PORTABLE_SHA1_HELP)
    parser.add_argument("--git", action="append")
    parser.add_argument("--sluice", action="append",
                        help="a Sluice binary (target/release/sluice); given twice or more, each "
                             "is timed on the same repository, named by its path (a before/after "
                             "comparison the per-run pushes of separate runs would blur)")
    parser.add_argument("--scratch", default="/tmp")
    parser.add_argument("--results", default="bench/results/repack.jsonl")
    args = parser.parse_args()
    gits = args.git or ["/usr/bin/git"]
    sluices = [os.path.abspath(path) for path in args.sluice or ["target/release/sluice"]]
    sluice = sluices[0]
    scratch = os.path.join(args.scratch, f"bench-repack-{os.getpid()}")
    source = os.path.join(scratch, "source.git")
    shutil.copytree(args.repo, source, symlinks=True)
    if args.pushes:
        add_pushes(source, args.pushes)
    work = os.path.join(scratch, "work.git")
    flags = ["repack", "-a", "-d", "-b", "-q"] + (["-f"] if args.full_search else [])
    tools = [(f"git {subprocess.run([g, 'version'], capture_output=True, text=True).stdout.split()[-1]}",
              [g, "-C", work] + flags) for g in gits]
    for path in sluices:
        name = "sluice" if len(sluices) == 1 else f"sluice {path}"
        tools.append((name, [path, "-C", work] + flags))
    if args.portable_sha1:
        tools.append((PORTABLE_LABEL, portable_sha1([sluice, "-C", work] + flags)))
    results = {name: [] for name, _ in tools}
    sizes = {}
    try:
        for round_ in range(args.runs):
            k = round_ % len(tools)
            for name, argv in tools[k:] + tools[:k]:
                shutil.rmtree(work, ignore_errors=True)
                shutil.copytree(source, work, symlinks=True)
                os.sync()
                results[name].append(run(argv))
                sizes[name] = pack_bytes(work)
                if name.startswith("sluice") and round_ == 0:
                    check(work)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    label = os.path.basename(os.path.abspath(args.repo).rstrip("/"))
    mode = " ".join(f for f in flags[1:] if f != "-q")
    print(f"{label}, repack {mode}, {args.pushes} pushes since its repack: {args.runs} runs, medians")
    print(f"{'tool':<17} {'wall s':>8} {'CPU s':>8} {'peak MB':>8} {'pack MB':>9}")
    rows = []
    for name, runs in results.items():
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] + r[2] for r in runs)
        peak = statistics.median(r[3] for r in runs) / 1024
        rows.append({"tool": name, "wall": wall, "cpu": cpu, "peak_mb": peak,
                     "pack_mb": sizes[name] / 1e6})
        print(f"{name:<17} {wall:>8.3f} {cpu:>8.3f} {peak:>8.0f} {sizes[name] / 1e6:>9.2f}")
    gits = [row for row in rows if row["tool"].startswith("git")]
    for ours in (row for row in rows if not row["tool"].startswith("git")):
        for row in gits:
            print(f"{ours['tool']} / {row['tool']}: wall {ours['wall'] / row['wall']:.2f}x, "
                  f"CPU {ours['cpu'] / row['cpu']:.2f}x, pack {ours['pack_mb'] / row['pack_mb']:.4f}x")
    with open(args.results, "a") as f:
        for row in rows:
            row.update(repo=label, mode=mode, pushes=args.pushes, runs=args.runs,
                       time=time.strftime("%Y-%m-%dT%H:%M:%S"))
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()

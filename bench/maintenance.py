#!/usr/bin/env python3
"""Maintenance after pushes: Sluice beside git, each on its own copy of one repository.

A series of pushes (`--pushes`, each a commit of a few new files arriving as a pack, as
receive-pack stores a push above `receive.unpackLimit`) lands in each copy; after each one the
tool's maintenance runs: `git repack --geometric=2 -d` and `sluice repack --geometric=2 -d`.
Reports the total and the largest single maintenance (wall, CPU), the number of packs at the
end, and the server CPU of full clones from `sluice serve` over HTTP (which counts with the
bitmap the copy started with plus a walk of what the pushes added): the first clone, and the
next (which reuses the checksum the first computed), beside the same two right after a full
`repack -adb`.

    python3 bench/maintenance.py <bare repository with a bitmap> [--pushes 100]
        [--git /usr/bin/git] [--scratch /tmp]
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
from common import add_commit, git_out, process_cpu, run  # noqa: E402


def push(repo, i, files=3):
    """One push: a commit adding `files` files on HEAD's branch, its objects stored as a pack
    (as receive-pack keeps a push above `receive.unpackLimit`), the loose copies gone."""
    written = add_commit(repo, i, files)
    git_out(repo, "pack-objects", "-q", os.path.join(repo, "objects/pack/pack"),
            stdin="\n".join(written) + "\n")
    git_out(repo, "prune-packed")


def packs(repo):
    return len(glob.glob(os.path.join(repo, "objects/pack/*.pack")))


def clone_cpu(sluice, repo, scratch, clones=6):
    """The CPU seconds `sluice serve` spends serving each of `clones` full clones of `repo`
    over HTTP, one after the other."""
    root = os.path.join(scratch, "served")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    os.symlink(os.path.abspath(repo), os.path.join(root, "repo.git"))
    server = subprocess.Popen([sluice, "serve", "--http", "127.0.0.1:0", "--git", "off", root],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    address = server.stdout.readline().decode().strip().rsplit("http://", 1)[1]

    def cpu():
        return process_cpu(server.pid)

    target = os.path.join(scratch, "clone.git")
    spent = []
    try:
        for _ in range(clones):
            shutil.rmtree(target, ignore_errors=True)
            before = cpu()
            subprocess.run(["git", "clone", "-q", "--bare", f"http://{address}/repo.git", target],
                           check=True)
            time.sleep(0.2)  # the server's last writes and its thread's exit
            spent.append(cpu() - before)
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(target, ignore_errors=True)
        shutil.rmtree(root, ignore_errors=True)
    return spent


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo")
    parser.add_argument("--pushes", type=int, default=100)
    parser.add_argument("--git", default="/usr/bin/git")
    parser.add_argument("--sluice", default="target/release/sluice")
    parser.add_argument("--scratch", default="/tmp")
    parser.add_argument("--results", default="bench/results/maintenance.jsonl")
    args = parser.parse_args()
    sluice = os.path.abspath(args.sluice)
    scratch = os.path.join(args.scratch, f"bench-maintenance-{os.getpid()}")
    version = subprocess.run([args.git, "version"], capture_output=True, text=True).stdout.split()[-1]
    tools = {f"git {version}": [args.git, "repack", "--geometric=2", "-d", "-q"],
             "sluice": [sluice, "repack", "--geometric=2", "-d", "-q"]}
    copies = {name: os.path.join(scratch, name.replace(" ", "-") + ".git") for name in tools}
    times = {name: [] for name in tools}
    try:
        for copy in copies.values():
            shutil.copytree(args.repo, copy, symlinks=True)
        for i in range(1, args.pushes + 1):
            for name, argv in tools.items():
                push(copies[name], i)
                times[name].append(run([argv[0], "-C", copies[name], *argv[1:]]))
        rows = []
        print(f"{args.pushes} pushes, maintenance after each")
        print(f"{'tool':<12} {'total wall':>10} {'total CPU':>10} {'max wall':>9} {'max CPU':>8} {'packs':>6}")
        for name in tools:
            total_wall = sum(t[0] for t in times[name])
            total_cpu = sum(t[1] + t[2] for t in times[name])
            max_wall = max(t[0] for t in times[name])
            max_cpu = max(t[1] + t[2] for t in times[name])
            rows.append({"tool": name, "total_wall": total_wall, "total_cpu": total_cpu,
                         "max_wall": max_wall, "max_cpu": max_cpu, "packs": packs(copies[name])})
            print(f"{name:<12} {total_wall:>10.2f} {total_cpu:>10.2f} {max_wall:>9.3f} "
                  f"{max_cpu:>8.3f} {packs(copies[name]):>6}")
        ours, theirs = rows[-1], rows[0]
        print(f"sluice / {theirs['tool']}: total wall {ours['total_wall'] / theirs['total_wall']:.2f}x")
        after = clone_cpu(sluice, copies["sluice"], scratch)
        subprocess.run([sluice, "-C", copies["sluice"], "repack", "-a", "-d", "-b", "-q"], check=True)
        repacked = clone_cpu(sluice, copies["sluice"], scratch)
        summary = {"first": (after[0], repacked[0]),
                   "median of the next": (statistics.median(after[1:]),
                                          statistics.median(repacked[1:]))}
        for label, (pushed, full) in summary.items():
            print(f"{label} full clone, sluice serve CPU: {pushed:.2f} s after the pushes, "
                  f"{full:.2f} s after repack -adb ({pushed / max(full, 0.01):.2f}x)")
        rows[-1].update(clone_cpu_after_pushes=after, clone_cpu_after_repack=repacked)
        with open(args.results, "a") as f:
            for row in rows:
                row.update(repo=os.path.basename(os.path.abspath(args.repo).rstrip("/")),
                           pushes=args.pushes, time=time.strftime("%Y-%m-%dT%H:%M:%S"))
                f.write(json.dumps(row) + "\n")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()

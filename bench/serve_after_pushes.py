#!/usr/bin/env python3
"""Pushes into `sluice serve`, then full clones from it: what issue 31's bar measures.

A bare copy of the repository is served over smart HTTP (pushes enabled); a git client pushes
`--pushes` commits one by one (each a new file, stored as git's receive-pack stores a small
push, loose below `receive.unpackLimit`), and the server runs its automatic maintenance after
each. Reports the server's CPU per push (receiving, maintenance and the background work it
starts), then the server CPU of full clones: the first after the pushes and the mean of the
next ones (measured together, the counter moving in 10 ms ticks), beside the same right after `sluice repack -adb` of the served copy.

    python3 bench/serve_after_pushes.py <bare repository> [--pushes 20] [--clones 4]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from common import copy_by_writes, process_cpu  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo")
    parser.add_argument("--pushes", type=int, default=20)
    parser.add_argument("--clones", type=int, default=4)
    parser.add_argument("--sluice", default="target/release/sluice")
    parser.add_argument("--scratch", default="/tmp")
    parser.add_argument("--results", default="bench/results/serve-after-pushes.jsonl")
    args = parser.parse_args()
    sluice = os.path.abspath(args.sluice)
    work = os.path.join(args.scratch, f"bench-serve-pushes-{os.getpid()}")
    root = os.path.join(work, "served")
    repo = os.path.join(root, "repo.git")
    os.makedirs(root)
    server = None
    try:
        shutil.copytree(args.repo, repo, symlinks=True, copy_function=copy_by_writes)
        subprocess.run(["git", "-C", repo, "config", "http.receivepack", "true"], check=True)
        server = subprocess.Popen([sluice, "serve", "--http", "127.0.0.1:0", "--git", "off", root],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        url = server.stdout.readline().decode().strip().rsplit("http://", 1)[1]
        url = f"http://{url}/repo.git"
    
        def cpu():
            return process_cpu(server.pid)

        def settled(before):
            # Background work the request started (maintenance, checksums) ends within this.
            time.sleep(1.0)
            return cpu() - before

        branch = subprocess.run(["git", "-C", repo, "symbolic-ref", "--short", "HEAD"],
                                capture_output=True, text=True, check=True).stdout.strip()
        client = os.path.join(work, "client")
        subprocess.run(["git", "init", "-q", client], check=True)
        subprocess.run(["git", "-C", client, "fetch", "-q", repo, f"{branch}:refs/remotes/o/{branch}"],
                       check=True)
        subprocess.run(["git", "-C", client, "checkout", "-q", "-b", "w", f"o/{branch}"], check=True)
        per_push = []
        for i in range(args.pushes):
            with open(os.path.join(client, f"pushed-{i}"), "w") as f:
                f.write(f"push {i}\n")
            subprocess.run(["git", "-C", client, "add", "."], check=True)
            subprocess.run(["git", "-C", client, "commit", "-q", "-m", f"push {i}"], check=True)
            before = cpu()
            subprocess.run(["git", "-C", client, "push", "-q", url, f"HEAD:refs/heads/{branch}"],
                           check=True)
            per_push.append(settled(before))

        def clones():
            """The server CPU of the first full clone, and the mean of the next ones (measured
            together: the counter moves in 10 ms ticks)."""
            target = os.path.join(work, "clone.git")

            def clone():
                shutil.rmtree(target, ignore_errors=True)
                subprocess.run(["git", "clone", "-q", "--bare", url, target], check=True)

            before = cpu()
            clone()
            first = settled(before)
            before = cpu()
            for _ in range(args.clones - 1):
                clone()
            rest = settled(before) / max(args.clones - 1, 1)
            shutil.rmtree(target, ignore_errors=True)
            return first, rest

        after = clones()
        subprocess.run([sluice, "-C", repo, "repack", "-a", "-d", "-b", "-q"], check=True)
        repacked = clones()
        row = {"repo": os.path.basename(os.path.abspath(args.repo).rstrip("/")),
               "pushes": args.pushes, "push_cpu_max": max(per_push),
               "push_cpu_median": statistics.median(per_push),
               "clone_cpu_after_pushes": {"first": after[0], "next_mean": after[1]},
               "clone_cpu_after_repack": {"first": repacked[0], "next_mean": repacked[1]},
               "time": time.strftime("%Y-%m-%dT%H:%M:%S")}
        print(f"{args.pushes} pushes into sluice serve: server CPU per push median "
              f"{row['push_cpu_median']:.2f} s, max {row['push_cpu_max']:.2f} s")
        print(f"full clone server CPU, first: {after[0]:.3f} s after the pushes, "
              f"{repacked[0]:.3f} s after repack -adb ({after[0] / repacked[0]:.2f}x)")
        print(f"full clone server CPU, mean of the next {args.clones - 1}: {after[1]:.3f} s "
              f"after the pushes, {repacked[1]:.3f} s after repack -adb "
              f"({after[1] / repacked[1]:.2f}x)")
        with open(args.results, "a") as f:
            f.write(json.dumps(row) + "\n")
    finally:
        if server:
            server.terminate()
            server.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

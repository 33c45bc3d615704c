#!/usr/bin/env python3
"""A repository with many refs on a store-backed node, beside `sluice serve` on a local copy:
import time, the manifest's size (most refs live in a snapshot object it names), a one-ref
push and a full ref advertisement (`git ls-remote`), medians of --runs.

    python3 bench/store_refs.py [--refs 100000] [--runs 3] [--sluice target/release/sluice]
"""

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from store import Server, start_store  # noqa: E402


def timed(argv, **kw):
    start = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, **kw)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refs", type=int, default=100000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--git", default="git")
    parser.add_argument("--sluice", default="target/release/sluice")
    args = parser.parse_args()
    sluice, git = os.path.abspath(args.sluice), args.git
    work = tempfile.mkdtemp(prefix="bench-store-refs-")
    weed, s3 = start_store(work)
    env = dict(os.environ, AWS_ENDPOINT_URL=f"http://{s3}", AWS_ALLOW_HTTP="true")
    try:
        served = os.path.join(work, "served")
        repo = os.path.join(served, "repo.git")
        os.makedirs(served)
        subprocess.run([git, "init", "-q", "--bare", repo], check=True)
        blob = subprocess.run([git, "-C", repo, "hash-object", "-w", "--stdin"], input=b"x\n",
                              capture_output=True, check=True).stdout.decode().strip()
        tree = subprocess.run([git, "-C", repo, "mktree"], input=f"100644 blob {blob}\tf\n".encode(),
                              capture_output=True, check=True).stdout.decode().strip()
        commit = subprocess.run([git, "-C", repo, "commit-tree", tree, "-m", "c"],
                                capture_output=True, check=True).stdout.decode().strip()
        lines = "".join(f"create refs/heads/b{i:07d} {commit}\n" for i in range(args.refs))
        lines += f"create refs/heads/main {commit}\n"
        subprocess.run([git, "-C", repo, "update-ref", "--stdin"], input=lines.encode(), check=True)
        subprocess.run([git, "-C", repo, "symbolic-ref", "HEAD", "refs/heads/main"], check=True)
        subprocess.run([git, "-C", repo, "pack-refs", "--all"], check=True)
        url = "s3://bench/repos/repo.git"
        imported = timed([sluice, "store", "import", "-q", url, repo], env=env)
        manifest = subprocess.run(["curl", "-s", f"http://{s3}/bench/repos/repo.git/manifest"],
                                  capture_output=True).stdout
        print(f"{args.refs} refs: import {imported:.2f} s, manifest {len(manifest)} bytes")
        local = Server(sluice, [served], env, work, "local")
        node = Server(sluice, ["--store", "s3://bench/repos", "--cache-dir",
                               os.path.join(work, "cache")], env, work, "node")
        client = os.path.join(work, "client")
        subprocess.run([git, "init", "-q", client], check=True)
        subprocess.run([git, "-C", client, "fetch", "-q", f"git://{local.git_address}/repo.git",
                        "refs/heads/main:refs/heads/main"], check=True)
        subprocess.run([git, "-C", client, "checkout", "-q", "main"], check=True)
        results = {"ls-remote local": [], "ls-remote node": [], "push local": [],
                   "push node": []}
        for r in range(args.runs):
            for name, server in [("local", local), ("node", node)]:
                results[f"ls-remote {name}"].append(
                    timed([git, "ls-remote", f"git://{server.git_address}/repo.git"]))
                subprocess.run([git, "-C", client, "commit", "-q", "--allow-empty", "-m",
                                f"{name}{r}"], check=True)
                results[f"push {name}"].append(timed(
                    [git, "-C", client, "push", "-q", f"git://{server.git_address}/repo.git",
                     f"HEAD:refs/heads/pushed-{name}-{r}"]))
        manifest = subprocess.run(["curl", "-s", f"http://{s3}/bench/repos/repo.git/manifest"],
                                  capture_output=True).stdout
        print(f"manifest after {args.runs} pushes: {len(manifest)} bytes")
        for name, values in results.items():
            print(f"{name:<16} {statistics.median(values):.3f} s")
        local.stop()
        node.stop()
    finally:
        weed.send_signal(signal.SIGTERM)
        weed.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

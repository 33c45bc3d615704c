#!/usr/bin/env python3
"""Clones from a store-backed node after its geometric roll: what counting costs when the
history pushed since the last full compaction sits in a rolled pack beside the big one.

For each Sluice binary given (`--sluice`, repeatable: an A/B on the same input), in one run on
one SeaweedFS (`weed mini`, started here):
  1. the repository is imported with its main branch `--behind` commits back, and compacted
     (one pack with a bitmap, as `sluice store maintain` leaves it);
  2. a node receives the rest of main's first-parent history in `--pushes` pushes of git's
     client; then the same node with `--maintain-after-packs 2`, asked by a ref-only push
     every 2 s, rolls the pushes' packs into one (the big pack kept, if the rolled one stays
     under half its size) until the manifest names two packs;
  3. clones of git's client from that node, timed: the first counts from the packs (and their
     bitmaps); the node remembers what the tips reach, so the next ones mostly copy.
Reported per binary: whether the manifest names a multi-pack-index, the first clone's client
wall and server CPU, and the medians of the clones after it.

    python3 bench/store_roll.py <bare repo> [--behind 2000] [--pushes 5] [--runs 5] \
        [--sluice A] [--sluice B] [--git git]
"""

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from store import Server, start_store, timed  # noqa: E402


def manifest(s3, name):
    with urllib.request.urlopen(f"http://{s3}/bench/{name}/repo.git/manifest") as answer:
        return answer.read().decode()


def prepared(args, work):
    """A copy of the repository whose main is `--behind` commits back, and the commits of
    main's first-parent history after that point, oldest first, in `--pushes` steps."""
    git = args.git
    copy = os.path.join(work, "behind.git")
    subprocess.run([git, "clone", "-q", "--bare", "--no-local", args.repo, copy], check=True)
    head = subprocess.run([git, "-C", copy, "symbolic-ref", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()
    later = subprocess.run([git, "-C", copy, "rev-list", "--first-parent", "--reverse",
                            f"{head}~{args.behind}..{head}"], check=True, capture_output=True,
                           text=True).stdout.split()
    subprocess.run([git, "-C", copy, "update-ref", head, f"{head}~{args.behind}"], check=True)
    # Only main: the other refs would carry the later history in.
    for ref in subprocess.run([git, "-C", copy, "for-each-ref", "--format=%(refname)"],
                              check=True, capture_output=True, text=True).stdout.split():
        if ref != head:
            subprocess.run([git, "-C", copy, "update-ref", "-d", ref], check=True)
    step = max(1, len(later) // args.pushes)
    points = later[step - 1::step][: args.pushes - 1] + [later[-1]]
    return copy, head, points


def one_binary(args, sluice, work, s3, env, label, source):
    git = args.git
    copy, head, points = source
    url = f"s3://bench/{label}/repo.git"
    subprocess.run([sluice, "store", "import", "-q", url, copy], env=env, check=True)
    subprocess.run([sluice, "store", "maintain", "-q", url], env=env, check=True)
    cache = os.path.join(work, f"cache-{label}")
    # The pushes to a node that does not maintain, so that every binary rolls the same packs.
    node = Server(sluice, ["--store", f"s3://bench/{label}", "--cache-dir", cache], env, work,
                  f"{label}-pushes")
    pusher = os.path.join(work, f"pusher-{label}")
    subprocess.run([git, "clone", "-q", "--bare", args.repo, pusher], check=True)
    target = f"git://{node.git_address}/repo.git"
    for point in points:
        subprocess.run([git, "-C", pusher, "push", "-q", target, f"{point}:{head}"], check=True)
    node.stop()
    node = Server(sluice, ["--store", f"s3://bench/{label}", "--cache-dir", cache,
                           "--maintain-after-packs", "2"], env, work, label)
    target = f"git://{node.git_address}/repo.git"
    # A node maintains after a push, unless it is busy: a ref-only push asks again until the
    # pushes' packs are rolled.
    deadline, asked = time.time() + 600, 0
    while sum(line.startswith("pack ") for line in manifest(s3, label).splitlines()) > 2:
        if time.time() > deadline:
            sys.exit(f"{label}: no roll: {manifest(s3, label)}")
        time.sleep(2)
        asked += 1
        subprocess.run([git, "-C", pusher, "push", "-q", target,
                        f"{points[-1]}:refs/heads/roll-{asked}"], check=True)
    text = manifest(s3, label)
    has_midx = any(line.startswith("midx ") for line in text.splitlines())
    clones = os.path.join(work, f"clones-{label}")
    os.mkdir(clones)
    runs = []
    for n in range(args.runs + 1):
        dest = os.path.join(clones, f"c{n}")
        got = timed(node, [git, "clone", "-q", "--bare", f"http://{node.address}/repo.git",
                           dest])
        shutil.rmtree(dest)
        runs.append(got)
    node.stop()
    # The first counts from the packs; the node remembers what the tips reach for the next.
    first, runs = runs[0], runs[1:]
    return {"sluice": label, "binary": sluice, "midx": has_midx,
            "packs": sum(line.startswith("pack ") for line in text.splitlines()),
            "first_wall_s": round(first[0], 3), "first_server_cpu_s": round(first[1], 3),
            "wall_s": round(statistics.median(r[0] for r in runs), 3),
            "server_cpu_s": round(statistics.median(r[1] for r in runs), 3),
            "runs": args.runs, "behind": args.behind, "pushes": len(points)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo")
    parser.add_argument("--behind", type=int, default=2000)
    parser.add_argument("--pushes", type=int, default=5)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--git", default="git")
    parser.add_argument("--sluice", action="append")
    parser.add_argument("--results", default="bench/results/store_roll.jsonl")
    args = parser.parse_args()
    binaries = [os.path.abspath(s) for s in (args.sluice or ["target/release/sluice"])]
    work = tempfile.mkdtemp(prefix="bench-roll-")
    weed, s3 = start_store(work)
    env = dict(os.environ, AWS_ENDPOINT_URL=f"http://{s3}", AWS_ALLOW_HTTP="true")
    rows = []
    try:
        source = prepared(args, work)
        for i, sluice in enumerate(binaries):
            rows.append(one_binary(args, sluice, work, s3, env, f"s{i}", source))
    finally:
        weed.send_signal(signal.SIGTERM)
        weed.wait()
    repo = os.path.basename(args.repo.rstrip("/"))
    print(f"{'binary':<24} {'midx':>5} {'packs':>6} {'first: wall s':>14} {'CPU s':>7} "
          f"{'then: wall s':>13} {'CPU s':>7}")
    with open(args.results, "a") as f:
        for row in rows:
            row.update(repo=repo, time=time.strftime("%Y-%m-%dT%H:%M:%S"))
            f.write(json.dumps(row) + "\n")
            print(f"{row['binary']:<24} {str(row['midx']):>5} {row['packs']:>6} "
                  f"{row['first_wall_s']:>14.2f} {row['first_server_cpu_s']:>7.3f} "
                  f"{row['wall_s']:>13.2f} {row['server_cpu_s']:>7.3f}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

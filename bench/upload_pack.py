#!/usr/bin/env python3
"""Server CPU of upload-pack: git's (with its pack-objects) against Sluice's, on the same
repository and the same protocol v2 requests, in turn, in one run.

Scenarios: a full clone (every branch and tag wanted, nothing had), and fetches by a client
whose history stops N days before the tip (the p5311 scenario: have = the last commit at least
N days older than HEAD). Reports median wall, user and system CPU, peak memory, the pack's
size, and Sluice's ratios to each git.

    python3 bench/upload_pack.py <bare repo> [--runs 3] [--days 1,7,30,128] [--no-clone]
        [--git /usr/bin/git --git /usr/local/bin/git] [--sluice target/release/sluice]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from common import run


def git_out(git, repo, *args):
    return subprocess.run([git, "-C", repo, *args], check=True, capture_output=True,
                          text=True).stdout


def pkt(line):
    data = line.encode()
    return b"%04x" % (len(data) + 4) + data


def fetch_request(wants, haves):
    parts = [pkt("command=fetch\n"), pkt("object-format=sha1\n"), b"0001",
             pkt("thin-pack\n"), pkt("ofs-delta\n"), pkt("include-tag\n"), pkt("no-progress\n")]
    parts += [pkt(f"want {w}\n") for w in wants]
    parts += [pkt(f"have {h}\n") for h in haves]
    parts += [pkt("done\n"), b"0000"]
    return b"".join(parts)


def pack_bytes(path):
    """Band-1 bytes of a v2 fetch response: the pack's size. Read in pieces, so that this
    process stays small: a child's peak-memory figure starts from its parent's size at fork."""
    size, in_pack = 0, False
    with open(path, "rb") as f:
        while True:
            head = f.read(4)
            if len(head) < 4:
                return size
            length = int(head, 16)
            if length < 4:
                continue
            if in_pack:
                band = f.read(1)
                f.seek(length - 5, os.SEEK_CUR)
                if band == b"\x01":
                    size += length - 5
            else:
                in_pack = f.read(length - 4) == b"packfile\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--days", default="1,7,30,128")
    parser.add_argument("--git", action="append")
    parser.add_argument("--sluice", default="target/release/sluice")
    parser.add_argument("--results", default="bench/results/upload-pack.jsonl")
    parser.add_argument("--no-clone", action="store_true", help="only the fetch scenarios")
    args = parser.parse_args()
    gits = args.git or ["/usr/bin/git"]
    sluice = os.path.abspath(args.sluice)
    repo = os.path.abspath(args.repo)
    work = tempfile.mkdtemp(prefix="bench-upload-pack-")

    tips = git_out(gits[0], repo, "for-each-ref", "--format=%(objectname)",
                   "refs/heads", "refs/tags").split()
    head = git_out(gits[0], repo, "rev-parse", "HEAD").strip()
    head_time = int(git_out(gits[0], repo, "log", "-1", "--format=%ct", "HEAD"))
    scenarios = [] if args.no_clone else [("clone", fetch_request(sorted(set(tips)), []))]
    for days in [int(d) for d in args.days.split(",") if d]:
        old = git_out(gits[0], repo, "rev-list", "-1", f"--before={head_time - days * 86400}",
                      "HEAD").strip()
        scenarios.append((f"fetch {days}d", fetch_request([head], [old])))

    env = dict(os.environ, GIT_PROTOCOL="version=2")
    tools = [(f"git {git_out(g, repo, 'version').split()[-1]}",
              [os.path.join(os.path.dirname(g), "git"), "upload-pack", repo]) for g in gits]
    tools.append(("sluice", [sluice, "upload-pack", repo]))
    print(f"{'scenario':<12} {'tool':<12} {'wall s':>8} {'user s':>8} {'sys s':>7} "
          f"{'peak MB':>8} {'pack MB':>9}")
    rows = []
    for name, request in scenarios:
        request_path = os.path.join(work, "request")
        with open(request_path, "wb") as f:
            f.write(request)
        medians = {}
        for tool, argv in tools:
            samples = []
            out = os.path.join(work, "response")
            for _ in range(args.runs):
                samples.append(run(argv, stdin_path=request_path, env=env, stdout_path=out))
            size = pack_bytes(out)
            wall, user, system, rss = (statistics.median(s[i] for s in samples)
                                       for i in range(4))
            medians[tool] = (wall, user, system, rss, size)
            print(f"{name:<12} {tool:<12} {wall:8.2f} {user:8.2f} {system:7.2f} "
                  f"{rss / 1024:8.0f} {size / 1e6:9.3f}")
            rows.append({"scenario": name, "tool": tool, "wall": wall, "user": user,
                         "sys": system, "peak_kib": rss, "pack_bytes": size,
                         "repo": repo, "runs": args.runs, "time": time.time()})
        ours = medians["sluice"]
        for tool, theirs in medians.items():
            if tool == "sluice":
                continue
            cpu = (ours[1] + ours[2]) / max(theirs[1] + theirs[2], 1e-9)
            print(f"{'':<12} sluice/{tool}: CPU {cpu:.2f}x, wall {ours[0] / theirs[0]:.2f}x, "
                  f"pack {ours[4] / max(theirs[4], 1):.3f}x")
    os.makedirs(os.path.dirname(args.results), exist_ok=True)
    with open(args.results, "a") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    sys.exit(main())

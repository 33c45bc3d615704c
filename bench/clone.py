#!/usr/bin/env python3
"""`sluice clone` beside `git clone` and `gix clone` (when installed) on the same repository,
in turn, one run of each per round: from a file:// URL (the upload-pack of the `--git` given
serves all three), from the plain path (where git and Sluice link the object files instead of
fetching), and from `sluice serve` over smart HTTP. Reports the median wall time, CPU
time (the client and every process it waits for, upload-pack included for file://), peak memory
of the largest process, and the ratio to git.

    python3 bench/clone.py <bare repo> [--runs 3] [--git /usr/bin/git] [--no-http]
                           [--only file|path|http]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from common import PORTABLE_LABEL, PORTABLE_SHA1_HELP, portable_sha1, run

HERE = os.path.dirname(os.path.abspath(__file__))


def find_gix():
    for candidate in [shutil.which("gix"), os.path.expanduser("~/.cargo/bin/gix")]:
        if candidate and os.path.exists(candidate):
            return candidate
    return None


def tools(args, gix, url):
    out = [("git", [args.git, "clone", "-q", url])]
    if gix:
        out.append(("gix", [gix, "clone", url]))
    out.append(("sluice", [args.sluice, "clone", "-q", url]))
    if args.portable_sha1:
        out.append((PORTABLE_LABEL, portable_sha1([args.sluice, "clone", "-q", url])))
    return out


def check(git, dest, expected_head):
    head = subprocess.run([git, "-C", dest, "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    if head != expected_head:
        sys.exit(f"{dest}: HEAD {head}, expected {expected_head}")
    status = subprocess.run([git, "-C", dest, "status", "--porcelain"], capture_output=True,
                            check=True).stdout
    if status:
        sys.exit(f"{dest}: status is not clean")


def same_server_env(git):
    """The environment every tool runs in: `git clone` spawns the upload-pack of its own
    exec-path, while sluice and gix spawn the first `git-upload-pack` on PATH, which on a
    machine with two gits can be the other one. Putting git's exec-path first serves all three
    from the same upload-pack."""
    exec_path = subprocess.run([git, "--exec-path"], capture_output=True, text=True,
                               check=True).stdout.strip()
    return dict(os.environ, PATH=exec_path + os.pathsep + os.environ.get("PATH", ""))


def bench(label, url, args, gix, work, expected_head, rows):
    samples = {name: [] for name, _ in tools(args, gix, url)}
    env = same_server_env(args.git)
    # Every clone stays until the whole benchmark is done: ext4 passes over inodes freed in
    # the last minutes when it allocates new ones, so a clone made right after deleting the
    # previous one paid for that deletion in its checkout (see bench/README.md, checkout).
    for run_number in range(args.runs):
        for name, argv in tools(args, gix, url):
            tag = "".join(c if c.isalnum() else "-" for c in label)
            dest = os.path.join(work, f"{tag}-{name}-{run_number}")
            subprocess.run(["sync"], check=True)
            wall, user, system, peak_kib = run(argv + [dest], cwd=work, env=env)
            check(args.git, dest, expected_head)
            samples[name].append((wall, user + system, peak_kib / 1024))
    git_wall = statistics.median(s[0] for s in samples["git"])
    git_cpu = statistics.median(s[1] for s in samples["git"])
    print(f"\n{label}: {url}")
    print(f"{'tool':<17} {'wall s':>8} {'CPU s':>8} {'peak MB':>8} {'wall/git':>9} {'CPU/git':>8}")
    for name, runs in samples.items():
        wall = statistics.median(s[0] for s in runs)
        cpu = statistics.median(s[1] for s in runs)
        peak = max(s[2] for s in runs)
        row = {"scenario": label, "tool": name, "repo": args.repo, "runs": args.runs,
               "wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "peak_mb": round(peak, 1),
               "wall_vs_git": round(wall / git_wall, 3), "cpu_vs_git": round(cpu / git_cpu, 3),
               "samples": [[round(x, 3) for x in s] for s in runs]}
        rows.append(row)
        print(f"{name:<17} {wall:>8.2f} {cpu:>8.2f} {peak:>8.0f} {wall / git_wall:>8.2f}x "
              f"{cpu / git_cpu:>7.2f}x")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--git", default="/usr/bin/git")
    parser.add_argument("--sluice", default="target/release/sluice")
    parser.add_argument("--no-http", action="store_true")
    parser.add_argument("--portable-sha1", action="store_true", help=PORTABLE_SHA1_HELP)
    parser.add_argument("--only", choices=["file", "path", "http"],
                        help="run one scenario instead of all")
    parser.add_argument("--results", default="bench/results/clone.jsonl")
    args = parser.parse_args()
    args.sluice = os.path.abspath(args.sluice)
    repo = os.path.abspath(args.repo)
    gix = find_gix()
    if not gix:
        print("gix is not installed: only git and sluice are compared", file=sys.stderr)
    head = subprocess.run([args.git, "-C", repo, "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    rows = []
    with tempfile.TemporaryDirectory(prefix="sluice-clone-bench-", dir="/tmp") as work:
        wanted = lambda scenario: args.only in (None, scenario)
        if wanted("file"):
            bench("file://", f"file://{repo}", args, gix, work, head, rows)
        if wanted("path"):
            bench("path", repo, args, gix, work, head, rows)
        if wanted("http") and not args.no_http:
            server = subprocess.Popen([args.sluice, "serve", "--http", "127.0.0.1:0", "--git",
                                       "off", os.path.dirname(repo)],
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            try:
                address = server.stdout.readline().decode().strip().rsplit("http://", 1)[1]
                url = f"http://{address}/{os.path.basename(repo)}"
                bench("sluice serve over HTTP", url, args, gix, work, head, rows)
            finally:
                server.terminate()
                server.wait()
    os.makedirs(os.path.dirname(args.results), exist_ok=True)
    with open(args.results, "a") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()

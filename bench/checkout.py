#!/usr/bin/env python3
"""Benchmark checkout: Sluice beside git (and gix when installed), in turn, on the same tree.

Usage: bench/checkout.py <bare-repository> [--rev main] [--from REV] [--runs 3] [--workers 2]
                         [--sluice PATH] [--git PATH] [--workdir DIR | --fresh-fs GIB]
                         [--cases fresh,switch,floor,after-delete] [--settle 60]

The tools take turns in a different order each round. `--fresh-fs 8` (root) measures on a new
ext4 file system, so that no earlier deletion on the machine weighs on one tool's result.

Cases, each timed for every tool in turn, several rounds:
  fresh   the whole tree of --rev into an empty work tree (a clone's checkout): git
          `checkout -f` with checkout.workers=<workers> and with checkout.workers=0... see below,
          sluice `checkout -f`, gix `free index checkout-exclusive` (from an index git made)
          and, beside them, the inflation floor: crates/sluice-odb/examples/read_blobs
          inflates every blob of --rev as the checkout does, on one thread, and writes
          nothing: the user CPU a checkout cannot go below without a faster inflater
  switch  from --from (default <rev>~1) to --rev in a checked-out work tree; beside the tools,
          the switch floor: bench/floor --from, which only makes the file system calls a forced
          switch must (an lstat of each file both trees share, an unlink and a create, write
          and fstat of each that changes), no object or index read
  after-delete
          a fresh checkout right after deleting (`rm -rf`) a checkout of the same tree that
          the same tool made, on the machine's own file system, as a CI agent does between
          jobs: ext4 skips inodes freed in the last half minute when it allocates, and how a
          checkout orders its directories and files decides how many it skips
  floor   bench/floor: only create and write the same files, contiguous halves on <workers>
          threads, one fstat each, no object read: the file system's own cost

git runs twice per case: with checkout.workers=<workers> and with checkout.workers=0 (one
worker per core); Sluice runs with its default (checkout.workers unset: two threads per
core). Reported: median wall, user and system CPU, peak memory, ratios to git
(checkout.workers=0), and Sluice's wall time over the floor's. Raw results go to
bench/results/checkout.jsonl.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import fresh_file_system, pack_files, program_files, run, settle  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def git(*args, cwd=None, env=None):
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True).stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", type=Path)
    parser.add_argument("--rev", default="HEAD")
    parser.add_argument("--from", dest="from_rev")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sluice", default=str(ROOT / "target" / "release" / "sluice"))
    parser.add_argument("--git", default=shutil.which("git") or "git")
    parser.add_argument("--cases", default="fresh,switch,floor,after-delete")
    parser.add_argument("--settle", type=float, default=60,
                        help="after-delete: seconds to wait before each deletion, so that no "
                             "earlier one still weighs on the run")
    parser.add_argument("--workdir", help="where work trees go (default: the system's temp dir)")
    parser.add_argument("--drop-caches", action="store_true",
                        help="before each fresh checkout, drop the page cache (root) and read the "
                             "packs and programs back in, so memory is in the same state for every "
                             "run (see bench/README.md: it also changes what peak memory counts)")
    parser.add_argument("--fresh-fs", metavar="GIB", type=int,
                        help="make a new ext4 file system of this size (a loop device; needs root) "
                             "for the work trees, so that no earlier deletion weighs on the result")
    args = parser.parse_args()
    if args.fresh_fs:
        with fresh_file_system(args.fresh_fs) as mount:
            args.workdir = mount
            return measure(args)
    return measure(args)


def after_delete(fresh_clone, command, settle):
    """Times `command` in a new work tree right after deleting one it checked out before.

    The timed tree stays (the temporary directory goes at the end), and `settle` seconds pass
    before the deletion, so that the deletion timed against is this one alone: ext4 counts an
    inode as recently deleted for 30 s, more while its inode table block is dirty."""
    previous = fresh_clone()
    subprocess.run(command, cwd=previous, check=True, capture_output=True)
    repo = fresh_clone()
    # The last job's files are long written when an agent deletes them.
    os.sync()
    time.sleep(settle)
    shutil.rmtree(previous)
    return run(command, cwd=repo)


def measure(args):
    source = args.source.resolve()
    rev = git("-C", str(source), "rev-parse", args.rev).decode().strip()
    from_rev = git("-C", str(source), "rev-parse", args.from_rev or f"{args.rev}~1").decode().strip()
    cases = args.cases.split(",")
    floor = ROOT / "bench" / "floor" / "target" / "release" / "checkout-floor"
    if "floor" in cases or "switch" in cases:
        subprocess.run(["cargo", "build", "--release", "-q", "--manifest-path", str(ROOT / "bench" / "floor" / "Cargo.toml")], check=True)
    read_blobs = ROOT / "target" / "release" / "examples" / "read_blobs"
    if "fresh" in cases:
        subprocess.run(["cargo", "build", "--release", "-q", "--example", "read_blobs", "-p", "sluice-odb"],
                       cwd=ROOT, check=True)
    gix = shutil.which("gix")
    # With --drop-caches, each fresh checkout starts with the page cache dropped and the packs
    # and programs read back in (as root).
    warm = pack_files(source) + program_files(args.sluice, args.git, gix, str(floor), str(read_blobs))
    objects = source / "objects" if (source / "objects").is_dir() else source / ".git" / "objects"
    results = []
    # Every timed run writes into a directory of its own, and nothing is deleted until all runs
    # are done (but in the after-delete case, which measures just that, so it runs last):
    # ext4 skips inodes freed in the last minutes when it allocates new ones, so a run right
    # after a large deletion measured the deletion (up to 10x the system time).
    with tempfile.TemporaryDirectory(prefix="sluice-bench-", dir=args.workdir) as tmp:
        tmp = Path(tmp)
        counter = iter(range(1_000_000))

        def fresh_clone(at: str = None):
            repo = tmp / f"wt{next(counter)}"
            subprocess.run([args.git, "clone", "-q", "--no-checkout", "--shared", str(source), str(repo)], check=True)
            for r in (rev, from_rev):
                git("-C", str(repo), "update-ref", f"refs/heads/bench-{r[:12]}", r)
            git("-C", str(repo), "symbolic-ref", "HEAD", f"refs/heads/bench-{rev[:12]}")
            if at:
                git("-C", str(repo), "checkout", "-q", "-f", f"bench-{at[:12]}")
            return repo

        branch = f"bench-{rev[:12]}"
        manifest = tmp / "manifest"
        manifest.write_bytes(git("-C", str(source), "ls-tree", "-r", "-l", rev))
        from_manifest = tmp / "from-manifest"
        from_manifest.write_bytes(git("-C", str(source), "ls-tree", "-r", "-l", from_rev))
        files = len(manifest.read_text().splitlines())
        gix_index = tmp / "gix-index"
        probe = fresh_clone()
        env = dict(os.environ, GIT_INDEX_FILE=str(gix_index))
        git("-C", str(probe), "read-tree", rev, env=env)
        print(f"repository: {source}, {files} entries at {rev[:12]}, switch from {from_rev[:12]}, workers {args.workers}, runs {args.runs}")

        tools = [
            (f"git workers={args.workers}", lambda b: [args.git, "-c", f"checkout.workers={args.workers}", "checkout", "-q", "-f", b]),
            ("git workers=0", lambda b: [args.git, "-c", "checkout.workers=0", "checkout", "-q", "-f", b]),
            # Sluice with its own default (checkout.workers unset: two threads per core).
            ("sluice", lambda b: [args.sluice, "checkout", "-q", "-f", b]),
        ]
        # Each case's floor takes its turn with the tools: the inflation floor beside a fresh
        # checkout, the switch floor in a work tree at --from.
        beside = {
            "fresh": ("inflate", lambda b: [str(read_blobs), str(objects)]),
            "switch": ("floor", lambda b: [str(floor), str(manifest), ".", str(args.workers),
                                           "--from", str(from_manifest)]),
        }
        for case in cases:
            samples = {}
            for round_number in range(args.runs):
                if case == "after-delete":
                    turn = round_number % len(tools)
                    for label, command in tools[turn:] + tools[:turn]:
                        sample = after_delete(fresh_clone, command(branch), args.settle)
                        samples.setdefault(label, []).append(sample)
                    continue
                if case == "floor":
                    dest = tmp / f"floor{next(counter)}"
                    dest.mkdir()
                    settle(warm if args.drop_caches else None)
                    samples.setdefault("floor", []).append(run([str(floor), str(manifest), str(dest), str(args.workers)]))
                    continue
                # The order turns each round: a tool run right after another's large write
                # finds the file system in a different state.
                turning = tools + [beside[case]]
                turn = round_number % len(turning)
                for label, command in turning[turn:] + turning[:turn]:
                    repo = fresh_clone(from_rev if case == "switch" else None)
                    # A switch keeps the page cache: dropped, git re-read racily clean files
                    # from disk (3.7 s against 1.1 s) instead of measuring the switch.
                    settle(warm if args.drop_caches and case != "switch" else None)
                    stdin = manifest if label == "inflate" else None
                    samples.setdefault(label, []).append(run(command(branch), cwd=repo, stdin_path=stdin))
                if case == "fresh" and gix:
                    dest = tmp / f"gix{next(counter)}"
                    settle(warm if args.drop_caches else None)
                    samples.setdefault("gix", []).append(run([gix, "free", "index", "--index-path", str(gix_index), "checkout-exclusive", "--repository", str(probe / ".git"), str(dest)]))
            print(f"\ncase: {case}")
            print(f"{'tool':<16} {'wall s':>8} {'user s':>8} {'sys s':>8} {'peak MiB':>9} {'wall/git0':>10} {'user/git0':>10}")
            base = samples.get("git workers=0")
            base = (statistics.median(s[0] for s in base), statistics.median(s[1] for s in base)) if base else None
            for label, rows in samples.items():
                wall = statistics.median(s[0] for s in rows)
                user = statistics.median(s[1] for s in rows)
                system = statistics.median(s[2] for s in rows)
                rss = statistics.median(s[3] for s in rows) / 1024
                ratio = (f"{wall / max(base[0], 1e-9):10.2f} {user / max(base[1], 1e-9):10.2f}"
                         if base else f"{'':>10} {'':>10}")
                print(f"{label:<16} {wall:8.2f} {user:8.2f} {system:8.2f} {rss:9.0f} {ratio}", flush=True)
                results.append({"case": case, "tool": label, "wall": wall, "user": user, "sys": system,
                                "peak_mib": rss, "files": files, "source": str(source), "samples": rows})
    # The fresh checkout's floor is a case of its own; the switch's runs within the switch case.
    for case, floor_case in (("fresh", "floor"), ("switch", "switch")):
        floor_rows = [r for r in results if r["tool"] == "floor" and r["case"] == floor_case]
        sluice = [r for r in results if r["case"] == case and r["tool"] == "sluice"]
        if floor_rows and sluice:
            print(f"\nsluice {case} / floor: {sluice[0]['wall'] / max(floor_rows[0]['wall'], 1e-9):.2f}")
    log = ROOT / "bench" / "results" / "checkout.jsonl"
    with open(log, "a") as f:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        for r in results:
            f.write(json.dumps({"time": stamp, **r}) + "\n")
    print(f"raw results appended to {log.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

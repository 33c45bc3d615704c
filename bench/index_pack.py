#!/usr/bin/env python3
"""Benchmark index-pack: Sluice beside git (and gix when installed) on the same pack.

Usage: bench/index_pack.py <repository-or-pack> [--runs N] [--threads N] [--mode file|stdin|both]
                          [--fix-thin <repository>] [--sluice PATH] [--git PATH]...

With --fix-thin, the pack is a thin pack and the mode is `index-pack --stdin --fix-thin` into a
copy (hard links) of <repository>, which holds the bases it leaves out.

Each tool indexes the same pack in turn, several rounds, so that all of them see the same
disk and page-cache state. Reported per tool: median wall time, median CPU time (user +
system), median peak RSS, and the ratio of each to git's (the first --git). Raw results are
appended to bench/results/index-pack.jsonl.
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
from common import PORTABLE_LABEL, PORTABLE_SHA1_HELP, portable_sha1, run  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def find_pack(path: Path) -> Path:
    if path.suffix == ".pack":
        return path
    for base in (path / "objects" / "pack", path / ".git" / "objects" / "pack"):
        if base.is_dir():
            packs = sorted(base.glob("*.pack"), key=lambda p: p.stat().st_size)
            if packs:
                return packs[-1]
    sys.exit(f"no pack found in {path}")




def commands(tool, exe, pack, work, threads, mode, thin_base=None):
    """The command for one tool and mode, and the stdin to give it."""
    out = work / tool
    if out.exists():
        shutil.rmtree(out)
    out.mkdir()
    if mode == "fix-thin":
        subprocess.run(["cp", "-al", str(thin_base), str(out / "repo")], check=True)
        if tool == "gix":
            return None, None, None
        return [exe, "index-pack", f"--threads={threads}", "--stdin", "--fix-thin"], pack, out / "repo"
    if tool == "gix":
        base = [exe, "--threads", str(threads), "free", "pack", "index", "create"]
        if mode == "file":
            return base + ["-p", str(pack), str(out)], None, None
        return base + [str(out)], pack, None
    if mode == "file":
        return [exe, "index-pack", f"--threads={threads}", "-o", str(out / "x.idx"), str(pack)], None, None
    subprocess.run([shutil.which("git") or "git", "init", "-q", "--bare", str(out / "repo")], check=True)
    return [exe, "index-pack", f"--threads={threads}", "--stdin"], pack, out / "repo"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--mode", choices=["file", "stdin", "both"], default="both")
    parser.add_argument("--sluice", default=str(ROOT / "target" / "release" / "sluice"))
    parser.add_argument("--git", action="append", help="git binaries (default: git on PATH)")
    parser.add_argument("--no-gix", action="store_true")
    parser.add_argument("--fix-thin", type=Path, help="repository holding the thin pack's bases")
    parser.add_argument("--portable-sha1", action="store_true", help=PORTABLE_SHA1_HELP)
    args = parser.parse_args()

    pack = find_pack(args.source.resolve())
    tools = [(f"git {subprocess.run([g, '--version'], capture_output=True, text=True).stdout.split()[-1]}", "git", g)
             for g in (args.git or [shutil.which("git") or "git"])]
    tools.append(("sluice", "sluice", args.sluice))
    if args.portable_sha1:
        tools.append((PORTABLE_LABEL, "sluice", args.sluice))
    gix = shutil.which("gix")
    if gix and not args.no_gix:
        tools.append(("gix", "gix", gix))
    modes = ["file", "stdin"] if args.mode == "both" else [args.mode]
    if args.fix_thin:
        modes = ["fix-thin"]
    size = pack.stat().st_size
    print(f"pack: {pack} ({size / 2**20:.0f} MiB), threads: {args.threads}, runs: {args.runs}")

    results = []
    with tempfile.TemporaryDirectory(prefix="sluice-bench-", dir=os.environ.get("TMPDIR")) as tmp:
        work = Path(tmp)
        for mode in modes:
            samples = {label: [] for label, _, _ in tools}
            stages = []
            traced = {**os.environ, "SLUICE_TRACE_PERFORMANCE": "1"}
            for _ in range(args.runs):
                for label, tool, exe in tools:
                    argv, stdin, cwd = commands(tool, exe, pack, work, args.threads, mode, args.fix_thin)
                    if argv is None:
                        continue
                    if label == PORTABLE_LABEL:
                        argv = portable_sha1(argv)
                    sluice = label == "sluice"
                    wall, user, system, rss = run(argv, stdin, cwd, env=traced if sluice else None,
                                                  stages=stages if sluice else None)
                    samples[label].append((wall, user + system, rss))
            base = None
            print(f"\nmode: {mode}")
            print(f"{'tool':<17} {'wall s':>8} {'cpu s':>8} {'peak MiB':>9} {'wall/git':>9} {'cpu/git':>8} {'mem/git':>8}")
            for label, _, _ in tools:
                if not samples[label]:
                    continue
                wall = statistics.median(s[0] for s in samples[label])
                cpu = statistics.median(s[1] for s in samples[label])
                rss = statistics.median(s[2] for s in samples[label]) / 1024
                if base is None:
                    base = (wall, cpu, rss)
                print(f"{label:<17} {wall:8.2f} {cpu:8.2f} {rss:9.0f} {wall / base[0]:9.2f} {cpu / base[1]:8.2f} {rss / base[2]:8.2f}")
                results.append({"pack": str(pack), "bytes": size, "mode": mode, "tool": label,
                                "threads": args.threads, "wall": wall, "cpu": cpu, "peak_mib": rss,
                                "samples": samples[label]})
            titles = list(dict.fromkeys(title for title, _, _ in stages))
            for title in titles:
                of = [(s, m) for t, s, m in stages if t == title]
                wall = statistics.median(s for s, _ in of)
                peak = statistics.median(m for _, m in of)
                print(f"  sluice stage {title!r}: {wall:.2f} s, peak {peak:.1f} MB")
                results.append({"pack": str(pack), "mode": mode, "tool": "sluice", "stage": title,
                                "wall": wall, "peak_mb": peak})
    log = ROOT / "bench" / "results" / "index-pack.jsonl"
    with open(log, "a") as f:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        for r in results:
            f.write(json.dumps({"time": stamp, **r}) + "\n")
    print(f"\nraw results appended to {log.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

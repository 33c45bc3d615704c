#!/usr/bin/env python3
"""Pushes, taken by Sluice and by git, in turn on the same input in one run.

Three scenarios (issue 30's bars), each reporting median wall time, and for the server and
the client apart: CPU time and peak memory.

  http     The whole history of a repository (every branch and tag) pushed into an empty bare
           repository over smart HTTP: `git push` to git http-backend behind a small threaded
           web server (scripts/git_http_server.py, CGI as a web server runs it; its own CPU is
           shown apart) against `git push` to `sluice serve`, and `sluice push` to `sluice
           serve`. Server CPU is the whole server process tree.
  loose    One new commit of 150 new files (a pack above receive.unpackLimit) pushed into a
           bare copy of the repository that has --loose loose objects beside its pack (seed
           001's case: index-pack's collision check against a repository full of loose
           objects), git receive-pack against sluice receive-pack, over a local path.
  behind   The repository's branches and tags pushed onto a copy that is --days days behind
           (a 13 MB thin pack for git/git at 128 days; git's server spends its time in the
           connectivity walk), over a local path.

    python3 bench/push.py <bare repo> [--scenarios http,loose,behind] [--runs 3]
        [--git /usr/bin/git] [--loose 64000] [--days 128] [--fresh-fs 16]

The tools take turns in each round, in a different order each round.
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

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from common import TIME, fresh_file_system, run  # noqa: E402


def git_cmd(git, *args, cwd=None, input=None):
    return subprocess.run([git, *args], cwd=cwd, input=input, capture_output=True,
                          check=True).stdout


def start_git_http(work, root, git):
    port_file = os.path.join(work, "port")
    if os.path.exists(port_file):
        os.unlink(port_file)
    proc = subprocess.Popen([sys.executable, os.path.join(HERE, "..", "scripts",
                                                           "git_http_server.py"),
                             port_file, root, git], stderr=subprocess.PIPE)
    while not os.path.exists(port_file) or not open(port_file).read():
        time.sleep(0.05)
    return proc, f"127.0.0.1:{open(port_file).read()}"


def start_sluice_http(root, sluice):
    proc = subprocess.Popen([sluice, "serve", "--http", "127.0.0.1:0", "--git", "off", root],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    line = proc.stdout.readline().decode()
    return proc, line.strip().rsplit("http://", 1)[1]


def stop(proc):
    """Stops a server; returns (CPU s, peak KiB) of its process tree and the front end's own
    CPU when it reports it."""
    proc.send_signal(signal.SIGTERM)
    _, _, usage = os.wait4(proc.pid, 0)
    front = None
    if proc.stderr:
        for line in proc.stderr.read().decode().splitlines():
            if line.startswith("{"):
                front = json.loads(line)["front_end_cpu"]
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss, front


def rotate(items, round_):
    """The tools in a different order each round (the first of a round is not always one)."""
    items = list(items)
    k = round_ % len(items)
    return items[k:] + items[:k]


def empty_bare(path, git):
    if os.path.exists(path):
        shutil.rmtree(path)
    git_cmd(git, "init", "-q", "--bare", path)
    git_cmd(git, "-C", path, "config", "http.receivepack", "true")


def check_refs(git, source, target):
    want = git_cmd(git, "-C", source, "for-each-ref", "refs/heads", "refs/tags")
    got = git_cmd(git, "-C", target, "for-each-ref", "refs/heads", "refs/tags")
    if want != got:
        sys.exit(f"{target}: refs differ from {source}")


def scenario_http(args, work, sluice):
    """Whole history over smart HTTP."""
    root = os.path.join(work, "served")
    os.makedirs(root, exist_ok=True)
    target = os.path.join(root, "target.git")
    tools = [("git push -> git http-backend", "git", "git"),
             ("git push -> sluice serve", "git", "sluice"),
             ("sluice push -> sluice serve", "sluice", "sluice")]
    results = {name: [] for name, _, _ in tools}
    for round_ in range(args.runs):
        for name, client, server in rotate(tools, round_):
            empty_bare(target, args.git)
            if server == "git":
                proc, address = start_git_http(work, root, args.git)
            else:
                proc, address = start_sluice_http(root, sluice)
            url = f"http://{address}/target.git"
            program = args.git if client == "git" else sluice
            argv = [program, "-C", args.repo, "push", "-q", url,
                    "refs/heads/*:refs/heads/*", "refs/tags/*:refs/tags/*"]
            wall, user, system, peak = run(argv)
            server_cpu, server_peak, front = stop(proc)
            check_refs(args.git, args.repo, target)
            results[name].append({"wall": wall, "client_cpu": user + system,
                                  "client_peak_kb": peak, "server_cpu": server_cpu,
                                  "server_peak_kb": server_peak, "front_end_cpu": front})
    return results


def receive_pack_wrapper(work, name, program):
    """A receive-pack command that records its CPU and peak memory (GNU time)."""
    out = os.path.join(work, f"{name}.time")
    return out, f"{TIME} -f '%U %S %M' -o {out} {program}"


def timed_push(args, work, client_repo, target, refspecs, server, sluice):
    program = f"{args.git} receive-pack" if server == "git" else f"{sluice} receive-pack"
    record, command = receive_pack_wrapper(work, server, program)
    argv = [args.git, "-C", client_repo, "push", "-q", f"--receive-pack={command}", target,
            *refspecs]
    wall, user, system, peak = run(argv)
    u, s, m = open(record).read().split()[-3:]
    server_cpu = float(u) + float(s)
    # The client's rusage counts the receive-pack it waited for: taken out.
    return {"wall": wall, "client_cpu": user + system - server_cpu, "client_peak_kb": peak,
            "server_cpu": server_cpu, "server_peak_kb": int(m)}


def scenario_loose(args, work, sluice):
    """One commit into a copy with many loose objects."""
    client = os.path.join(work, "loose-client")
    if not os.path.exists(client):
        git_cmd(args.git, "clone", "-q", "--shared", args.repo, client)
        git_cmd(args.git, "-C", client, "checkout", "-q", "-B", "pushed")
        # Above receive.unpackLimit (100), so that the push is indexed as a pack and every
        # object meets the collision check, as in seed 001.
        os.makedirs(os.path.join(client, "new"), exist_ok=True)
        for i in range(150):
            with open(os.path.join(client, "new", f"file-{i}"), "w") as f:
                f.write(f"a file new in this push: {i}\n")
        git_cmd(args.git, "-C", client, "add", "new")
        git_cmd(args.git, "-C", client, "-c", "user.name=b", "-c", "user.email=b@b",
                "commit", "-q", "-m", "one commit")
    results = {"git receive-pack": [], "sluice receive-pack": []}
    template = os.path.join(work, "loose-template.git")
    if not os.path.exists(template):
        git_cmd(args.git, "clone", "-q", "--bare", "--shared", args.repo, template)
        # Not gc --auto (receive.autogc) after each push: 64,000 loose objects are past
        # gc.auto, and a gc in the background would race the next round.
        git_cmd(args.git, "-C", template, "config", "gc.auto", "0")
        # Loose objects, as many pushes below receive.unpackLimit leave them.
        lines = "".join(f"loose object {i}\n" for i in range(args.loose))
        paths = os.path.join(work, "loose-paths")
        os.makedirs(paths, exist_ok=True)
        names = []
        for i, line in enumerate(lines.splitlines(keepends=True)):
            name = os.path.join(paths, str(i))
            with open(name, "w") as f:
                f.write(line)
            names.append(name)
        git_cmd(args.git, "-C", template, "hash-object", "-w", "--stdin-paths",
                input="\n".join(names).encode() + b"\n")
        shutil.rmtree(paths)
    for round_ in range(args.runs):
        for name in rotate(results, round_):
            target = os.path.join(work, "loose-target.git")
            if os.path.exists(target):
                shutil.rmtree(target)
            shutil.copytree(template, target, symlinks=True)
            server = name.split()[0]
            results[name].append(timed_push(args, work, client, target,
                                            ["pushed:refs/heads/pushed"], server, sluice))
    return results


def scenario_behind(args, work, sluice):
    """Branches and tags onto a copy days behind."""
    results = {"git receive-pack": [], "sluice receive-pack": []}
    template = os.path.join(work, "behind-template.git")
    if not os.path.exists(template):
        head = git_cmd(args.git, "-C", args.repo, "log", "-1", "--format=%ct", "HEAD").decode()
        cut = int(head) - args.days * 86400
        old = git_cmd(args.git, "-C", args.repo, "rev-list", "-1", f"--before={cut}",
                      "HEAD").decode().strip()
        git_cmd(args.git, "init", "-q", "--bare", template)
        pack = subprocess.run([args.git, "-C", args.repo, "pack-objects", "--revs", "--stdout",
                               "-q"], input=old.encode() + b"\n", capture_output=True,
                              check=True).stdout
        git_cmd(args.git, "-C", template, "index-pack", "--stdin", input=pack)
        git_cmd(args.git, "-C", template, "update-ref", "refs/heads/master", old)
    for round_ in range(args.runs):
        for name in rotate(results, round_):
            target = os.path.join(work, "behind-target.git")
            if os.path.exists(target):
                shutil.rmtree(target)
            shutil.copytree(template, target)
            server = name.split()[0]
            results[name].append(timed_push(args, work, args.repo, target,
                                            ["refs/heads/*:refs/heads/*",
                                             "refs/tags/*:refs/tags/*"], server, sluice))
            check_refs(args.git, args.repo, target)
    return results


def report(scenario, results, rows, baseline):
    print(f"\n{scenario}")
    print(f"{'':<32} {'wall s':>8} {'server CPU s':>13} {'server MB':>10} {'client CPU s':>13} "
          f"{'client MB':>10}")
    med = {}
    for name, runs in results.items():
        m = {k: statistics.median(r[k] for r in runs)
             for k in ("wall", "server_cpu", "server_peak_kb", "client_cpu", "client_peak_kb")}
        med[name] = m
        front = [r.get("front_end_cpu") for r in runs if r.get("front_end_cpu") is not None]
        extra = f"  (front end {statistics.median(front):.2f} s)" if front else ""
        print(f"{name:<32} {m['wall']:>8.2f} {m['server_cpu']:>13.2f} "
              f"{m['server_peak_kb'] / 1024:>10.0f} {m['client_cpu']:>13.2f} "
              f"{m['client_peak_kb'] / 1024:>10.0f}{extra}")
        rows.append({"scenario": scenario, "tool": name, "runs": len(runs), **m,
                     "front_end_cpu": statistics.median(front) if front else None})
    base = med[baseline]
    for name, m in med.items():
        if name != baseline:
            print(f"{name} / {baseline}: wall {m['wall'] / base['wall']:.2f}x, "
                  f"server CPU {m['server_cpu'] / base['server_cpu']:.2f}x")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo")
    parser.add_argument("--scenarios", default="http,loose,behind")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--git", default="/usr/bin/git")
    parser.add_argument("--sluice", default="target/release/sluice")
    parser.add_argument("--loose", type=int, default=64000)
    parser.add_argument("--days", type=int, default=128)
    parser.add_argument("--results", default="bench/results/push.jsonl")
    parser.add_argument("--fresh-fs", metavar="GIB", type=int,
                        help="make a new ext4 file system of this size (a loop device; needs root) "
                             "for the servers' repositories, so that no earlier deletion weighs "
                             "on the result (inode allocation after many deletions took 40%% of "
                             "a small push's server time here)")
    args = parser.parse_args()
    if args.fresh_fs:
        with fresh_file_system(args.fresh_fs) as mount:
            return measure(args, mount)
    return measure(args, None)


def measure(args, workdir):
    args.repo = os.path.abspath(args.repo)
    sluice = os.path.abspath(args.sluice)
    work = tempfile.mkdtemp(prefix="bench-push-", dir=workdir)
    version = git_cmd(args.git, "version").decode().split()[-1]
    print(f"{args.repo}, git {version}, {args.runs} runs, medians")
    rows = []
    try:
        for scenario in args.scenarios.split(","):
            if scenario == "http":
                report("http: whole history into an empty repository", scenario_http(
                    args, work, sluice), rows, "git push -> git http-backend")
            elif scenario == "loose":
                report(f"loose: one commit, {args.loose} loose objects on the server",
                       scenario_loose(args, work, sluice), rows, "git receive-pack")
            elif scenario == "behind":
                report(f"behind: branches and tags onto a copy {args.days} days behind",
                       scenario_behind(args, work, sluice), rows, "git receive-pack")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    with open(args.results, "a") as f:
        for row in rows:
            row.update(repo=os.path.basename(args.repo.rstrip("/")), git=version,
                       time=time.strftime("%Y-%m-%dT%H:%M:%S"))
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Concurrent clones over smart HTTP: sluice serve against git http-backend behind a small
threaded Python front end (CGI, as a web server runs it), on the same repository, in turn.

N real `git clone --bare` clients start at once; each result must have the source's refs.
Reports the clients' wall time, the server's CPU (the whole process tree: for git the front
end, http-backend, upload-pack and pack-objects; the front end's own share is shown too) and
the largest server process's peak memory.

    python3 bench/http_clones.py <bare repo> [--clients 16] [--git /usr/bin/git] [--pack-cache]
"""

import argparse
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def start_git_server(work, root, git):
    port_file = os.path.join(work, "port")
    proc = subprocess.Popen([sys.executable, os.path.join(HERE, "..", "scripts", "git_http_server.py"),
                             port_file, root, git], stderr=subprocess.PIPE)
    while not os.path.exists(port_file) or not open(port_file).read():
        time.sleep(0.05)
    return proc, f"127.0.0.1:{open(port_file).read()}"


def start_sluice_server(root, sluice, extra=()):
    proc = subprocess.Popen([sluice, "serve", "--http", "127.0.0.1:0", "--git", "off", *extra,
                             root], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    line = proc.stdout.readline().decode()
    return proc, line.strip().rsplit("http://", 1)[1]


def clone_all(address, clients, work, git, expected):
    dests = [os.path.join(work, f"clone-{i}") for i in range(clients)]
    start = time.perf_counter()
    procs = [subprocess.Popen([git, "clone", "-q", "--bare", f"http://{address}/repo.git", d],
                              stderr=subprocess.PIPE) for d in dests]
    failures = [p.stderr.read().decode() for p in procs if p.wait() != 0]
    wall = time.perf_counter() - start
    if failures:
        sys.exit(f"clones failed: {failures[0]}")
    for d in dests:
        refs = subprocess.run([git, "-C", d, "for-each-ref", "refs/heads", "refs/tags"],
                              capture_output=True, check=True).stdout
        if refs != expected:
            sys.exit(f"{d}: refs differ from the source")
        shutil.rmtree(d)
    return wall


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    _, status, usage = os.wait4(proc.pid, 0)
    return usage


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--git", default="/usr/bin/git")
    parser.add_argument("--sluice", default="target/release/sluice")
    parser.add_argument("--results", default="bench/results/http-clones.jsonl")
    parser.add_argument("--pack-cache", action="store_true",
                        help="also run sluice serve with a pack cache (identical requests share "
                             "one pack)")
    args = parser.parse_args()
    sluice = os.path.abspath(args.sluice)
    work = tempfile.mkdtemp(prefix="bench-http-")
    root = os.path.join(work, "served")
    os.mkdir(root)
    os.symlink(os.path.abspath(args.repo), os.path.join(root, "repo.git"))
    expected = subprocess.run([args.git, "-C", args.repo, "for-each-ref", "refs/heads",
                               "refs/tags"], capture_output=True, check=True).stdout
    version = subprocess.run([args.git, "version"], capture_output=True, text=True).stdout.split()[-1]
    rows = []
    print(f"{'server':<22} {'clients wall s':>14} {'server CPU s':>13} {'front end s':>12} "
          f"{'peak MB':>8}")
    tools = [f"git {version} http-backend", "sluice serve"]
    if args.pack_cache:
        tools.append("sluice serve --pack-cache")
    for tool in tools:
        if tool.startswith("git"):
            proc, address = start_git_server(work, root, args.git)
        elif tool.endswith("--pack-cache"):
            cache = os.path.join(work, "pack-cache")
            proc, address = start_sluice_server(root, sluice, ["--pack-cache", cache])
        else:
            proc, address = start_sluice_server(root, sluice)
        wall = clone_all(address, args.clients, work, args.git, expected)
        usage = stop(proc)
        cpu = usage.ru_utime + usage.ru_stime
        front = None
        if tool.startswith("git"):
            for line in proc.stderr.read().decode().splitlines():
                if line.startswith("{"):
                    front = json.loads(line)["front_end_cpu"]
        row = {"repo": os.path.basename(os.path.abspath(args.repo).rstrip("/")),
               "clients": args.clients, "server": tool, "clients_wall_s": round(wall, 3),
               "server_cpu_s": round(cpu, 3), "front_end_cpu_s": front,
               "peak_mb": round(usage.ru_maxrss / 1024, 1)}
        rows.append(row)
        print(f"{tool:<22} {wall:>14.2f} {cpu:>13.2f} "
              f"{'' if front is None else f'{front:.2f}':>12} {row['peak_mb']:>8.0f}")
    git_row = rows[0]
    backend_cpu = git_row["server_cpu_s"] - (git_row["front_end_cpu_s"] or 0)
    for row in rows[1:]:
        print(f"{row['server']}/git server CPU: {row['server_cpu_s'] / git_row['server_cpu_s']:.2f}x "
              f"(without the front end's share: {row['server_cpu_s'] / backend_cpu:.2f}x)")
    with open(args.results, "a") as f:
        for row in rows:
            row["time"] = time.strftime("%Y-%m-%dT%H:%M:%S")
            f.write(json.dumps(row) + "\n")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()

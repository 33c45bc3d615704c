#!/usr/bin/env python3
"""Serving from object storage: `sluice serve --store` nodes on a real store (SeaweedFS's
`weed mini`, started here on ports of its own) beside `sluice serve` on a local copy of the
same repository, in one run.

Each round times, over smart HTTP with git's client:
  local      a clone from `sluice serve <dir>`;
  warm       a clone from a store-backed node that has served the repository before;
  cold       a clone from a new node with an empty cache (its first request);
  ranged     the same from a new node that reads large packs in ranges (`--read-ranges-above`),
             and what a ref listing (`git ls-remote`) from such a node, and from a plain new
             node, costs the store in bytes;
  bundle     `git -c transfer.bundleURI=true clone` from a node that advertises the store's
             bundle (`--bundle-uri`): the bytes the node sent against a full clone's;
  push       a one-commit push to the local server and to a store-backed node;
  fetch      an up-to-date `git fetch` from a node, with the store requests it cost (from the
             node's /metrics).
And over ssh (a stand-in that runs the command locally, as sshd would), where each request is
a process of its own: a clone through `sluice upload-pack` of the local copy beside one through
`sluice upload-pack --store` on a warm shared cache (wall, and the CPU of client and server
together, as the server is a child of the client's ssh).
Reported: median client wall, the server's CPU per operation, the bytes the server sent, the
requests the server sent the store (from its /metrics; none for the local server), and the
ratios the store-backed node must meet (issue 49).

    python3 bench/store.py <bare repo> [--runs 3] [--sluice target/release/sluice] [--git git]
"""

import argparse
import json
import os
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from common import process_cpu  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_store(work):
    """weed mini on ports of its own; returns (process, s3 address)."""
    base = 21000 + (os.getpid() % 400) * 10
    data = os.path.join(work, "weed")
    os.mkdir(data)
    log = open(os.path.join(work, "weed.log"), "w")
    proc = subprocess.Popen(
        ["weed", "mini", f"-dir={data}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
         "-admin.ui=false", f"-s3.port={base}", f"-master.port={base + 1}",
         f"-filer.port={base + 2}", f"-volume.port={base + 3}", f"-admin.port={base + 4}",
         f"-webdav.port={base + 5}"], stdout=log, stderr=log)
    address = f"127.0.0.1:{base}"
    for _ in range(300):
        if subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "PUT",
                           f"http://{address}/bench"], capture_output=True,
                          text=True).stdout == "200":
            return proc, address
        time.sleep(0.2)
    sys.exit("weed mini did not start")


class Server:
    """A `sluice serve` with its access log, whose `sent=` fields count the bytes sent."""

    def __init__(self, sluice, args, env, work, name):
        self.log_path = os.path.join(work, f"{name}.log")
        self.log = open(self.log_path, "w")
        port, git_port = free_port(), free_port()
        self.proc = subprocess.Popen([sluice, "serve", "--http", f"127.0.0.1:{port}", "--git",
                                      f"127.0.0.1:{git_port}", "--enable", "receive-pack", *args],
                                     stdout=subprocess.PIPE, stderr=self.log, env=env)
        self.proc.stdout.readline()
        self.proc.stdout.readline()
        self.address = f"127.0.0.1:{port}"
        self.git_address = f"127.0.0.1:{git_port}"

    def cpu(self):
        return process_cpu(self.proc.pid)

    def sent(self):
        total = 0
        for line in open(self.log_path):
            for field in line.split():
                if field.startswith("sent="):
                    total += int(field[5:])
        return total

    def metric(self, name):
        out = subprocess.run(["curl", "-s", f"http://{self.address}/metrics"],
                             capture_output=True, text=True).stdout
        return sum(float(line.split()[-1]) for line in out.splitlines()
                   if line.startswith(name) and not line.startswith("#"))

    def store_requests(self):
        """Every request this node sent the store so far (GETs, PUTs, LISTs, DELETEs)."""
        return sum(self.metric(f"sluice_store_{kind}_total")
                   for kind in ["gets", "puts", "other_requests"])

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait()


def timed(server, argv, cwd=None, env=None):
    """Runs a client command; returns (wall, server CPU, bytes the server sent, requests the
    server sent the store)."""
    cpu, sent, asked = server.cpu(), server.sent(), server.store_requests()
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True)
    wall = time.perf_counter() - start
    time.sleep(0.1)  # the log line of the last request
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed: {done.stderr.decode()}")
    return (wall, server.cpu() - cpu, server.sent() - sent,
            server.store_requests() - asked)


def ssh_clone(git, remote_command, url, dest, env):
    """A clone over the ssh stand-in: (wall, CPU of every process it ran)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([git, "clone", "-q", "--bare", "-u", remote_command, url, dest],
                          env=env, capture_output=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"ssh clone of {url} failed: {done.stderr.decode()}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    shutil.rmtree(dest)
    return wall, cpu


def ssh_rows(args, sluice, work, store, local_repo, env):
    """Clones over ssh: `sluice upload-pack` of the local copy, and `--store` on a warm cache."""
    fake_ssh = os.path.join(work, "fake-ssh")
    with open(fake_ssh, "w") as f:
        f.write('#!/bin/sh\nwhile [ $# -gt 1 ]; do\n  case "$1" in -o|-p|-i|-l) shift 2 ;; '
                '-*) shift ;; *) shift; break ;; esac\ndone\nexec sh -c "$*"\n')
    os.chmod(fake_ssh, 0o755)
    env = dict(env, GIT_SSH_COMMAND=fake_ssh)
    cache = os.path.join(work, "ssh-cache")
    ways = {
        "ssh-local": (f"{sluice} upload-pack", f"ssh://example.invalid{local_repo}"),
        "ssh-store": (f"{sluice} upload-pack --store {store} --cache-dir {cache}",
                      "ssh://example.invalid/repo.git"),
    }
    dest = os.path.join(work, "ssh-clone")
    ssh_clone(args.git, *ways["ssh-store"], dest, env)  # warms the shared cache
    results = {name: [] for name in ways}
    for _ in range(args.runs):
        for name, (command, url) in ways.items():
            results[name].append(ssh_clone(args.git, command, url, dest, env))
    rows = []
    for name, values in results.items():
        wall = statistics.median(v[0] for v in values)
        cpu = statistics.median(v[1] for v in values)
        rows.append({"repo": os.path.basename(args.repo.rstrip("/")), "operation": name,
                     "wall_s": round(wall, 3), "client_and_server_cpu_s": round(cpu, 3),
                     "runs": args.runs})
        print(f"{name:<12} {wall:>8.2f} s wall, {cpu:.2f} s CPU (client and server)")
    print(f"ssh store / local: wall {rows[1]['wall_s'] / rows[0]['wall_s']:.2f}x")
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--git", default="git")
    parser.add_argument("--sluice", default="target/release/sluice")
    parser.add_argument("--results", default="bench/results/store.jsonl")
    args = parser.parse_args()
    sluice = os.path.abspath(args.sluice)
    work = tempfile.mkdtemp(prefix="bench-store-")
    weed, s3 = start_store(work)
    env = dict(os.environ, AWS_ENDPOINT_URL=f"http://{s3}", AWS_ALLOW_HTTP="true")
    try:
        rows = run(args, sluice, work, s3, env)
    finally:
        weed.send_signal(signal.SIGTERM)
        weed.wait()
    with open(args.results, "a") as f:
        for row in rows:
            row["time"] = time.strftime("%Y-%m-%dT%H:%M:%S")
            f.write(json.dumps(row) + "\n")
    shutil.rmtree(work, ignore_errors=True)


def run(args, sluice, work, s3, env):
    git = args.git
    served = os.path.join(work, "served")
    os.mkdir(served)
    store = "s3://bench/repos"
    url = f"{store}/repo.git"
    start = time.perf_counter()
    subprocess.run([sluice, "store", "import", "-q", url, args.repo], env=env, check=True)
    subprocess.run([sluice, "store", "maintain", "-q", url], env=env, check=True)
    print(f"import and maintain: {time.perf_counter() - start:.1f} s")
    # The local copy is the store's export: the same pack and bitmap, served from disk.
    local_repo = os.path.join(served, "repo.git")
    subprocess.run([sluice, "store", "export", url, local_repo], env=env, check=True,
                   capture_output=True)
    local = Server(sluice, [served], env, work, "local")
    warm = Server(sluice, ["--store", store, "--cache-dir", os.path.join(work, "warm")], env,
                  work, "warm")
    bundled = Server(sluice, ["--store", store, "--cache-dir", os.path.join(work, "bundled"),
                              f"--bundle-uri=http://{s3}/bench"], env, work, "bundled")
    results = {k: [] for k in ["local", "warm", "cold", "ranged", "bundle", "bundle-sluice",
                               "push-local", "push-store"]}
    clones = os.path.join(work, "clones")
    os.mkdir(clones)
    n = 0

    def clone(server, extra=(), client=None):
        nonlocal n
        n += 1
        dest = os.path.join(clones, f"c{n}")
        got = timed(server, [client or git, *extra, "clone", "-q", "--bare",
                             f"http://{server.address}/repo.git", dest])
        shutil.rmtree(dest)
        return got

    clone(warm)  # warms the node's cache
    for r in range(args.runs):
        results["local"].append(clone(local))
        results["warm"].append(clone(warm))
        cold = Server(sluice, ["--store", store, "--cache-dir",
                               os.path.join(work, f"cold{r}")], env, work, f"cold{r}")
        results["cold"].append(clone(cold))
        cold.stop()
        ranged = Server(sluice, ["--store", store, "--cache-dir", os.path.join(work, f"ranged{r}"),
                                 "--read-ranges-above", str(1 << 20)], env, work, f"ranged{r}")
        results["ranged"].append(clone(ranged))
        ranged.stop()
        results["bundle"].append(clone(bundled, ["-c", "transfer.bundleURI=true"]))
        results["bundle-sluice"].append(clone(bundled, client=sluice))
        for name, server in [("push-local", local), ("push-store", warm)]:
            dest = os.path.join(clones, f"p{name}{r}")
            subprocess.run([git, "clone", "-q", f"http://{server.address}/repo.git", dest],
                           check=True)
            subprocess.run([git, "-C", dest, "commit", "-q", "--allow-empty", "-m", name],
                           check=True)
            target = f"git://{server.git_address}/repo.git"
            results[name].append(timed(server, [git, "-C", dest, "push", "-q", target,
                                                f"HEAD:refs/heads/bench-{name}-{r}"]))
    # An up-to-date fetch: what it costs the store, from the node's /metrics.
    dest = os.path.join(clones, "fetcher")
    subprocess.run([git, "clone", "-q", f"http://{warm.address}/repo.git", dest], check=True)
    before = {k: warm.metric(k) for k in ["sluice_store_gets_total",
                                          "sluice_store_not_modified_total"]}
    subprocess.run([git, "-C", dest, "fetch", "-q"], check=True)
    fetch_requests = warm.metric("sluice_store_gets_total") - before["sluice_store_gets_total"]
    fetch_unchanged = (warm.metric("sluice_store_not_modified_total")
                       - before["sluice_store_not_modified_total"])
    rows = [{"repo": os.path.basename(args.repo.rstrip("/")), "operation": "fetch-up-to-date",
             "store_requests": fetch_requests, "not_modified": fetch_unchanged}]
    print(f"up-to-date fetch over HTTP: {fetch_requests:.0f} store requests "
          f"({fetch_unchanged:.0f} answered 'not modified')")
    print(f"{'operation':<12} {'wall s':>8} {'server CPU s':>13} {'sent MB':>9} "
          f"{'store requests':>15}")
    for name, values in results.items():
        wall = statistics.median(v[0] for v in values)
        cpu = statistics.median(v[1] for v in values)
        sent = statistics.median(v[2] for v in values)
        asked = statistics.median(v[3] for v in values)
        rows.append({"repo": os.path.basename(args.repo.rstrip("/")), "operation": name,
                     "wall_s": round(wall, 3), "server_cpu_s": round(cpu, 3),
                     "sent_bytes": sent, "store_requests": asked, "runs": args.runs})
        print(f"{name:<12} {wall:>8.2f} {cpu:>13.2f} {sent / 1e6:>9.2f} {asked:>15.0f}")
    by = {row["operation"]: row for row in rows}
    print(f"warm node / local: wall {by['warm']['wall_s'] / by['local']['wall_s']:.2f}x, "
          f"CPU {by['warm']['server_cpu_s'] / max(by['local']['server_cpu_s'], 1e-9):.2f}x")
    print(f"cold / warm wall: {by['cold']['wall_s'] / by['warm']['wall_s']:.2f}x")
    print(f"ranged cold / warm wall: {by['ranged']['wall_s'] / by['warm']['wall_s']:.2f}x")
    for name, extra in [("listing-cold", []), ("listing-ranged", ["--read-ranges-above",
                                                                  str(1 << 20)])]:
        node = Server(sluice, ["--store", store, "--cache-dir", os.path.join(work, name), *extra],
                      env, work, name)
        subprocess.run([git, "ls-remote", f"http://{node.address}/repo.git"], check=True,
                       capture_output=True)
        got = node.metric("sluice_store_received_bytes_total")
        rows.append({"repo": os.path.basename(args.repo.rstrip("/")), "operation": name,
                     "store_received_bytes": got})
        print(f"{name}: a new node's ref listing took {got / 1e6:.1f} MB from the store")
        node.stop()
    for name in ["bundle", "bundle-sluice"]:
        print(f"{name} clone: {by[name]['sent_bytes'] / by['warm']['sent_bytes'] * 100:.1f}% of "
              f"a full clone's bytes from the node")
    print(f"push store / local wall: "
          f"{by['push-store']['wall_s'] / by['push-local']['wall_s']:.2f}x")
    for server in [local, warm, bundled]:
        server.stop()
    return rows + ssh_rows(args, sluice, work, store, local_repo, env)


if __name__ == "__main__":
    main()

"""What the benchmarks share: timing one command as the kernel accounts for it."""

import os
import subprocess
import sys
import time


def run(argv, stdin_path=None, cwd=None, env=None, stdout_path=None):
    """Runs a command; returns (wall s, user CPU s, system CPU s, peak RSS KiB), or exits if
    the command fails. CPU and memory include the children it waits for (git upload-pack's
    pack-objects)."""
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    stdout = open(stdout_path, "wb") if stdout_path else subprocess.DEVNULL
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=stdin, stdout=stdout,
                            stderr=subprocess.PIPE, cwd=cwd, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if stdin_path:
        stdin.close()
    if stdout_path:
        stdout.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{argv} failed: {err}")
    return wall, usage.ru_utime, usage.ru_stime, usage.ru_maxrss

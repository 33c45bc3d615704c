"""What the benchmarks share: timing one command as the kernel accounts for it."""

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Peak memory is taken from GNU time when it is installed: the rusage of a child Python
# starts counts the Python process's own pages from before the exec (a floor of ~17 MB on
# every command), while time's child is a small C process.
TIME = shutil.which("time", path="/usr/bin:/bin")

# `--portable-sha1` in the benchmarks that hash: Sluice run a second time with every SHA-1 on
# the portable kernel (`SLUICE_SHA1=portable`), for the figures of a CPU without SHA-1
# instructions (SHA-NI) measured on one that has them. An upper bound: such a CPU would get
# sha1dc's SSE2 schedule and AVX2 collision filter, the switch the scalar ones.
PORTABLE_SHA1_HELP = ("also run Sluice with SLUICE_SHA1=portable (hashing as on a CPU without "
                      "SHA-1 instructions)")
PORTABLE_LABEL = "sluice no-SHA-NI"


def portable_sha1(argv):
    """`argv` with every SHA-1 of Sluice's (its children's too) on the portable kernel."""
    return ["env", "SLUICE_SHA1=portable", *argv]


def traced_stages(stderr):
    """(title, seconds, peak MB) of each `trace: performance: <s> s: <title>, peak <MB> MB`."""
    found = []
    for line in stderr.splitlines():
        if not line.startswith("trace: performance: "):
            continue
        seconds, _, rest = line[len("trace: performance: "):].partition(" s: ")
        title, _, peak = rest.rpartition(", peak ")
        if title and peak.endswith(" MB"):
            found.append((title, float(seconds), float(peak[:-3])))
    return found


def run(argv, stdin_path=None, cwd=None, env=None, stdout_path=None, stages=None):
    """Runs a command; returns (wall s, user CPU s, system CPU s, peak RSS KiB), or exits if
    the command fails. CPU and memory include the children it waits for (git upload-pack's
    pack-objects). With `stages` (a list), the phases Sluice traces under
    SLUICE_TRACE_PERFORMANCE are appended to it as (title, seconds, peak MB)."""
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    stdout = open(stdout_path, "wb") if stdout_path else subprocess.DEVNULL
    peak_file = tempfile.NamedTemporaryFile(prefix="bench-peak-", delete=False) if TIME else None
    if peak_file:
        peak_file.close()
        argv = [TIME, "-f", "%M", "-o", peak_file.name, *argv]
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=stdin, stdout=stdout,
                            stderr=subprocess.PIPE, cwd=cwd, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    peak = usage.ru_maxrss
    if peak_file:
        text = open(peak_file.name).read().split()
        os.unlink(peak_file.name)
        peak = int(text[-1]) if text and text[-1].isdigit() else peak
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if stages is not None:
        stages.extend(traced_stages(err))
    if stdin_path:
        stdin.close()
    if stdout_path:
        stdout.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{argv} failed: {err}")
    return wall, usage.ru_utime, usage.ru_stime, peak


def pack_files(repo):
    """The pack files a repository reads objects from: its own and its alternates'."""
    objects = Path(repo) / "objects"
    if not objects.is_dir():
        objects = Path(repo) / ".git" / "objects"
    found, seen = [], set()
    todo = [objects]
    while todo:
        current = todo.pop().resolve()
        if current in seen:
            continue
        seen.add(current)
        found.extend(sorted((current / "pack").glob("pack-*")))
        alternates = current / "info" / "alternates"
        if alternates.exists():
            for line in alternates.read_text().splitlines():
                if line and not line.startswith("#"):
                    todo.append((current / line) if not line.startswith("/") else Path(line))
    return found


def program_files(*programs):
    """The executables and the shared libraries they load, to read back in after a drop of the
    page cache (a tool whose binary is read from disk in its timed run pays for the disk)."""
    found = []
    for program in programs:
        path = shutil.which(program) if program else None
        if not path:
            continue
        found.append(Path(path).resolve())
        listing = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
        for line in listing.splitlines():
            parts = line.split()
            if "=>" in parts and len(parts) > parts.index("=>") + 1:
                lib = parts[parts.index("=>") + 1]
                if lib.startswith("/"):
                    found.append(Path(lib).resolve())
    return found


def settle(warm=None):
    """Writes everything out; with `warm` (a list of files), also drops the page cache where
    allowed (root) and reads those files (the packs and programs every tool reads) back in, so
    that every timed run starts from the same memory state. Each checkout of the wide tree left
    about a gigabyte in the page cache (its files, and the loop image of --fresh-fs behind
    them); in a run of the benchmark begun with 15 GB free, Sluice took 3.6 s of system CPU in
    the first round and 8.0-8.2 s in the next two, git's and gix's times growing alike."""
    os.sync()
    if warm is None:
        return
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            # Pages only: the dentries and inodes of work trees stay cached.
            f.write("1\n")
    except OSError:
        return
    for path in warm:
        with open(path, "rb") as f:
            while f.read(1 << 20):
                pass


@contextlib.contextmanager
def fresh_file_system(gib):
    """A new, empty ext4 file system, mounted for the benchmark and removed after it."""
    image = tempfile.NamedTemporaryFile(prefix="sluice-bench-fs-", suffix=".img", delete=False)
    image.close()
    mount = tempfile.mkdtemp(prefix="sluice-bench-mnt-")
    try:
        os.truncate(image.name, gib << 30)
        # One inode per 8 KiB: a run makes over a million small files.
        subprocess.run(["mkfs.ext4", "-q", "-F", "-i", "8192", image.name], check=True)
        subprocess.run(["mount", "-o", "loop", image.name, mount], check=True)
        try:
            yield mount
        finally:
            subprocess.run(["umount", mount], check=True)
    finally:
        os.rmdir(mount)
        os.unlink(image.name)


def git_out(repo, *args, stdin=None, env=None):
    """`git -C repo args…`'s output, stripped; exits if git fails."""
    return subprocess.run(["git", "-C", repo, *args], input=stdin, capture_output=True,
                          text=True, check=True, env=env).stdout.strip()


def add_commit(repo, i, files=1):
    """A commit on HEAD's branch adding `files` new files (contents from `i`), dated by `i`,
    made with plumbing in a bare repository (as a push would bring it); returns the ids of
    the objects it wrote, the commit last."""
    branch = git_out(repo, "symbolic-ref", "HEAD")
    head = git_out(repo, "rev-parse", branch)
    written = []
    listing = git_out(repo, "ls-tree", head) + "\n"
    for f in range(files):
        blob = git_out(repo, "hash-object", "-w", "--stdin", stdin=f"push {i} file {f}\n")
        written.append(blob)
        listing += f"100644 blob {blob}\tbench-{i}-{f}\n"
    tree = git_out(repo, "mktree", stdin=listing)
    env = dict(os.environ, GIT_AUTHOR_DATE=f"@{1700000000 + i} +0000",
               GIT_COMMITTER_DATE=f"@{1700000000 + i} +0000")
    commit = git_out(repo, "commit-tree", tree, "-p", head, "-m", f"push {i}", env=env)
    git_out(repo, "update-ref", branch, commit)
    return written + [tree, commit]



def copy_by_writes(src, dst):
    """A copy of file `src` written with write() in 1 MiB pieces, as git and Sluice write packs:
    shutil's sendfile copy leaves the file in the page cache in 4 KiB pages, and mapping and
    unmapping a 318 MB pack cached so costs a server several milliseconds more per clone than
    one written by the tool (measured: touching every page of git/git's pack through a map,
    26 ms against 7)."""
    with open(src, "rb") as f, open(dst, "wb") as out:
        while chunk := f.read(1 << 20):
            out.write(chunk)
    shutil.copystat(src, dst)
    return dst


def process_cpu(pid):
    """The CPU seconds (user and system, every thread, exited ones too) process `pid` has used
    so far, in nanoseconds through its CPU-time clock (Linux's clock_getcpuclockid: the clock id
    of a process is (~pid << 3) | CPUCLOCK_SCHED); /proc's counter, in 10 ms ticks, otherwise."""
    try:
        return time.clock_gettime(((~pid) << 3) | 2)
    except OSError:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

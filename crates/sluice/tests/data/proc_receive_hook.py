# A proc-receive hook for the twin tests: it logs what receive-pack sends it
# (`proc-receive.log` in the git directory) and answers as `proc-receive.mode` says, a
# directive a line: `features <list>` (its version line's features), `version <n>`,
# `say <payload>` (one pkt-line), `flush`, `run <shell command>`, `stderr <text>`,
# `exit <code>`. `$NEW` stands for the first command's new id.
import signal
import subprocess
import sys

# A receive-pack that stops listening (a version it refuses) ends the hook as it would a C
# program, quietly, rather than with a traceback that races the end of the push.
signal.signal(signal.SIGPIPE, signal.SIG_DFL)

inp, out = sys.stdin.buffer, sys.stdout.buffer


def read():
    size = inp.read(4)
    if len(size) < 4:
        return None
    size = int(size, 16)
    return b"" if size == 0 else inp.read(size - 4)


def write(payload):
    out.write(b"%04x" % (len(payload) + 4) + payload)


def flush():
    out.write(b"0000")
    out.flush()


def until_flush():
    lines = []
    while True:
        line = read()
        if not line:
            return lines
        lines.append(line)


mode = open("proc-receive.mode").read().splitlines()
log = open("proc-receive.log", "ab")
hello = until_flush()
log.write(b"hello: " + b"|".join(hello).replace(b"\0", b"<NUL>") + b"\n")
features = next((m[len("features "):] for m in mode if m.startswith("features ")), "")
version = next((m[len("version "):] for m in mode if m.startswith("version ")), "1")
write(b"version=" + version.encode() + b"\0" + features.encode())
flush()
commands = until_flush()
for command in commands:
    log.write(b"command: " + command + b"\n")
if hello and b"push-options" in hello[0] and "push-options" in features:
    for option in until_flush():
        log.write(b"option: " + option + b"\n")
log.flush()
new = commands[0].split(b" ")[1].decode() if commands else ""
for directive in mode:
    word, _, rest = directive.partition(" ")
    rest = rest.replace("$NEW", new)
    if word == "say":
        write(rest.encode())
    elif word == "flush":
        flush()
    elif word == "run":
        subprocess.run(rest, shell=True, check=True)
    elif word == "stderr":
        sys.stderr.write(rest + "\n")
        sys.stderr.flush()
    elif word == "exit":
        out.flush()
        sys.exit(int(rest))
out.flush()

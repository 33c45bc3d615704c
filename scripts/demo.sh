#!/usr/bin/env bash
# Sluice's main job, serving and cloning, end to end on an embedded default: this repository's
# own history, served by `sluice serve` over smart HTTP on 127.0.0.1. It is cloned with git
# and with Sluice, a commit is pushed through the server and fetched back, and checked out;
# each step is timed beside the same step done by git against git's own server
# (`git http-backend`, behind scripts/git_http_server.py). git judges every result. Needs
# only what the README's install notes name; no network.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
say() { printf '\n== %s\n' "$*"; }

say "Building Sluice in release mode (cargo build --release --locked; a first build takes about ten minutes on two cores)"
cargo build --release --locked --manifest-path "$root/Cargo.toml"
sluice="$root/target/release/sluice"

work="$(mktemp -d)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
# A fixed identity and no user or system configuration: the demo behaves the same anywhere.
export HOME="$work/home" GIT_CONFIG_NOSYSTEM=1 GIT_TERMINAL_PROMPT=0
mkdir -p "$HOME"
git config --global user.name "Sluice Demo"
git config --global user.email "demo@example.invalid"
git config --global init.defaultBranch main
git config --global advice.detachedHead false

say "The repository to serve: this checkout's history, as a bare repository"
branch="$(git -C "$root" rev-parse --abbrev-ref HEAD)"
[ "$branch" = HEAD ] && branch=main
for side in sluice git; do
    mkdir -p "$work/$side-srv"
    git clone -q --bare --no-local --branch "$branch" "$root" "$work/$side-srv/project.git" 2>/dev/null \
        || git clone -q --bare --no-local "$root" "$work/$side-srv/project.git"
    # Pushes over HTTP without a login, on this machine only.
    git -C "$work/$side-srv/project.git" config http.receivepack true
done
echo "$(git -C "$work/sluice-srv/project.git" rev-list --all | wc -l) commits, $(git -C "$work/sluice-srv/project.git" count-objects -v | awk '/size-pack/ {print $2}') KiB packed"

say "Starting the servers: sluice serve, and git http-backend for comparison"
"$sluice" serve --http 127.0.0.1:0 --git off "$work/sluice-srv" >"$work/sluice-serve.out" 2>"$work/sluice-serve.log" &
pids+=($!)
python3 "$root/scripts/git_http_server.py" "$work/git-port" "$work/git-srv" "$(command -v git)" 2>"$work/git-serve.log" &
pids+=($!)
for _ in $(seq 100); do
    [ -s "$work/sluice-serve.out" ] && [ -s "$work/git-port" ] && break
    sleep 0.1
done
sluice_url="$(sed -n 's/^Serving .* on \(http:\/\/.*\)$/\1/p' "$work/sluice-serve.out")/project.git"
git_url="http://127.0.0.1:$(cat "$work/git-port")/project.git"
echo "sluice serve: $sluice_url"
echo "git:          $git_url"

# Runs a command, keeps its wall time in seconds in the variable named by $1.
timed() {
    local var="$1"; shift
    local start end ms
    start="$(date +%s%N)"
    "$@"
    end="$(date +%s%N)"
    ms=$(((end - start) / 1000000))
    printf -v "$var" '%d.%03d' $((ms / 1000)) $((ms % 1000))
}
# Runs a command five times, keeps the median wall time in the variable named by $1: one
# clone's time on a busy two-core machine varies by a factor of two from run to run.
median5() {
    local var="$1"; shift
    local times=() t
    for _ in 1 2 3 4 5; do
        timed t "$@"
        times+=("$t")
    done
    printf -v "$var" '%s' "$(printf '%s\n' "${times[@]}" | sort -n | sed -n 3p)"
}
rows=()
row() { rows+=("$(printf '%-44s %9s s %9s s' "$1" "$2" "$3")"); }

say "Clone over HTTP (five times each; the median)"
clone_with() { rm -rf "$work/timed"; "$@" "$work/timed"; }
git_from_git() { clone_with git clone -q "$git_url"; }
git_from_sluice() { clone_with git clone -q "$sluice_url"; }
sluice_from_sluice() { clone_with "$sluice" clone -q "$sluice_url"; }
median5 t_git git_from_git
median5 t_gc git_from_sluice
median5 t_sc sluice_from_sluice
row "git clone from sluice serve / from git" "$t_gc" "$t_git"
row "sluice clone from sluice serve / git clone" "$t_sc" "$t_git"
git clone -q "$git_url" "$work/by-git"
git clone -q "$git_url" "$work/git-second"
git clone -q "$sluice_url" "$work/git-from-sluice"
"$sluice" clone -q "$sluice_url" "$work/by-sluice"
for dir in git-from-sluice by-sluice; do
    git -C "$work/$dir" fsck --strict --no-dangling --no-progress
    test -z "$(git -C "$work/$dir" status --porcelain)"
done
echo "both clones: git fsck --strict clean, git status clean ($(git -C "$work/by-sluice" ls-files | wc -l) files)"

say "Push a commit through the server"
for dir in by-sluice by-git; do
    echo "pushed by the demo" >"$work/$dir/DEMO.txt"
    git -C "$work/$dir" add DEMO.txt
    GIT_COMMITTER_DATE="2026-01-01T00:00:00Z" GIT_AUTHOR_DATE="2026-01-01T00:00:00Z" \
        git -C "$work/$dir" commit -q -m "demo: a pushed commit"
done
timed t_sp "$sluice" -C "$work/by-sluice" push -q origin HEAD:refs/heads/demo
timed t_gp git -C "$work/by-git" push -q origin HEAD:refs/heads/demo
row "sluice push to sluice serve / git push to git" "$t_sp" "$t_gp"
git -C "$work/sluice-srv/project.git" fsck --strict --no-dangling --no-progress
echo "the server's repository: git fsck --strict clean; refs/heads/demo = $(git -C "$work/sluice-srv/project.git" rev-parse --short demo)"

say "Fetch it back into the other clone, and check it out"
timed t_sf "$sluice" -C "$work/git-from-sluice" fetch -q origin
timed t_gf git -C "$work/git-second" fetch -q origin
row "sluice fetch from sluice serve / git fetch" "$t_sf" "$t_gf"
timed t_sk "$sluice" -C "$work/git-from-sluice" checkout -q origin/demo
timed t_gk git -C "$work/git-second" checkout -q origin/demo
row "sluice checkout / git checkout" "$t_sk" "$t_gk"
test "$(git -C "$work/git-from-sluice" rev-parse HEAD)" = "$(git -C "$work/by-sluice" rev-parse HEAD)"
test -z "$(git -C "$work/git-from-sluice" status --porcelain)"
echo "the fetched commit is checked out: $(cat "$work/git-from-sluice/DEMO.txt"); git status clean"

say "Times (wall clock; Sluice beside git)"
printf '%-44s %10s %10s\n' "step" "Sluice" "git"
printf '%s\n' "${rows[@]}"
echo
echo "The server's log (one line per request):"
cat "$work/sluice-serve.log"

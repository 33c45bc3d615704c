#!/usr/bin/env bash
# Sluice's main job on an embedded default: git packs this repository's own history, Sluice
# receives and indexes the pack into a fresh repository and checks out its HEAD, and git
# judges the result.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
sluice="$root/target/release/sluice"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

git -C "$root" pack-objects --revs --all --stdout --delta-base-offset -q </dev/null >"$work/history.pack"
echo "pack of this repository's history: $(wc -c <"$work/history.pack") bytes"

git init -q "$work/repo"
echo "sluice index-pack --stdin:"
"$sluice" -C "$work/repo" index-pack --stdin -v --progress <"$work/history.pack"
idx="$(ls "$work"/repo/.git/objects/pack/*.idx)"

git index-pack -o "$work/git.idx" "$work/history.pack" >/dev/null
cmp "$idx" "$work/git.idx" && echo "the .idx is byte-identical to git's"
git -C "$work/repo" verify-pack "$idx" && echo "git verify-pack: ok"

head="$(git -C "$root" rev-parse HEAD)"
git -C "$work/repo" update-ref refs/heads/demo "$head"
git -C "$work/repo" fsck --strict --no-dangling --no-progress && echo "git fsck --strict: ok"
echo "sluice checkout demo:"
"$sluice" -C "$work/repo" checkout --progress demo
files="$(git -C "$work/repo" ls-files | wc -l)"
test -z "$(git -C "$work/repo" status --porcelain)" && echo "git status after checking out $files files: clean"

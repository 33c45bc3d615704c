#!/usr/bin/env bash
# Sluice's main job on an embedded default: git packs this repository's own history, Sluice
# receives and indexes the pack into a fresh repository, and git judges the result.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
sluice="$root/target/release/sluice"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

git -C "$root" pack-objects --revs --all --stdout --delta-base-offset -q </dev/null >"$work/history.pack"
echo "pack of this repository's history: $(wc -c <"$work/history.pack") bytes"

git init -q --bare "$work/repo"
echo "sluice index-pack --stdin:"
"$sluice" -C "$work/repo" index-pack --stdin -v --progress <"$work/history.pack"
idx="$(ls "$work"/repo/objects/pack/*.idx)"

git index-pack -o "$work/git.idx" "$work/history.pack" >/dev/null
cmp "$idx" "$work/git.idx" && echo "the .idx is byte-identical to git's"
git -C "$work/repo" verify-pack "$idx" && echo "git verify-pack: ok"
git -C "$work/repo" fsck --strict --no-dangling && echo "git fsck --strict: ok"
"$sluice" verify-pack -s "$idx"

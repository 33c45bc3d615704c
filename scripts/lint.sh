#!/usr/bin/env bash
# The lints every commit keeps clean: formatting, clippy with warnings as errors, and the docs.
# Run before committing; CI runs only the formatting check, as clippy and the doc build cost it
# most of half an hour of compiling on two cores that the tests need.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet

#!/usr/bin/env bash
# Builds the grpo_rewards wheel (grpo-py/) with maturin into the workspace's target/ and dev
# profile, so the dependencies `cargo test --workspace` already built are reused, installs it
# into a fresh virtual environment and runs the pytest suite against it.
#
#   scripts/python_package_check.sh            # what CI runs
#   PROFILE=release scripts/python_package_check.sh
#
# maturin comes from PyPI into target/py-tools-venv (once). The tests compare `Pack.score`
# with `grpo score` when $GRPO_BIN names a grpo binary (built here when unset).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
profile="${PROFILE:-dev}"
tools="target/py-tools-venv"
if [ ! -x "$tools/bin/maturin" ]; then
    python3 -m venv "$tools"
    "$tools/bin/pip" install -q --disable-pip-version-check "maturin==1.16.0"
fi
wheels="target/wheels-$profile"
rm -rf "$wheels"
started=$(date +%s)
"$tools/bin/maturin" build -m grpo-py/Cargo.toml --profile "$profile" --out "$wheels" 2>&1 \
    | tee "target/maturin-$profile.log" | grep -E "Compiling|Built wheel|error|warning" || true
test -n "$(ls "$wheels"/*.whl 2>/dev/null)" || { echo "maturin built no wheel (target/maturin-$profile.log)"; exit 1; }
echo "wheel built in $(( $(date +%s) - started )) s: $(ls "$wheels")"
# After `cargo test --workspace` (CI), the wheel must reuse its wasmtime build: a recompile
# means the workspace-hack (grpo-py's view of the workspace's unified features) is stale.
if [ "${EXPECT_SHARED_TARGET:-0}" = 1 ] && grep -qE "Compiling (wasmtime|cranelift-codegen|candle-core) " "target/maturin-$profile.log"; then
    echo "the wheel build recompiled wasmtime: regenerate the workspace-hack (cargo install cargo-hakari; cargo hakari generate)"
    exit 1
fi

venv="$(mktemp -d)/venv"
python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check pytest "$wheels"/*.whl
if [ -z "${GRPO_BIN:-}" ]; then
    cargo build -q -p grpo-cli
    export GRPO_BIN="$PWD/target/debug/grpo"
fi
# From outside the checkout, so the installed package is what is imported.
(cd "$venv" && "$venv/bin/python" -m pytest -q -p no:cacheprovider "$root/grpo-py/tests")
# The book's Python quick start, as written.
(cd "$venv" && "$venv/bin/python" "$root/docs/quickstart/score.py")
rm -rf "$(dirname "$venv")"

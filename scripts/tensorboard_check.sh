#!/usr/bin/env bash
# TensorBoard's reader against a smoke run's event files (scripts/tensorboard_check.py), in a
# virtual environment with tensorboard from PyPI (under $GRPO_VENV, default a temporary one).
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${GRPO_VENV:-$(mktemp -d)/venv}"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "tensorboard==2.21.0"
fi
if [ -z "${GRPO_BIN:-}" ]; then
    cargo build -q -p grpo-cli
    export GRPO_BIN="$PWD/target/debug/grpo"
fi
"$venv/bin/python" scripts/tensorboard_check.py --grpo "$GRPO_BIN"

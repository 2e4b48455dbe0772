#!/usr/bin/env bash
# The real-client proof and the Python client tests, against `grpo serve`.
#
# Makes a virtual environment (under $GRPO_VENV, default a temporary directory) with the few
# packages the checks need from PyPI (requests for verl's client file, SandboxFusion's own SDK,
# httpx for ours, pytest, pyarrow for the exported Parquet),
# builds the `grpo` binary unless $GRPO_BIN names one, then runs
#   scripts/verl_client_check.py   verl's unmodified SandboxFusion client, SandboxFusion's SDK,
#                                  the TRL adapter
#   scripts/remote_reward_check.py OpenRLHF's remote reward client (from its wheel) and slime's
#                                  request, against two servers with and without a token
#   clients/python/tests           the Python client against a running server
#   scripts/verl_parquet_check.py  `grpo tasks export --format verl-parquet`, read by pyarrow
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${GRPO_VENV:-$(mktemp -d)/venv}"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check requests httpx aiohttp pytest pyarrow sandbox-fusion==0.3.7
fi
if [ -z "${GRPO_BIN:-}" ]; then
    cargo build -q -p grpo-cli
    export GRPO_BIN="$PWD/target/debug/grpo"
fi
"$venv/bin/python" scripts/verl_client_check.py
"$venv/bin/python" scripts/remote_reward_check.py
"$venv/bin/python" -m pytest -q clients/python/tests
"$venv/bin/python" scripts/verl_parquet_check.py

#!/usr/bin/env bash
# grpo_rewards inside a real local Ray cluster (scripts/ray_check.py says what it checks).
#
#   GRPO_BIN=target/debug/grpo scripts/ray_check.sh   # what CI runs, after python_package_check.sh
#   scripts/ray_check.sh --repeat 5     # arguments go to ray_check.py
#
# Ray comes from PyPI into target/ray-venv (kept between runs; remade when RAY changes). The
# wheel is the one scripts/python_package_check.sh built into target/wheels-dev (built here
# with maturin, dev profile, when there is none). Prints how long the install and the check
# took.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
RAY="ray==2.60.0"
venv="target/ray-venv"
started=$(date +%s)
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/grpo-rs-packages.txt" 2>/dev/null)" != "$RAY" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "$RAY"
    echo "$RAY" > "$venv/grpo-rs-packages.txt"
fi
if [ -z "$(ls target/wheels-dev/*.whl 2>/dev/null)" ]; then
    tools="target/py-tools-venv"
    [ -x "$tools/bin/maturin" ] || { python3 -m venv "$tools"; "$tools/bin/pip" install -q --disable-pip-version-check "maturin==1.16.0"; }
    "$tools/bin/maturin" build -q -m grpo-py/Cargo.toml --profile dev --out target/wheels-dev
fi
"$venv/bin/pip" install -q --disable-pip-version-check --force-reinstall --no-deps target/wheels-dev/*.whl
installed=$(date +%s)
echo "ray venv ready in $(( installed - started )) s ($RAY and the wheel)"
# From outside the checkout, so the installed package is what is imported.
(cd "$venv" && bin/python "$root/scripts/ray_check.py" "$@")
echo "ray check: $(( $(date +%s) - installed )) s, $(( $(date +%s) - started )) s with the install"

#!/usr/bin/env bash
# The local sandbox providers, each driven by its framework's own classes from PyPI: one fresh
# venv per framework with the grpo_rewards wheel of scripts/python_package_check.sh
# (target/wheels-$PROFILE, built first when missing), then scripts/sandbox_providers_check.py;
# and `skyrl`: SkyRL-Gym's own registry drives the environment over our tasks
# (scripts/skyrl_env_check.py). In the verifiers venv, verifiers' own loader, `vf-eval`,
# `vf-validate` and `vf-replay` also drive the taskset over our packs
# (scripts/verifiers_env_check.py; `uv` runs vf-eval's harness programs).
#
#   scripts/sandbox_providers_check.sh                  # verifiers, tinker, nemo_gym, skyrl, soak
#   scripts/sandbox_providers_check.sh tinker
#
# `soak`: scripts/local_sandbox_bench.py's create/exec/close cycles with random early drops
# (2,000 of them), failing when a workspace directory is left or memory grows.
#
# verifiers 0.4 installs with its dependencies. tinker-cookbook's pull torch with CUDA (about
# 6 GB installed, enough to fill a small CI disk) for code its sandbox API never imports, and
# nemo-gym declares Python >= 3.13.14: those two packages go in without their dependencies and
# then exactly what their sandbox APIs import (`tinker_cookbook.sandbox`: chz and aiohttp).
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${PROFILE:-dev}"
wheels="target/wheels-$profile"
if [ -z "$(ls "$wheels"/*.whl 2>/dev/null)" ]; then
    tools="target/py-tools-venv"
    [ -x "$tools/bin/maturin" ] || { python3 -m venv "$tools"; "$tools/bin/pip" install -q "maturin==1.16.0"; }
    "$tools/bin/maturin" build -m grpo-py/Cargo.toml --profile "$profile" --out "$wheels" >/dev/null
fi
wheel="$(ls "$wheels"/*.whl | head -n 1)"
grpo="$(realpath "${GRPO_BIN:-target/debug/grpo}")"
pip_q=(-q --disable-pip-version-check)
for framework in "${@:-verifiers tinker nemo_gym skyrl soak}"; do
  for name in $framework; do
    venv="$(mktemp -d)/venv"
    python3 -m venv "$venv"
    case "$name" in
        verifiers) "$venv/bin/pip" install "${pip_q[@]}" "verifiers==0.4.0" "uv==0.13.9" ;;
        tinker)
            "$venv/bin/pip" install "${pip_q[@]}" --no-deps "tinker-cookbook==0.5.8"
            "$venv/bin/pip" install "${pip_q[@]}" "chz==0.4.0" "aiohttp==3.14.5" ;;
        nemo_gym)
            "$venv/bin/pip" install "${pip_q[@]}" --ignore-requires-python --no-deps nemo-gym==0.7.0
            "$venv/bin/pip" install "${pip_q[@]}" pyyaml pydantic omegaconf rich ;;
        skyrl) "$venv/bin/pip" install "${pip_q[@]}" "skyrl-gym==0.4.0" ;;
        soak) ;;
        *) echo "unknown framework $name"; exit 2 ;;
    esac
    "$venv/bin/pip" install "${pip_q[@]}" --force-reinstall --no-deps "$wheel"
    if [ "$name" = soak ]; then
        (cd "$(dirname "$venv")" && "$venv/bin/python" "$OLDPWD/scripts/local_sandbox_bench.py" --seconds 2 --soak 2000)
    elif [ "$name" = skyrl ]; then
        (cd "$(dirname "$venv")" && "$venv/bin/python" "$OLDPWD/scripts/skyrl_env_check.py")
    else
        (cd "$(dirname "$venv")" && "$venv/bin/python" "$OLDPWD/scripts/sandbox_providers_check.py" "$name")
        if [ "$name" = verifiers ]; then
            (cd "$(dirname "$venv")" && GRPO_BIN="$grpo" "$venv/bin/python" "$OLDPWD/scripts/verifiers_env_check.py")
        fi
    fi
    rm -rf "$(dirname "$venv")"
  done
done

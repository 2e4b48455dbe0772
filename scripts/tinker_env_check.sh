#!/usr/bin/env bash
# tinker-cookbook's own classes (PyPI, unmodified) drive grpo_rewards.tinker_env over our task
# packs (scripts/tinker_env_check.py), then the book's example
# (examples/environments/tinker_rl_dataset.py) runs as written.
#
#   scripts/tinker_env_check.sh          # needs target/trl-venv (TRL_VENV) and a grpo binary
#
# torch: the cookbook's RL types import it (through its renderers), and installing
# tinker-cookbook with its dependencies puts a second CUDA torch (about 6 GB) on disk. This
# venv gets tinker-cookbook without dependencies, then exactly the PyPI packages its RL types,
# renderers and tokenizer loading import (pinned below), and borrows torch from the PEFT
# venv (scripts/peft_check.py's, torch 2.15.0): a directory of links to the files of torch's
# distribution and of what torch itself requires (nothing else of that venv), appended to
# sys.path by a `.pth` file. This venv's own packages win, so the only code that comes from
# elsewhere is the real torch release that venv installed from PyPI; the cookbook's code is
# its release as installed. The check asserts that provenance before anything else.
# transformers is pinned to 5.5.4, the newest release tinker-cookbook 0.5.8 accepts.
#
# The tokenizer is the project's own tiny one (every printable ASCII character a token, the
# format tags whole): `grpo train --preset tools` with no steps writes it, and its
# tokenizer.json and tokenizer_config.json alone make the directory the renderer loads.
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${PROFILE:-dev}"
wheels="target/wheels-$profile"
trl_venv="${TRL_VENV:-target/trl-venv}"
[ -x "$trl_venv/bin/python" ] || { echo "no PEFT venv at $trl_venv (TRL_VENV): it lends torch"; exit 2; }
grpo="${GRPO_BIN:-target/debug/grpo}"
[ -x "$grpo" ] || { echo "no grpo binary at $grpo (GRPO_BIN)"; exit 2; }
# The wheel packs the Python sources: rebuilt when missing or older than one of them.
wheel="$(ls "$wheels"/*.whl 2>/dev/null | head -n 1 || true)"
if [ -z "$wheel" ] || [ -n "$(find grpo-py/python grpo-py/src -newer "$wheel" -type f | head -n 1)" ]; then
    tools="target/py-tools-venv"
    [ -x "$tools/bin/maturin" ] || { python3 -m venv "$tools"; "$tools/bin/pip" install -q "maturin==1.16.0"; }
    "$tools/bin/maturin" build -m grpo-py/Cargo.toml --profile "$profile" --out "$wheels" >/dev/null
    wheel="$(ls -t "$wheels"/*.whl | head -n 1)"
fi
tmp="$(mktemp -d)"
trap '[ -n "${KEEP_TMP:-}" ] || rm -rf "$tmp"' EXIT
venv="$tmp/venv"
python3 -m venv "$venv"
pip=("$venv/bin/pip" install -q --disable-pip-version-check --no-cache-dir)
# pip reports the cookbook's requirements left out (torch, datasets, …) as conflicts: expected.
"${pip[@]}" --no-deps "tinker-cookbook==0.5.8"
"${pip[@]}" "tinker==0.38.0" "chz==0.4.0" "transformers==5.5.4" "pillow==12.3.0"
"${pip[@]}" --force-reinstall --no-deps "$wheel"
# torch and its own requirements, linked from the PEFT venv (after every install above, so pip
# never counts a borrowed package as installed here).
"$trl_venv/bin/python" - "$venv/torch-site" <<'EOF'
import importlib.metadata as md
import os
import re
import sys

out = sys.argv[1]
os.makedirs(out)
todo, seen = ["torch"], set()
while todo:
    name = re.sub(r"[-_.]+", "-", todo.pop()).lower()
    if name in seen:
        continue
    seen.add(name)
    try:
        dist = md.distribution(name)
    except md.PackageNotFoundError:  # a requirement of another platform, or an extra
        continue
    for req in dist.requires or []:
        if "extra ==" not in req:
            todo.append(re.match(r"[A-Za-z0-9_.-]+", req).group(0))
    for top in {f.parts[0] for f in dist.files or []}:
        if top in ("..", "__pycache__") or top.endswith(".pth"):
            continue
        link = os.path.join(out, top)
        if not os.path.lexists(link):
            os.symlink(os.path.abspath(dist.locate_file(top)), link)
EOF
site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
echo "$venv/torch-site" > "$site/zz_borrowed_torch.pth"
"$grpo" train --preset tools --out "$tmp/run" --quiet \
    --set budget.steps=0 --set warmup.steps=0 --set eval.problems=0
mkdir "$tmp/tokenizer"
cp "$tmp/run/final/tokenizer.json" "$tmp/run/final/tokenizer_config.json" "$tmp/tokenizer/"
GRPO_BIN="$grpo" "$venv/bin/python" scripts/tinker_env_check.py "$tmp/tokenizer" "$tmp/run/final"
"$venv/bin/python" examples/environments/tinker_rl_dataset.py --tokenizer "$tmp/tokenizer"

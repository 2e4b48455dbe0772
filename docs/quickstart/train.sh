#!/usr/bin/env bash
# Quick start 1 (README): build `grpo`, a smoke training run, then `grpo eval` of its final
# model. Seconds once the binary is built.
#
#   docs/quickstart/train.sh                      # builds target/release/grpo first
#   GRPO_BIN=target/debug/grpo docs/quickstart/train.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${GRPO_BIN:-}" ]; then
    cargo build --release -p grpo-cli
    GRPO_BIN="$PWD/target/release/grpo"
fi
grpo="$GRPO_BIN"
runs="$(mktemp -d)"
trap 'rm -rf "$runs"' EXIT

# The README's commands, with runs/ in a temporary directory.
"$grpo" train --preset smoke --out "$runs/smoke"
"$grpo" eval --model "$runs/smoke/final" --tasks builtin:arith-digits | tee "$runs/eval.json"

for f in config.toml metrics.jsonl eval.jsonl samples.jsonl final/model.safetensors; do
    test -s "$runs/smoke/$f" || { echo "quickstart/train.sh: $f missing from the run directory"; exit 1; }
done
grep -q '"greedy_accuracy"' "$runs/eval.json" || { echo "quickstart/train.sh: grpo eval printed no greedy_accuracy"; exit 1; }
echo "quickstart/train.sh: ok"

#!/usr/bin/env bash
# Quick start 3 (README): `grpo serve`, then one group scored through /v1/score and one
# program run through SandboxFusion's /run_code, with curl. verl's own client against the same
# server is checked by scripts/verl_client_check.sh.
#
#   docs/quickstart/serve.sh                      # builds target/release/grpo first
#   GRPO_BIN=target/debug/grpo docs/quickstart/serve.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${GRPO_BIN:-}" ]; then
    cargo build --release -p grpo-cli
    GRPO_BIN="$PWD/target/release/grpo"
fi
out="$(mktemp -d)"
# Port 0: the system picks a free port; the README uses 8080.
"$GRPO_BIN" serve --addr 127.0.0.1:0 > "$out/serve.log" &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -rf "$out"' EXIT
for _ in $(seq 100); do
    grep -q listening "$out/serve.log" 2>/dev/null && break
    sleep 0.1
done
url="http://$(python3 -c 'import json, sys; print(json.loads(open(sys.argv[1]).readline())["listening"])' "$out/serve.log")"

# The README's two curl commands.
curl -s "$url/v1/score" -d '{"ground_truth": "42", "completions": ["\\boxed{42}", "41"]}' | tee "$out/score.json"
echo
curl -s "$url/run_code" -d '{"code": "print(6 * 7)", "language": "python"}' | tee "$out/run.json"
echo

python3 - "$out/score.json" "$out/run.json" <<'PY'
import json, sys
score = json.load(open(sys.argv[1]))
assert [r["correct"] for r in score["results"]] == [True, False], score
run = json.load(open(sys.argv[2]))
assert run["status"] == "Success" and run["run_result"]["stdout"] == "42\n", run
PY
echo "quickstart/serve.sh: ok"

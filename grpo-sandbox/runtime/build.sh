#!/usr/bin/env bash
# Rebuilds the sandbox's Python runtime, python.wasm.zst, from app.py, the test harness
# (../src/guest/python/harness.py), the pure-Python packages pinned in requirements.txt and the vendored WIT;
# writes the harness's SHA-256 to harness.sha256.
#
#   grpo-sandbox/runtime/build.sh
#
# Needs python3 (with venv), the zstd command and PyPI. componentize-py 0.25.1 comes from PyPI into a
# virtual environment outside the repository ($GRPO_RUNTIME_VENV, default
# ${TMPDIR:-/tmp}/grpo-runtime-venv). The script prints the SHA-256 of the uncompressed
# component, which runtime/README.md records (builds differ: the snapshot keeps state drawn
# from the build's randomness, such as string hash seeds).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
venv=${GRPO_RUNTIME_VENV:-${TMPDIR:-/tmp}/grpo-runtime-venv}
version=0.25.1

if ! "$venv/bin/componentize-py" --version 2>/dev/null | grep -q "$version"; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet "componentize-py==$version"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/app.py" "$work/"
# The test harness goes into the snapshot too; its SHA-256 tells the host which one it is.
cp "$here/../src/guest/python/harness.py" "$work/grpo_harness.py"
harness_sha=$(sha256sum "$work/grpo_harness.py" | cut -d' ' -f1)
echo "SHA256 = \"$harness_sha\"" > "$work/grpo_harness_sha.py"
cp -r "$here/wit" "$work/wit"
# The packages: wheels checked against the SHA-256s in requirements.txt, unpacked into site/
# (pure Python, so unpacking is installing); app.py imports them, so they live in the snapshot.
"$venv/bin/pip" download --quiet --no-deps --only-binary=:all: --require-hashes \
    -r "$here/requirements.txt" -d "$work/wheels"
for wheel in "$work"/wheels/*.whl; do
    python3 -m zipfile -e "$wheel" "$work/site"
done
cd "$work"
# Build in a clean directory so nothing but app.py, the harness and site/ is importable at
# snapshot time.
PYTHONDONTWRITEBYTECODE=1 "$venv/bin/componentize-py" -d wit -w python componentize app \
    -p . -p site -o python.wasm
# The snapshot's objects become immortal, so runs stop writing reference counts into its pages.
python3 "$here/immortalize.py" python.wasm
sha256sum python.wasm | cut -d' ' -f1 > python.wasm.sha256
zstd -q -19 -f python.wasm -o "$here/python.wasm.zst"
echo "$harness_sha" > "$here/harness.sha256"
echo "python.wasm: $(stat -c %s python.wasm) bytes, sha256 $(cat python.wasm.sha256)"
echo "python.wasm.zst: $(stat -c %s "$here/python.wasm.zst") bytes"

#!/usr/bin/env bash
# Stands SandboxFusion (github.com/bytedance/SandboxFusion) up on this machine from its public
# source, without Docker, for `grpo bench` to compare against: a pinned commit, its own
# dependencies (the versions of its poetry.lock), its own configuration files and its own start
# command (`uvicorn sandbox.server.server:app`, the Makefile's `run`).
#
# What stands in for its Docker image, and nothing else:
# - its image keeps two conda environments, `sandbox` (the server) and `sandbox-runtime` (what
#   programs run with), and finds the second through `<conda root>/bin/activate`; here they are
#   two venvs under a directory laid out the same way (`condabin/`, `bin/activate`,
#   `envs/sandbox`, `envs/sandbox-runtime`). The runtime venv holds the standard library only
#   (`--runtime-requirements FILE` installs more);
# - `runtime/node/node_modules` is not installed (plain Node.js programs need none);
# - the documentation site it mounts (`docs/build`) is an empty directory;
# - HOME is a fresh directory: its runners start programs through `bash -c` with a socket as
#   stdin, and bash then reads ~/.bashrc; a developer's rc (pyenv's `rehash`, which takes a
#   lock a timed-out program's kill leaves behind, hanging every later run) is not its image's;
# - `--isolation lite` runs its overlayfs/chroot/cgroup/netns commands through `sudo`; as root
#   without a `sudo` binary, a shim that runs the command as it is goes first on PATH. `lite`
#   also needs cgroup v1 with cgroup-tools (cgcreate, cgexec), iproute2 and iptables.
#
# Usage: scripts/sandboxfusion_local.sh [--source URL|DIR] [--commit SHA] [--dir DIR]
#            [--port N] [--isolation none|lite] [--runtime-requirements FILE] [--setup-only]
# Prints `listening http://127.0.0.1:PORT pid PID` once `/v1/ping` answers, and keeps the server
# in the foreground (Ctrl-C stops it). Not part of the default tests: it installs packages.
set -euo pipefail

source_url=https://github.com/bytedance/SandboxFusion.git
# main of 2025-06 ("bind sandbox service to localhost by default").
commit=469de0845cb7d665bc68044d541aa3aa28c5b30a
dir="${TMPDIR:-/tmp}/sandboxfusion"
port=8081
isolation=none
runtime_requirements=
setup_only=0
while [ $# -gt 0 ]; do
    case "$1" in
        --source) source_url="$2"; shift 2 ;;
        --commit) commit="$2"; shift 2 ;;
        --dir) dir="$2"; shift 2 ;;
        --port) port="$2"; shift 2 ;;
        --isolation) isolation="$2"; shift 2 ;;
        --runtime-requirements) runtime_requirements="$2"; shift 2 ;;
        --setup-only) setup_only=1; shift ;;
        -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
        *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
done
case "$isolation" in none|lite) ;; *) echo "--isolation: none or lite, got $isolation" >&2; exit 2 ;; esac
python="${PYTHON:-python3}"
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || { echo "SandboxFusion needs Python >= 3.11 ($python is $("$python" --version))" >&2; exit 1; }

mkdir -p "$dir"
src="$dir/src"
if [ ! -d "$src/.git" ]; then
    git clone --quiet "$source_url" "$src"
fi
git -C "$src" fetch --quiet origin "$commit" 2>/dev/null || true
git -C "$src" checkout --quiet --detach "$commit"
echo "SandboxFusion at $(git -C "$src" rev-parse HEAD)" >&2

# The conda layout its runners look for (sandbox/utils/common.py: find_conda_root).
root="$dir/conda"
mkdir -p "$root/condabin" "$root/bin" "$root/envs"
cat >"$root/bin/activate" <<EOF
# \`source activate NAME\`: the venv $root/envs/NAME.
. "$root/envs/\${1:-sandbox}/bin/activate"
EOF
server_env="$root/envs/sandbox"
runtime_env="$root/envs/sandbox-runtime"
if [ ! -x "$server_env/bin/uvicorn" ]; then
    "$python" -m venv "$server_env"
    # Its poetry.lock's versions as constraints, its pyproject's main dependencies as the ask.
    "$server_env/bin/python" - "$src/poetry.lock" >"$dir/constraints.txt" <<'PY'
import sys, tomllib
lock = tomllib.load(open(sys.argv[1], "rb"))
for package in lock["package"]:
    print(f'{package["name"]}=={package["version"]}')
PY
    "$server_env/bin/pip" install -q --disable-pip-version-check -c "$dir/constraints.txt" \
        'pydantic>=2.4.0,<2.7.0' 'fastapi>=0.103.1,<0.104' 'uvicorn[standard]==0.25.0' \
        'structlog>=23.1.0,<24' 'psutil>=5.9.8,<6' 'aiofiles>=23.2.1,<24' 'aiohttp>=3.9.5,<4' \
        'tenacity>=8.4.2,<9' 'databases[aiomysql,aiosqlite]>=0.9.0,<0.10' 'transformers>=4.44.0,<5' pyyaml
fi
if [ ! -x "$runtime_env/bin/python" ]; then
    "$python" -m venv "$runtime_env"
fi
if [ -n "$runtime_requirements" ]; then
    "$runtime_env/bin/pip" install -q --disable-pip-version-check -r "$runtime_requirements"
fi
mkdir -p "$src/docs/build"

# Its own configuration file for the isolation asked for: local.yaml is `none`, ci.yaml `lite`.
config=local
if [ "$isolation" = lite ]; then
    config=ci
    if ! command -v sudo >/dev/null; then
        [ "$(id -u)" = 0 ] || { echo "--isolation lite needs root or sudo" >&2; exit 1; }
        mkdir -p "$dir/shim"
        printf '#!/bin/sh\nexec "$@"\n' >"$dir/shim/sudo"
        chmod +x "$dir/shim/sudo"
        export PATH="$dir/shim:$PATH"
    fi
    for tool in cgcreate cgexec cgset cgdelete ip iptables unshare chroot; do
        command -v "$tool" >/dev/null || { echo "--isolation lite needs $tool (cgroup-tools, iproute2, iptables)" >&2; exit 1; }
    done
fi
[ "$setup_only" = 1 ] && { echo "set up in $dir" >&2; exit 0; }

cd "$src"
mkdir -p "$dir/home"
export HOME="$dir/home"
export SANDBOX_CONFIG="$config"
netns_before=" $(ip netns list 2>/dev/null | awk '{print $1}' | tr '\n' ' ') "
"$server_env/bin/uvicorn" sandbox.server.server:app --host 127.0.0.1 --port "$port" --log-level warning &
server=$!
# `lite` keeps a pool of network namespaces and cgroups (sandbox_mem_*, sandbox_cpu_*) that
# outlives the server: the ones it made go with it.
stop() {
    kill "$server" 2>/dev/null
    wait "$server" 2>/dev/null
    [ "$isolation" = lite ] || return 0
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}'); do
        case "$netns_before" in *" $ns "*) ;; *) ip netns delete "$ns" 2>/dev/null ;; esac
    done
    for controller in memory cpu; do
        for group in /sys/fs/cgroup/"$controller"/sandbox_mem_* /sys/fs/cgroup/"$controller"/sandbox_cpu_*; do
            [ -d "$group" ] && cgdelete -g "$controller:${group##*/}" 2>/dev/null
        done
    done
    return 0
}
trap stop EXIT INT TERM
for _ in $(seq 300); do
    if "$server_env/bin/python" -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$port/v1/ping', timeout=1)" 2>/dev/null; then
        echo "listening http://127.0.0.1:$port pid $server isolation $isolation"
        wait "$server"
        exit $?
    fi
    kill -0 "$server" 2>/dev/null || { echo "SandboxFusion exited before it answered /v1/ping" >&2; exit 1; }
    sleep 0.2
done
echo "SandboxFusion did not answer /v1/ping within 60 s" >&2
exit 1

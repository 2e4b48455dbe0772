"""What the service scripts share: finding the grpo binary and looking at a server process."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def binary(arg: str | None = None) -> str:
    """The grpo binary: `arg`, else $GRPO_BIN, else target/release/grpo, else target/debug/grpo
    (an absolute path, so a server may run in another directory)."""
    if arg:
        return os.path.abspath(arg)
    if os.environ.get("GRPO_BIN"):
        return os.path.abspath(os.environ["GRPO_BIN"])
    for profile in ("release", "debug"):
        candidate = ROOT / "target" / profile / "grpo"
        if candidate.exists():
            return str(candidate)
    sys.exit("build grpo first (cargo build --release -p grpo-cli) or pass --grpo")


def serve(binary: str, *args: str, token: str | None = None) -> tuple[subprocess.Popen, str]:
    """`grpo serve` with `args` on a free loopback port, requiring `token` when given (none
    otherwise, whatever the environment says); returns the process and its base URL."""
    env = dict(os.environ)
    env.pop("GRPO_AUTH_TOKEN", None)
    if token:
        env["GRPO_AUTH_TOKEN"] = token
    process = subprocess.Popen([binary, "serve", "--addr", "127.0.0.1:0", *args], stdout=subprocess.PIPE,
                               text=True, env=env)
    line = process.stdout.readline() if process.stdout else ""
    if not line:
        process.kill()
        raise SystemExit("grpo serve exited before listening")
    return process, "http://" + json.loads(line)["listening"]


def children(pid: int) -> int:
    """How many processes have `pid` as their parent."""
    count = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = pathlib.Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                count += 1
    return count


def status_kib(pid: int, field: str) -> int:
    """A field of /proc/PID/status in KiB (VmRSS, VmHWM)."""
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0

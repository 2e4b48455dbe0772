"""Fixtures: real `grpo serve` processes on free loopback ports."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "clients" / "python"))


def grpo_binary() -> str:
    if os.environ.get("GRPO_BIN"):
        return os.environ["GRPO_BIN"]
    for profile in ("release", "debug"):
        candidate = ROOT / "target" / profile / "grpo"
        if candidate.exists():
            return str(candidate)
    subprocess.run(["cargo", "build", "--bin", "grpo"], cwd=ROOT, check=True)
    return str(ROOT / "target" / "debug" / "grpo")


def start(*args: str, env=None):
    process = subprocess.Popen([grpo_binary(), "serve", "--addr", "127.0.0.1:0", *args],
                               stdout=subprocess.PIPE, text=True, env=env)
    line = process.stdout.readline()
    if not line:
        process.kill()
        raise RuntimeError("grpo serve exited before listening")
    return process, "http://" + json.loads(line)["listening"]


@pytest.fixture(scope="session")
def url():
    process, address = start()
    yield address
    process.terminate()
    assert process.wait(timeout=30) == 0


@pytest.fixture()
def tight_url():
    """A server that serves one request at a time and queues none."""
    process, address = start("--max-inflight", "1", "--max-queue", "0")
    yield address
    process.terminate()
    assert process.wait(timeout=30) == 0


@pytest.fixture()
def two_urls():
    """Two servers; a test may stop either (both are stopped afterwards)."""
    servers = [start(), start()]
    yield [address for _, address in servers], [process for process, _ in servers]
    for process, _ in servers:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=30)


TOKEN = "client-test-token-7d2"


@pytest.fixture()
def token_url():
    """A server that requires the bearer token `TOKEN` (given by environment variable)."""
    env = dict(os.environ, GRPO_AUTH_TOKEN=TOKEN)
    process, address = start(env=env)
    yield address
    process.terminate()
    assert process.wait(timeout=30) == 0

"""LocalSandbox: create, write, exec (Python, C++), read, close, sync and async; failures are
exit codes with reasons; the host is out of reach; nothing is left behind."""

import asyncio
import gc
import os
import time

import pytest

import grpo_rewards
from grpo_rewards import LocalSandbox, SandboxClosed

CPP = b"""#include <iostream>
int main() { int a, b; std::cin >> a >> b; std::cout << a * b << std::endl; }
"""


def test_round_trip_python_and_cpp():
    with LocalSandbox() as sb:
        sb.write("in.txt", "6 7\n")
        sb.write("main.py", "a, b = map(int, open('in.txt').read().split())\nopen('out.txt', 'w').write(str(a * b))\n")
        r = sb.exec("python3 main.py out.txt")
        assert (r.exit_code, r.stderr) == (0, "")
        assert sb.read("out.txt") == b"42"
        sb.write("hello.cpp", CPP)
        r = sb.exec("g++ -O2 -o hello hello.cpp && ./hello < in.txt")
        assert (r.exit_code, r.stdout) == (0, "42\n"), r
        path = sb.path
        assert os.path.isdir(path)
    assert sb.closed and not os.path.exists(path)
    sb.close()  # twice is fine
    with pytest.raises(SandboxClosed):
        sb.exec("python3 -c 1")


def test_failures_are_exit_codes():
    with LocalSandbox() as sb:
        r = sb.exec("python3 -c 'raise KeyError(7)'")
        assert r.exit_code == 1 and "Traceback" in r.stderr and "KeyError: 7" in r.stderr
        r = sb.exec("curl http://example.com")
        assert (r.exit_code, r.stderr) == (127, "unsupported command: curl\n")
        r = sb.exec("python3 nothing.py")
        assert r.exit_code != 0 and "nothing.py" in r.stderr
        with pytest.raises(FileNotFoundError):
            sb.read("nothing.txt")
        started = time.monotonic()
        r = sb.exec("python3 -c 'while True: pass'", timeout=0.5)
        assert r.exit_code == 124 and r.timed_out
        assert time.monotonic() - started < 5


def test_the_host_is_out_of_reach():
    with LocalSandbox() as a, LocalSandbox() as b:
        r = a.exec("python3 -c 'print(open(\"/etc/passwd\").read())'")
        assert r.exit_code != 0 and "root:" not in r.stdout
        for bad in ("/etc/passwd", "../x", "a/../../x"):
            with pytest.raises(ValueError):
                a.read(bad)
            with pytest.raises(ValueError):
                a.write(bad, b"x")
        a.write("mine.txt", b"a")
        with pytest.raises(FileNotFoundError):
            b.read("mine.txt")
        assert b.exec("python3 -c 'open(\"mine.txt\")'").exit_code != 0


def test_limits_are_checked():
    with pytest.raises(ValueError, match="memory_mb"):
        LocalSandbox(memory_mb=1)
    with pytest.raises(ValueError, match="timeout_s"):
        LocalSandbox(timeout_s=0)
    with LocalSandbox(quota_bytes=1000) as sb:
        with pytest.raises(OSError, match="quota"):
            sb.write("big", b"x" * 2000)


def test_async():
    async def main():
        sb = await LocalSandbox.create_async()
        await sb.write_async("a.py", "print(sum(range(10)))")
        results = await asyncio.gather(*(sb.exec_async("python3 a.py") for _ in range(4)))
        assert [r.stdout for r in results] == ["45\n"] * 4
        assert await sb.read_async("a.py") == b"print(sum(range(10)))"
        await sb.close_async()
        await sb.close_async()

    asyncio.run(main())


def test_dropping_removes_the_directory():
    paths = []
    for _ in range(10):
        sb = LocalSandbox()
        sb.exec("python3 -c 'open(\"f\", \"w\").write(\"x\")' f")
        paths.append(sb.path)
        del sb
    gc.collect()
    assert not any(os.path.exists(p) for p in paths)


def test_exported():
    assert grpo_rewards.ExecResult is grpo_rewards.local_sandbox.ExecResult

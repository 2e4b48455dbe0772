#!/usr/bin/env python3
"""The local sandbox providers of grpo_rewards, driven by each framework's own classes (from
PyPI, unmodified):

    python scripts/sandbox_providers_check.py verifiers   # verifiers 0.4: Runtime.read/stop/alive
    python scripts/sandbox_providers_check.py tinker      # tinker-cookbook: SandboxInterface
    python scripts/sandbox_providers_check.py nemo_gym    # NeMo Gym: AsyncSandbox by entry point

Run with a Python that has `grpo-rewards` and the named framework installed. Through each:
create, write a file, a Python program that reads it, a C++ program compiled and run, a file
read back, close; a raising program is a non-zero exit with its traceback; a foreign command
and a missing file are non-zero exits with a reason; a loop honours its timeout; the host's
/etc/passwd is unreadable and nothing is written outside the workspace; two sandboxes share no
files; closing twice is fine. Exits non-zero on any failure.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

CPP = """#include <iostream>
#include <fstream>
int main() { std::ifstream in("data.txt"); int a, b; in >> a >> b; std::cout << a * b << std::endl; }
"""
READER = "a, b = map(int, open('data.txt').read().split())\nprint(a + b)\n"


class Box:
    """What the scenario needs of a provider: run, write, read, close."""

    timeout_per_call = True

    async def run(self, command: str, timeout: float = 30) -> tuple[int, str, str]: ...
    async def write(self, path: str, data: bytes) -> None: ...
    async def read(self, path: str) -> bytes: ...
    async def close(self) -> None: ...
    def where(self) -> str | None: ...


def check(cond: bool, what: str) -> None:
    if not cond:
        raise AssertionError(what)
    print(f"  ok: {what}")


async def scenario(make) -> None:
    box = await make()
    await box.write("data.txt", b"6 7\n")
    await box.write("main.py", READER.encode())
    code, out, err = await box.run("python3 main.py")
    check((code, out) == (0, "13\n"), f"a Python program reads a written file ({code}, {out!r}, {err!r})")
    await box.write("hello.cpp", CPP.encode())
    code, out, err = await box.run("g++ -O2 -o hello hello.cpp && ./hello")
    check((code, out) == (0, "42\n"), f"a C++ program compiles and runs ({code}, {out!r}, {err[-300:]!r})")
    code, out, err = await box.run("python3 -c 'open(\"made.txt\", \"w\").write(\"made\")' made.txt")
    check(code == 0 and await box.read("made.txt") == b"made", "a file a program wrote is read back")
    code, out, err = await box.run("python3 -c 'raise ValueError(\"boom\")'")
    check(code != 0 and "Traceback" in err and "ValueError: boom" in err, "a raising program: non-zero exit, traceback")
    code, out, err = await box.run("wget http://example.com")
    check(code == 127 and "unsupported command: wget" in err, "a foreign command: exit 127 with the reason")
    code, out, err = await box.run("python3 missing.py")
    check(code != 0 and "missing.py" in err, "a missing file: non-zero exit naming it")
    if box.timeout_per_call:
        started = time.monotonic()
        code, out, err = await box.run("python3 -c 'while True: pass'", timeout=1)
        check(code == 124 and time.monotonic() - started < 10, f"a loop honours its timeout ({code})")
    marker = f"grpo-provider-check-{uuid.uuid4().hex[:8]}"
    code, out, err = await box.run(
        f"python3 -c 'print(open(\"/etc/passwd\").read())' && python3 -c 'open(\"/tmp/{marker}\", \"w\")'"
    )
    check(code != 0 and "root:" not in out, "the host's /etc/passwd is unreadable")
    code, out, err = await box.run(f"python3 -c 'open(\"/tmp/{marker}\", \"w\").write(\"x\")'")
    check(code == 0 and not Path(tempfile.gettempdir(), marker).exists(), "nothing is written outside the workspace")
    other = await make()
    await other.write("secret.txt", b"other's")
    code, out, err = await box.run("python3 -c 'open(\"secret.txt\")'")
    check(code != 0 and "FileNotFoundError" in err, "two sandboxes share no files")
    where = box.where()
    await other.close()
    await box.close()
    await box.close()
    check(where is None or not os.path.exists(where), "close twice is fine and removes the workspace")


async def verifiers_check() -> None:
    from verifiers.v1.errors import SandboxError
    from verifiers.v1.runtimes.base import Runtime

    from grpo_rewards.verifiers_runtime import LocalSandboxRuntime

    class VfBox(Box):
        # `Runtime.run(argv, env)` takes no timeout: the runtime's `timeout_s` bounds each run
        # (checked below).
        timeout_per_call = False

        def __init__(self, rt: LocalSandboxRuntime) -> None:
            self.rt = rt

        async def run(self, command, timeout=30):
            # How verifiers calls a runtime: an argv, `sh -c` for a line with `&&`.
            argv = ["sh", "-c", command] if "&&" in command or "'" in command else command.split()
            r = await asyncio.wait_for(self.rt.run(argv, {}), timeout + 30)
            return r.exit_code, r.stdout, r.stderr

        async def write(self, path, data):
            await self.rt.write(path, data)

        async def read(self, path):
            return await self.rt.read(path, max_bytes=1 << 20)  # Runtime.read, the framework's

        async def close(self):
            await self.rt.stop()  # Runtime.stop: shielded teardown, then cleanup

        def where(self):
            return self.rt.sandbox.path if self.rt.sandbox else None

    async def make():
        rt = LocalSandboxRuntime()  # no arguments
        assert isinstance(rt, Runtime)
        await rt.start()
        return VfBox(rt)

    await scenario(make)
    rt = LocalSandboxRuntime(timeout_s=1)
    await rt.start()
    started = time.monotonic()
    r = await rt.run(["python3", "-c", "while True: pass"], {})
    check(r.exit_code == 124 and time.monotonic() - started < 10, "a loop honours the runtime's timeout_s")
    check(await rt.alive(), "Runtime.alive() (runs `true`)")
    r = await rt.run(["python3", "-c", "print('a b')"], {})
    check((r.exit_code, r.stdout) == (0, "a b\n"), "an argv is quoted into one command line")
    try:
        await rt.read("nothing.txt")
        check(False, "reading a missing file raises")
    except SandboxError as e:
        check("nothing.txt" in str(e), "Runtime.read of a missing file raises SandboxError")
    await rt.write("big.txt", b"x" * 100)
    try:
        await rt.read("big.txt", max_bytes=10)
        check(False, "read over max_bytes raises")
    except SandboxError:
        check(True, "Runtime.read past max_bytes raises SandboxError")
    await rt.stop()


async def tinker_check() -> None:
    from tinker_cookbook.sandbox import SandboxInterface
    from tinker_cookbook.sandbox.sandbox_interface import SandboxResource

    from grpo_rewards.tinker_sandbox import LocalTinkerSandbox

    class TkBox(Box):
        def __init__(self, sb) -> None:
            self.sb = sb
            self.resource = SandboxResource(sb)
            self.path = sb._sandbox.path

        async def run(self, command, timeout=30):
            r = await self.sb.run_command(command, timeout=int(timeout))
            return r.exit_code, r.stdout, r.stderr

        async def write(self, path, data):
            r = await self.sb.write_file(path, data)
            assert r.exit_code == 0, r

        async def read(self, path):
            r = await self.sb.read_file(path)
            assert r.exit_code == 0, r
            return r.stdout.encode()

        async def close(self):
            await self.resource.cleanup()

        def where(self):
            return self.path

    async def make():
        sb = await LocalTinkerSandbox.create()  # no required arguments
        check(isinstance(sb, SandboxInterface), "isinstance(sandbox, SandboxInterface)")
        await SandboxResource(sb).send_heartbeat()
        return TkBox(sb)

    await scenario(make)
    sb = await LocalTinkerSandbox.create()
    r = await sb.read_file("missing.txt")
    check(r.exit_code != 0 and "missing.txt" in r.stderr, "read_file of a missing file: non-zero, named")


async def nemo_gym_check() -> None:
    from nemo_gym.sandbox.api import AsyncSandbox
    from nemo_gym.sandbox.providers.base import SandboxSpec
    from nemo_gym.sandbox.providers.registry import get_provider_class, list_providers

    from grpo_rewards.nemo_gym_sandbox import LocalSandboxProvider

    check("grpo_local" in list_providers(), "the entry point `grpo_local` is listed")
    check(get_provider_class("grpo_local") is LocalSandboxProvider, "it loads LocalSandboxProvider")
    LocalSandboxProvider()  # no arguments

    class NgBox(Box):
        def __init__(self, sb: AsyncSandbox) -> None:
            self.sb = sb
            self.path = sb._handle.raw.path  # the workspace, to see that stop removes it

        async def run(self, command, timeout=30):
            r = await self.sb.exec(command, timeout_s=timeout)
            return r.return_code, r.stdout or "", r.stderr or ""

        async def write(self, path, data):
            with tempfile.TemporaryDirectory() as d:
                src = Path(d, "f")
                src.write_bytes(data)
                await self.sb.upload(src, path)

        async def read(self, path):
            with tempfile.TemporaryDirectory() as d:
                dst = Path(d, "f")
                await self.sb.download(path, dst)
                return dst.read_bytes()

        async def close(self):
            await self.sb.stop()  # AsyncSandbox.stop: the provider's close, then aclose

        def where(self):
            return self.path

    async def make():
        sb = AsyncSandbox({"grpo_local": {}}, SandboxSpec(files={"spec.txt": "from the spec"}))
        await sb.start()
        box = NgBox(sb)
        check(await box.read("spec.txt") == b"from the spec", "SandboxSpec.files are placed")
        return box

    await scenario(make)


CHECKS = {"verifiers": verifiers_check, "tinker": tinker_check, "nemo_gym": nemo_gym_check}


def main() -> int:
    names = sys.argv[1:] or list(CHECKS)
    for name in names:
        if name not in CHECKS:
            print(f"unknown framework {name!r}; one of {', '.join(CHECKS)}", file=sys.stderr)
            return 2
        print(f"{name}:")
        asyncio.run(CHECKS[name]())
    print("all provider checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

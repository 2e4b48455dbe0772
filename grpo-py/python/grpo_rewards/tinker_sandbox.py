"""A tinker-cookbook sandbox backed by ``LocalSandbox``: ``await LocalTinkerSandbox.create()``
gives an object that passes ``isinstance(x, SandboxInterface)`` (``run_command``,
``read_file``, ``write_file``, ``send_heartbeat``, ``cleanup``, ``sandbox_id``).

``workdir`` may be ``None``, ``"/tmp"`` or ``"."`` (the workspace is the program's ``/tmp``);
another is an exit code 2 with the reason. ``executable`` is accepted and has no effect: only
programs built in the sandbox by ``gcc``/``g++`` run as ``./OUT``.

Requires ``tinker-cookbook`` (``pip install tinker-cookbook``).
"""

from __future__ import annotations

from typing import Any, Optional, Union

from tinker_cookbook.sandbox.sandbox_interface import SandboxResult, SandboxTerminatedError

from .local_sandbox import LocalSandbox, SandboxClosed

_WORKDIRS = (None, "", ".", "/tmp", "/tmp/")


class LocalTinkerSandbox:
    """One ``LocalSandbox`` behind tinker-cookbook's ``SandboxInterface``."""

    def __init__(self, sandbox: LocalSandbox) -> None:
        self._sandbox = sandbox
        self._id = sandbox.path or "closed"

    @classmethod
    async def create(cls, **limits: Any) -> "LocalTinkerSandbox":
        return cls(await LocalSandbox.create_async(**limits))

    @property
    def sandbox_id(self) -> str:
        return self._id

    async def send_heartbeat(self, timeout: int = 30) -> None:
        if self._sandbox.closed:
            raise SandboxTerminatedError(f"sandbox {self._id} is closed")

    async def run_command(
        self,
        command: str,
        workdir: Optional[str] = None,
        timeout: int = 60,
        max_output_bytes: Optional[int] = None,
    ) -> SandboxResult:
        if workdir not in _WORKDIRS:
            return SandboxResult(
                stdout="", stderr=f"workdir {workdir!r}: only the workspace (/tmp) is supported\n", exit_code=2
            )
        try:
            r = await self._sandbox.exec_async(command, timeout=float(timeout))
        except SandboxClosed as e:
            raise SandboxTerminatedError(str(e)) from e
        stdout, stderr = r.stdout, r.stderr
        if max_output_bytes is not None:
            stdout = stdout.encode()[:max_output_bytes].decode(errors="ignore")
            stderr = stderr.encode()[:max_output_bytes].decode(errors="ignore")
        return SandboxResult(
            stdout=stdout,
            stderr=stderr,
            exit_code=r.exit_code,
            metrics={"timed_out": r.timed_out, "truncated": r.truncated},
        )

    async def read_file(self, path: str, max_bytes: Optional[int] = None, timeout: int = 60) -> SandboxResult:
        try:
            data = await self._sandbox.read_async(path)
        except SandboxClosed as e:
            raise SandboxTerminatedError(str(e)) from e
        except (FileNotFoundError, ValueError) as e:
            return SandboxResult(stdout="", stderr=f"{e}\n", exit_code=1)
        if max_bytes is not None:
            data = data[:max_bytes]
        return SandboxResult(stdout=data.decode(errors="replace"), stderr="", exit_code=0)

    async def write_file(
        self, path: str, content: Union[str, bytes], executable: bool = False, timeout: int = 60
    ) -> SandboxResult:
        try:
            await self._sandbox.write_async(path, content)
        except SandboxClosed as e:
            raise SandboxTerminatedError(str(e)) from e
        except (ValueError, OSError) as e:
            return SandboxResult(stdout="", stderr=f"{e}\n", exit_code=1)
        return SandboxResult(stdout="", stderr="", exit_code=0)

    async def cleanup(self) -> None:
        await self._sandbox.close_async()

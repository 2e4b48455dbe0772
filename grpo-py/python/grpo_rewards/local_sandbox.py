"""``LocalSandbox``: a private workspace in the wasm sandbox with the shape the RL frameworks'
sandboxes share: create, ``exec(command, timeout)`` -> ``ExecResult(exit_code, stdout,
stderr)``, ``read`` / ``write`` a file, ``close``; each also as an ``async`` method
(``create_async``, ``exec_async``, ...), which runs on the loop's executor with the GIL
released.

A command line is simple commands joined by ``&&``: ``python3 FILE [ARGS]``,
``python3 -c CODE [ARGS]``, ``node FILE`` (``.js``/``.ts``), ``gcc``/``g++ [-o OUT] FILE``,
``./OUT [ARGS]``, each with ``< FILE`` and ``> FILE``. Anything else exits 127 with
``unsupported command: NAME`` on stderr. Paths are relative to the workspace (a program sees
it as ``/tmp``, its current directory); absolute host paths and ``..`` raise ``ValueError``.
Closing twice is fine; a dropped sandbox removes its directory too.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any, Optional, Union

from . import _native

ExecResult = _native.ExecResult
SandboxClosed = _native.SandboxClosed


class LocalSandbox:
    """One workspace. Keyword limits: ``cpu_s``, ``memory_mb`` per command; ``timeout_s`` the
    longest ``exec``; ``output_bytes`` per ``exec``; ``quota_bytes`` for its files;
    ``cpu_budget_s`` and ``lifetime_s`` for the whole sandbox."""

    __slots__ = ("_native",)

    def __init__(self, **limits: Any) -> None:
        self._native = _native.LocalSandbox(**limits)

    @classmethod
    def create(cls, **limits: Any) -> "LocalSandbox":
        return cls(**limits)

    @classmethod
    async def create_async(cls, **limits: Any) -> "LocalSandbox":
        # A directory and nothing else: cheap enough to make on the loop.
        return cls(**limits)

    def exec(self, command: str, timeout: Optional[float] = None) -> ExecResult:
        return self._native.exec(command, timeout)

    def read(self, path: str) -> bytes:
        return self._native.read(path)

    def write(self, path: str, data: Union[bytes, str]) -> None:
        self._native.write(path, data)

    def list(self) -> list[tuple[str, int]]:
        return self._native.list()

    def close(self) -> None:
        self._native.close()

    @property
    def closed(self) -> bool:
        return self._native.closed

    @property
    def path(self) -> Optional[str]:
        """The workspace's directory on the host (``None`` once closed)."""
        return self._native.path

    async def _off_loop(self, call: Any, *args: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, functools.partial(call, *args))

    async def exec_async(self, command: str, timeout: Optional[float] = None) -> ExecResult:
        return await self._off_loop(self._native.exec, command, timeout)

    async def read_async(self, path: str) -> bytes:
        return await self._off_loop(self._native.read, path)

    async def write_async(self, path: str, data: Union[bytes, str]) -> None:
        await self._off_loop(self._native.write, path, data)

    async def close_async(self) -> None:
        await self._off_loop(self._native.close)

    def __enter__(self) -> "LocalSandbox":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    async def __aenter__(self) -> "LocalSandbox":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close_async()

    def __repr__(self) -> str:
        return repr(self._native)

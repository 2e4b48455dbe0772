"""A verifiers (0.4) ``verifiers.v1`` ``Runtime`` backed by ``LocalSandbox``.

``LocalSandboxRuntime()`` needs no arguments. ``run(argv, env)`` runs ``argv`` through the
command subset: ``["sh", "-c", LINE]`` runs ``LINE``; any other argv is quoted into one line
(``["python3", "main.py"]``). The sandbox has an empty environment, so ``env`` is not passed
on. ``_read`` reads through the API (the base class would shell out to ``mktemp``, ``head``
and ``base64``, which are outside the subset).

Requires ``verifiers`` (``pip install verifiers``).
"""

from __future__ import annotations

import shlex
from typing import Any, Literal, Optional

from pydantic_config import BaseConfig
from verifiers.v1.errors import SandboxError
from verifiers.v1.runtimes.base import BaseRuntimeInfo, ProgramResult, Runtime

from .local_sandbox import LocalSandbox


class LocalSandboxConfig(BaseConfig):
    type: Literal["grpo-local"] = "grpo-local"


class LocalSandboxRuntimeInfo(LocalSandboxConfig, BaseRuntimeInfo):
    pass


def command_line(argv: list[str]) -> str:
    """The command line ``argv`` stands for: ``sh -c LINE`` is ``LINE``."""
    if len(argv) >= 3 and argv[0] in ("sh", "bash") and argv[1] == "-c":
        if len(argv) > 3:
            raise SandboxError("sh -c with positional arguments is not supported by the local sandbox")
        return argv[2]
    return " ".join(shlex.quote(a) for a in argv)


class LocalSandboxRuntime(Runtime):
    """A ``Runtime`` whose box is a ``LocalSandbox`` (created by ``start``, closed by
    ``cleanup``). Keyword limits go to ``LocalSandbox``; ``run`` takes no timeout, so the
    sandbox's ``timeout_s`` bounds each run."""

    def __init__(
        self, config: Optional[LocalSandboxConfig] = None, name: Optional[str] = None, **limits: Any
    ) -> None:
        super().__init__(name)
        self.config = config or LocalSandboxConfig()
        self.info = LocalSandboxRuntimeInfo(**self.config.model_dump())
        self.limits = limits
        self.sandbox: Optional[LocalSandbox] = None

    def _box(self) -> LocalSandbox:
        if self.sandbox is None:
            raise SandboxError("the runtime is not started (call start())")
        return self.sandbox

    async def start(self) -> None:
        if self.sandbox is None:
            self.sandbox = await LocalSandbox.create_async(**self.limits)
            self.info.id = self.sandbox.path

    async def run(self, argv: list[str], env: dict[str, str]) -> ProgramResult:
        result = await self._box().exec_async(command_line(argv))
        return ProgramResult(exit_code=result.exit_code, stdout=result.stdout, stderr=result.stderr)

    async def _read(self, path: str, max_bytes: Optional[int] = None) -> bytes:
        try:
            data = await self._box().read_async(path)
        except (FileNotFoundError, ValueError) as e:
            raise SandboxError(f"read {path!r}: {e}") from e
        return data if max_bytes is None else data[:max_bytes]

    async def write(self, path: str, data: bytes) -> None:
        try:
            await self._box().write_async(path, data)
        except (ValueError, OSError) as e:
            raise SandboxError(f"write {path!r}: {e}") from e

    def cleanup(self) -> None:
        if self.sandbox is not None:
            self.sandbox.close()

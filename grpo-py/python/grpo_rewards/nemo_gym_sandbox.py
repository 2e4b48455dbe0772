"""A NeMo Gym sandbox provider backed by ``LocalSandbox``, published under the entry-point
group ``nemo_gym.sandbox_providers`` as ``grpo_local``: ``AsyncSandbox({"grpo_local": {}},
SandboxSpec(...))`` finds it once ``grpo-rewards`` is installed. ``LocalSandboxProvider()``
needs no arguments (keyword limits as ``LocalSandbox``'s).

``spec.files`` are written into the workspace (by NeMo Gym, through ``upload_file``);
``spec.ttl_s`` is the sandbox's lifetime. ``cwd`` may be ``None`` or ``/tmp`` (the
workspace); ``env`` and ``user`` are not supported (the sandbox has an empty environment and
no users): a command that sets them is exit code 2 with the reason. The image is not used.

Requires ``nemo-gym``.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any, Optional, Union

from nemo_gym.sandbox.providers.base import SandboxExecResult, SandboxHandle, SandboxSpec, SandboxStatus

from .local_sandbox import LocalSandbox, SandboxClosed

_CWDS = (None, "", ".", "/tmp", "/tmp/")


class LocalSandboxProvider:
    """NeMo Gym's ``SandboxProvider`` protocol over ``LocalSandbox``."""

    name = "grpo_local"

    def __init__(self, **limits: Any) -> None:
        self._limits = limits

    async def create(self, spec: SandboxSpec) -> SandboxHandle:
        limits = dict(self._limits)
        if spec.ttl_s is not None:
            limits["lifetime_s"] = float(spec.ttl_s)
        sandbox = await LocalSandbox.create_async(**limits)
        return SandboxHandle(sandbox_id=f"grpo-{uuid.uuid4().hex[:12]}", provider_name=self.name, raw=sandbox)

    async def exec(
        self,
        handle: SandboxHandle,
        command: str,
        *,
        cwd: Optional[str] = None,
        env: Optional[dict[str, str]] = None,
        timeout_s: Union[int, float, None] = None,
        user: Union[str, int, None] = None,
    ) -> SandboxExecResult:
        refused = None
        if cwd not in _CWDS:
            refused = f"cwd {cwd!r}: only the workspace (/tmp) is supported"
        elif env:
            refused = "env: the local sandbox runs programs with an empty environment"
        elif user is not None:
            refused = "user: the local sandbox has no users"
        if refused is not None:
            return SandboxExecResult(stdout="", stderr=refused + "\n", return_code=2)
        sandbox: LocalSandbox = handle.raw
        try:
            r = await sandbox.exec_async(command, timeout=None if timeout_s is None else float(timeout_s))
        except SandboxClosed as e:
            return SandboxExecResult(stdout="", stderr=f"{e}\n", return_code=125, error_type="sandbox_closed")
        return SandboxExecResult(
            stdout=r.stdout,
            stderr=r.stderr,
            return_code=r.exit_code,
            error_type="timeout" if r.timed_out else None,
        )

    async def upload_file(self, handle: SandboxHandle, source_path: Path, target_path: str) -> None:
        await handle.raw.write_async(target_path, Path(source_path).read_bytes())

    async def download_file(self, handle: SandboxHandle, source_path: str, target_path: Path) -> None:
        data = await handle.raw.read_async(source_path)
        target = Path(target_path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)

    async def status(self, handle: SandboxHandle) -> SandboxStatus:
        return SandboxStatus.STOPPED if handle.raw.closed else SandboxStatus.RUNNING

    async def close(self, handle: SandboxHandle) -> None:
        await handle.raw.close_async()

    async def aclose(self) -> None:
        return None

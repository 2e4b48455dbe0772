from typing import Optional, Sequence, Union

__version__: str

class RewardFault(RuntimeError): ...

class InterpreterClosed(RuntimeError):
    """The interpreter is closed (by ``close()``, its ``with`` block, or a spent CPU budget
    or lifetime)."""

class RunResult:
    """What one ``Interpreter.run`` call printed and how it ended."""

    def __init__(
        self,
        status: str,
        stdout: str,
        stderr: str,
        exit_code: Optional[int],
        duration_ms: float,
        truncated: bool,
        cpu_ms: float = 0.0,
    ) -> None: ...
    @property
    def status(self) -> str:
        """``ok``, ``error``, ``timeout``, ``memory_limit``, ``output_limit`` or ``crash``."""
        ...
    @property
    def stdout(self) -> str: ...
    @property
    def stderr(self) -> str: ...
    @property
    def exit_code(self) -> Optional[int]: ...
    @property
    def duration_ms(self) -> float:
        """Wall-clock time of the call."""
        ...
    @property
    def cpu_ms(self) -> float:
        """CPU time the call received: what ``time_limit_ms`` is charged with."""
        ...
    @property
    def truncated(self) -> bool: ...
    @property
    def ok(self) -> bool:
        """``status == "ok"``."""
        ...

class Interpreter:
    """A sandboxed Python interpreter that keeps its globals across ``run`` calls.

    ``time_limit_ms`` (CPU time), ``wall_limit_ms`` (default three times the time) and ``output_bytes`` bound
    each call; ``memory_mb`` and ``file_quota_bytes`` the whole interpreter;
    ``session_cpu_ms`` and ``lifetime_ms`` its total CPU time and life. The GIL is released
    while a call runs; calls from several threads take turns.
    """

    def __init__(
        self,
        *,
        time_limit_ms: Optional[int] = None,
        wall_limit_ms: Optional[int] = None,
        memory_mb: Optional[int] = None,
        output_bytes: Optional[int] = None,
        file_quota_bytes: Optional[int] = None,
        session_cpu_ms: Optional[int] = None,
        lifetime_ms: Optional[int] = None,
        open_timeout_s: float = 60.0,
    ) -> None: ...
    def run(self, code: str) -> RunResult: ...
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    @property
    def limits(self) -> dict[str, int]: ...
    def stats(self) -> dict[str, float]: ...
    def __enter__(self) -> Interpreter: ...
    def __exit__(self, exc_type: object, exc: object, traceback: object) -> bool: ...

class MathResult:
    def __init__(self, correct: bool, extracted: Optional[str], kind: str, reason: str) -> None: ...
    @property
    def correct(self) -> bool: ...
    @property
    def extracted(self) -> Optional[str]: ...
    @property
    def kind(self) -> str: ...
    @property
    def reason(self) -> str: ...

class TestResult:
    def __init__(
        self, index: int, passed: bool, status: str, reason: str, points: Optional[float] = None
    ) -> None: ...
    @property
    def index(self) -> int: ...
    @property
    def passed(self) -> bool: ...
    @property
    def status(self) -> str: ...
    @property
    def reason(self) -> str: ...
    @property
    def points(self) -> Optional[float]: ...

class Score:
    def __init__(
        self,
        task_id: str,
        reward: float,
        rewards: dict[str, float],
        correct: bool,
        kind: str,
        reason: str,
        tests: Optional[list[TestResult]] = None,
    ) -> None: ...
    @property
    def task_id(self) -> str: ...
    @property
    def reward(self) -> float: ...
    @property
    def rewards(self) -> dict[str, float]: ...
    @property
    def correct(self) -> bool: ...
    @property
    def kind(self) -> str: ...
    @property
    def reason(self) -> str: ...
    @property
    def tests(self) -> Optional[list[TestResult]]: ...

class Pack:
    def __init__(self, spec: str) -> None: ...
    @property
    def name(self) -> str: ...
    def ids(self) -> list[str]: ...
    def task_json(self, id: str) -> str: ...
    def score(self, task_id: str, completions: list[str]) -> list[Score]: ...
    def __len__(self) -> int: ...

def check_math(
    gold: str,
    prediction: str,
    *,
    alternatives: Optional[Sequence[str]] = None,
    rules: Optional[Sequence[str]] = None,
    rel_tol: Optional[float] = None,
    abs_tol: Optional[float] = None,
    rename_variables: bool = False,
) -> MathResult: ...
def check_math_batch(
    pairs: Sequence[tuple[str, str]],
    *,
    threads: Optional[int] = None,
    rules: Optional[Sequence[str]] = None,
    rel_tol: Optional[float] = None,
    abs_tol: Optional[float] = None,
    rename_variables: bool = False,
) -> list[MathResult]: ...
def verify_answers(
    gold: Sequence[str],
    answers: Sequence[str],
    *,
    rel_tol: Optional[float] = None,
    abs_tol: Optional[float] = None,
) -> bool: ...
def extract_answer(completion: str, *, rules: Optional[Sequence[str]] = None) -> Optional[str]: ...
def score(
    task_json: str,
    completions: Sequence[str],
    *,
    accuracy: Optional[float] = None,
    format: Optional[float] = None,
) -> list[Score]: ...
def scorers_built() -> int:
    """How many scorers this process has built (calls reuse theirs)."""
    ...
def set_threads(threads: int) -> None: ...
def threads() -> tuple[int, str, bool, Optional[int], Optional[int]]:
    """(count, source, fixed, runtime workers, sandbox concurrency)."""
    ...

def task_from_ground_truth(ground_truth_json: str, task_id: str = "request") -> str: ...
def task_from_verification_info(verification_info_json: str, task_id: str = "request") -> str: ...

class SandboxClosed(RuntimeError):
    """The local sandbox is closed (by ``close()``, its ``with`` block, or a spent lifetime or
    CPU budget)."""

class ExecResult:
    """What one ``LocalSandbox.exec`` printed and how it ended."""

    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool
    truncated: bool
    def __init__(self, exit_code: int, stdout: str, stderr: str, timed_out: bool, truncated: bool) -> None: ...

class LocalSandbox:
    """A private workspace directory in the wasm sandbox, across commands."""

    def __init__(
        self,
        *,
        cpu_s: float = 10.0,
        memory_mb: int = 256,
        timeout_s: float = 60.0,
        output_bytes: int = 1048576,
        quota_bytes: int = 16777216,
        cpu_budget_s: float = 600.0,
        lifetime_s: Optional[float] = 3600.0,
    ) -> None: ...
    def exec(self, command: str, timeout: Optional[float] = None) -> ExecResult: ...
    def read(self, path: str) -> bytes: ...
    def write(self, path: str, data: Union[bytes, str]) -> None: ...
    def list(self) -> list[tuple[str, int]]: ...
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    @property
    def path(self) -> Optional[str]: ...
    def __enter__(self) -> LocalSandbox: ...
    def __exit__(self, *exc: object) -> bool: ...

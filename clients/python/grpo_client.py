"""Python client of the `grpo serve` verifier service.

One small module on `httpx`:

- `GrpoClient` / `AsyncGrpoClient` (one server or a list of them): `score(...)` (one task and a group of completions,
  `POST /v1/score`), `run_code(...)` (SandboxFusion's `POST /run_code`), `ping()`.
- `trl_reward_function(url)`: an async reward function for TRL's `GRPOTrainer`.
- `compute_score(...)`: a verl `custom_reward_function` hook.

Transient failures (connection errors, timeouts, HTTP 502/503/504, SandboxFusion's
`SandboxError`) are retried with exponential backoff, on another server when there are
several; when the retries are spent the call raises `GrpoServiceError`. A reward function must never answer a silent 0 or None for a
completion it could not score: that would corrupt its group's advantages.

    >>> client = GrpoClient("http://127.0.0.1:8080")              # doctest: +SKIP
    >>> client.score(ground_truth="42", completions=["\\\\boxed{42}", "41"])  # doctest: +SKIP
    [{'task_id': 'request', 'reward': 1.0, 'correct': True, ...}, {...}]
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from typing import Any, Optional, Sequence, Union

import httpx

__all__ = [
    "AsyncGrpoClient",
    "GrpoClient",
    "GrpoServiceError",
    "compute_score",
    "trl_reward_function",
]

DEFAULT_URL = "http://127.0.0.1:8080"
TRANSIENT_STATUS = (502, 503, 504)


class GrpoServiceError(RuntimeError):
    """The service could not score a request (after retries, or a 4xx: bad input)."""

    def __init__(self, message: str, status: Optional[int] = None, body: Any = None):
        super().__init__(message)
        self.status = status
        self.body = body


def _score_body(
    completions: Sequence[str],
    task: Optional[dict] = None,
    ground_truth: Any = None,
    verification_info: Any = None,
    task_id: Optional[str] = None,
    credit: Optional[str] = None,
    format_weight: Optional[float] = None,
) -> dict:
    shapes = [x is not None for x in (task, ground_truth, verification_info)]
    if sum(shapes) != 1:
        raise ValueError("give exactly one of task, ground_truth or verification_info")
    body: dict = {"completions": [_text(c) for c in completions]}
    if task is not None:
        body["task"] = task
    if ground_truth is not None:
        body["ground_truth"] = ground_truth
    if verification_info is not None:
        body["verification_info"] = verification_info
    if task_id is not None:
        body["id"] = task_id
    if credit is not None:
        body["credit"] = credit
    if format_weight is not None:
        body["format_weight"] = format_weight
    return body


def _text(completion: Any) -> str:
    """A completion as text: TRL's conversational completions are lists of messages."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and completion and isinstance(completion[-1], dict):
        return str(completion[-1].get("content", ""))
    if isinstance(completion, dict) and "content" in completion:
        return str(completion["content"])
    raise TypeError(f"a completion must be a string or a list of messages, got {type(completion).__name__}")


def _check(response: httpx.Response) -> Any:
    """The JSON body of a final answer, or an error naming the server's reason."""
    try:
        body = response.json()
    except ValueError:
        body = response.text
    if response.status_code >= 400:
        detail = body.get("detail") if isinstance(body, dict) else body
        raise GrpoServiceError(f"HTTP {response.status_code}: {detail}", response.status_code, body)
    return body


def _transient(response: Optional[httpx.Response], body: Any) -> bool:
    if response is None:
        return True
    if response.status_code in TRANSIENT_STATUS:
        return True
    return isinstance(body, dict) and body.get("status") == "SandboxError"


class _Endpoints:
    """The servers of one client: requests go round-robin over them, and a server that
    failed to answer (connection refused or reset, timeout, 502/503/504) is passed over for
    `cooldown` seconds, so a batch keeps going on the others when one goes away."""

    def __init__(self, url: Union[str, Sequence[str]], cooldown: float):
        urls = [url] if isinstance(url, str) else list(url)
        if not urls:
            raise ValueError("give at least one server URL")
        self.urls = [u.rstrip("/") for u in urls]
        self.cooldown = cooldown
        self._next = 0
        self._down_until = [0.0] * len(self.urls)
        self._lock = threading.Lock()

    def pick(self, avoid: Optional[int] = None) -> int:
        """The next server that is up (not `avoid` when another is up); when every server
        failed lately, the one whose cool-down ends first."""
        with self._lock:
            now = time.monotonic()
            n = len(self.urls)
            order = [(self._next + k) % n for k in range(n)]
            up = [i for i in order if self._down_until[i] <= now]
            choices = [i for i in up if i != avoid] or up
            chosen = choices[0] if choices else min(order, key=lambda i: self._down_until[i])
            self._next = (chosen + 1) % n
            return chosen

    def failed(self, index: int) -> None:
        with self._lock:
            self._down_until[index] = time.monotonic() + self.cooldown

    def served(self, index: int) -> None:
        with self._lock:
            self._down_until[index] = 0.0


def _headers(token: Optional[str]) -> dict:
    token = token if token is not None else os.environ.get("GRPO_AUTH_TOKEN")
    return {"Authorization": f"Bearer {token}"} if token else {}


class GrpoClient:
    """A blocking client of one server or several.

    `url` is one server or a list of servers: requests are spread over them round-robin, and a
    transient failure is retried on another server. Every route of `grpo serve` is idempotent
    (scoring is a pure function, a sandboxed run changes nothing outside its sandbox), so
    retrying after a timeout is safe; only transient failures are retried (connection errors,
    timeouts, 502/503/504, SandboxFusion's `SandboxError`), never a 4xx (the request is wrong)
    or a 500 (it would fail again). `retries` is the number of extra attempts after the first;
    `backoff` the first delay in seconds (doubled each time). `token` (default
    `$GRPO_AUTH_TOKEN`) is sent as `Authorization: Bearer <token>`.
    """

    def __init__(self, url: Union[str, Sequence[str]] = DEFAULT_URL, timeout: float = 120.0, retries: int = 4,
                 backoff: float = 0.25, token: Optional[str] = None, cooldown: float = 5.0):
        self._endpoints = _Endpoints(url, cooldown)
        self.url = self._endpoints.urls[0]
        self.urls = self._endpoints.urls
        self.retries = retries
        self.backoff = backoff
        self._http = httpx.Client(timeout=timeout, headers=_headers(token))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "GrpoClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _request(self, method: str, path: str, body: Any = None) -> Any:
        last = "no attempt made"
        server: Optional[int] = None
        for attempt in range(self.retries + 1):
            server = self._endpoints.pick(avoid=server)
            url = self._endpoints.urls[server] + path
            try:
                response = self._http.request(method, url, json=body)
                if response.status_code not in TRANSIENT_STATUS:
                    result = _check(response)
                    if not _transient(response, result):
                        self._endpoints.served(server)
                        return result
                    last = f"{url}: sandbox error: {result.get('message')}"
                else:
                    last = f"{url}: HTTP {response.status_code}: {response.text[:200]}"
            except httpx.TransportError as e:  # connection refused, reset, timeout
                last = f"{url}: {type(e).__name__}: {e}"
            self._endpoints.failed(server)
            if attempt < self.retries:
                time.sleep(self.backoff * 2**attempt)
        raise GrpoServiceError(f"{method} {path} failed after {self.retries + 1} attempts: {last}")

    def ping(self) -> bool:
        """True when the server answers `/v1/ping` with "pong"."""
        return self._request("GET", "/v1/ping") == "pong"

    def score(self, completions: Sequence[str], **shape: Any) -> list[dict]:
        """Scores one group: one result per completion, in order.

        Give exactly one of `task=` (our pack schema), `ground_truth=` (verl) or
        `verification_info=` (open-r1); optionally `task_id=`, `credit=` ("binary" or
        "partial") and `format_weight=`.
        """
        return self._request("POST", "/v1/score", _score_body(completions, **shape))["results"]

    def run_code(self, code: str, stdin: Optional[str] = None, run_timeout: float = 10, memory_limit_mb: int = 1024) -> dict:
        """Runs one Python program (SandboxFusion's `/run_code`); returns its response."""
        body = {"code": code, "stdin": stdin, "language": "python", "run_timeout": run_timeout,
                "compile_timeout": run_timeout, "memory_limit_MB": memory_limit_mb, "files": {}, "fetch_files": []}
        return self._request("POST", "/run_code", body)


class AsyncGrpoClient:
    """The asyncio twin of `GrpoClient` (same arguments and methods, awaited). Concurrent
    calls (`asyncio.gather` over the groups of a batch) are spread over the servers."""

    def __init__(self, url: Union[str, Sequence[str]] = DEFAULT_URL, timeout: float = 120.0, retries: int = 4,
                 backoff: float = 0.25, max_connections: int = 64, token: Optional[str] = None,
                 cooldown: float = 5.0):
        self._endpoints = _Endpoints(url, cooldown)
        self.url = self._endpoints.urls[0]
        self.urls = self._endpoints.urls
        self.retries = retries
        self.backoff = backoff
        self._timeout = timeout
        self._headers = _headers(token)
        self._limits = httpx.Limits(max_connections=max_connections)
        self._http: Optional[httpx.AsyncClient] = None
        self._loop: Optional[asyncio.AbstractEventLoop] = None

    def _client(self) -> httpx.AsyncClient:
        # Created lazily inside the running event loop, and again when a caller (TRL, a test)
        # runs us on a new loop: a connection pool cannot outlive its loop.
        loop = asyncio.get_running_loop()
        if self._http is None or self._loop is not loop:
            self._http = httpx.AsyncClient(timeout=self._timeout, limits=self._limits, headers=self._headers)
            self._loop = loop
        return self._http

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    async def __aenter__(self) -> "AsyncGrpoClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def _request(self, method: str, path: str, body: Any = None) -> Any:
        last = "no attempt made"
        server: Optional[int] = None
        for attempt in range(self.retries + 1):
            server = self._endpoints.pick(avoid=server)
            url = self._endpoints.urls[server] + path
            try:
                response = await self._client().request(method, url, json=body)
                if response.status_code not in TRANSIENT_STATUS:
                    result = _check(response)
                    if not _transient(response, result):
                        self._endpoints.served(server)
                        return result
                    last = f"{url}: sandbox error: {result.get('message')}"
                else:
                    last = f"{url}: HTTP {response.status_code}: {response.text[:200]}"
            except httpx.TransportError as e:
                last = f"{url}: {type(e).__name__}: {e}"
            self._endpoints.failed(server)
            if attempt < self.retries:
                await asyncio.sleep(self.backoff * 2**attempt)
        raise GrpoServiceError(f"{method} {path} failed after {self.retries + 1} attempts: {last}")

    async def ping(self) -> bool:
        return await self._request("GET", "/v1/ping") == "pong"

    async def score(self, completions: Sequence[str], **shape: Any) -> list[dict]:
        return (await self._request("POST", "/v1/score", _score_body(completions, **shape)))["results"]

    async def score_batch(self, groups: Sequence[tuple[Sequence[str], dict]]) -> list[list[dict]]:
        """Scores many groups at once, spread over the servers: `groups` holds
        `(completions, shape)` pairs, `shape` the keyword arguments of `score`."""
        return list(await asyncio.gather(*(self.score(c, **shape) for c, shape in groups)))

    async def run_code(self, code: str, stdin: Optional[str] = None, run_timeout: float = 10,
                       memory_limit_mb: int = 1024) -> dict:
        body = {"code": code, "stdin": stdin, "language": "python", "run_timeout": run_timeout,
                "compile_timeout": run_timeout, "memory_limit_MB": memory_limit_mb, "files": {}, "fetch_files": []}
        return await self._request("POST", "/run_code", body)


_SHAPE_COLUMNS = (("task", "task"), ("ground_truth", "ground_truth"), ("verification_info", "verification_info"),
                  ("answer", "ground_truth"), ("solution", "ground_truth"))


def _groups(n: int, values: Sequence[Any]) -> list[tuple[int, int]]:
    """Runs of consecutive samples with the same task: TRL repeats each prompt's row
    `num_generations` times in a row, so each run is one GRPO group."""
    spans = []
    start = 0
    for i in range(1, n + 1):
        if i == n or json.dumps(values[i], sort_keys=True) != json.dumps(values[start], sort_keys=True):
            spans.append((start, i))
            start = i
    return spans


def trl_reward_function(url: Union[str, Sequence[str]] = DEFAULT_URL, column: Optional[str] = None, credit: Optional[str] = None,
                        client: Optional[AsyncGrpoClient] = None, name: str = "grpo_accuracy"):
    """An async reward function for TRL's `GRPOTrainer(reward_funcs=[...])`.

    The task of each sample comes from a dataset column, passed by TRL as a keyword argument:
    `column` when given, else the first present of `task`, `ground_truth`,
    `verification_info`, `answer`, `solution` (the last two as verl-style math answers).
    Consecutive samples with the same task are scored as one group in one request; groups are
    sent concurrently. Returns one float per completion; raises `GrpoServiceError` when the
    service cannot score them (never a silent 0 or None).
    """
    shared = client or AsyncGrpoClient(url)

    async def reward(prompts: Sequence[Any] = (), completions: Sequence[Any] = (), **kwargs: Any) -> list[float]:
        n = len(completions)
        candidates = [(column, column)] if column else _SHAPE_COLUMNS
        found = [(col, shape) for col, shape in candidates if kwargs.get(col) is not None]
        if not found:
            raise GrpoServiceError(f"no task column among {[c for c, _ in candidates]} in the batch")
        col, shape = found[0]
        if shape not in ("task", "ground_truth", "verification_info"):
            shape = "task"
        values = kwargs[col]
        if len(values) != n:
            raise GrpoServiceError(f"column {col!r} has {len(values)} rows for {n} completions")
        spans = _groups(n, values)
        texts = [_text(c) for c in completions]

        async def one(start: int, end: int) -> list[dict]:
            value = values[start]
            if shape == "verification_info" and isinstance(value, str):
                value = json.loads(value)
            return await shared.score(texts[start:end], **{shape: value}, credit=credit)

        results = await asyncio.gather(*(one(s, e) for s, e in spans))
        rewards = [float(r["reward"]) for group in results for r in group]
        if len(rewards) != n:
            raise GrpoServiceError(f"the service returned {len(rewards)} results for {n} completions")
        return rewards

    reward.__name__ = name
    reward.__qualname__ = name
    return reward


_VERL_CLIENT: Optional[GrpoClient] = None


def compute_score(data_source: Any, solution_str: str, ground_truth: Any, extra_info: Optional[dict] = None,
                  url: Optional[str] = None) -> dict:
    """A verl `custom_reward_function`: `custom_reward_function.path=grpo_client.py`,
    `custom_reward_function.name=compute_score`. The server is `url`, else `$GRPO_URL`, else
    http://127.0.0.1:8080; several servers are given comma-separated. Returns `{"score": reward, "acc": correct, "verdict": kind}`;
    raises `GrpoServiceError` when the service cannot score (never a silent 0).
    """
    global _VERL_CLIENT
    target = url or os.environ.get("GRPO_URL", DEFAULT_URL)
    urls = [u.strip().rstrip("/") for u in target.split(",") if u.strip()]
    if _VERL_CLIENT is None or _VERL_CLIENT.urls != urls:
        _VERL_CLIENT = GrpoClient(urls)
    if isinstance(ground_truth, dict) and "kind" in ground_truth:
        shape = {"task": ground_truth}
    else:
        shape = {"ground_truth": ground_truth}
    result = _VERL_CLIENT.score([solution_str], **shape)[0]
    return {"score": float(result["reward"]), "acc": bool(result["correct"]), "verdict": result["verdict"]["kind"]}


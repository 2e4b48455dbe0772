#!/usr/bin/env python3
"""Abuse benchmark of `grpo serve`: hostile and broken clients, and whether the server holds.

Runs each scenario against one server and prints a Markdown table: requests sent, the status
codes seen, whether every bad request got a 4xx whose JSON names the problem, whether overload
was answered 503/504 within the configured wait, and the server's peak resident memory during
the scenario (when this script started the server). Ends with a well-formed request that must
be served normally. Exits 1 on any failure.

Scenarios: slow headers (slowloris), slow bodies, bodies over the limit (declared and sent),
invalid UTF-8, deeply nested JSON, a wrong type in every field of /v1/score and /run_code,
thousands of idle connections, clients that disconnect mid-request (OpenEnv WebSocket sessions
dropped mid-step among them), sustained overload of /run_code beyond --max-inflight, and OpenEnv
sessions used badly (broken messages, hostile steps, one past --max-sessions, an idle one).
Slow clients and malformed requests include the environment routes: NeMo Gym's /verify and
/seed_session, OpenEnv's stateless /step and /reset and its WebSocket upgrade.

Python 3 standard library only. Either start a server (`--grpo target/debug/grpo`, or $GRPO_BIN,
else target/release/grpo, else target/debug/grpo) with the limits given below, or target a
running one (`--url http://host:port`) started with the same limits:

    python3 benches/service_abuse.py --grpo target/release/grpo           # full, a few minutes
    python3 benches/service_abuse.py --short                               # CI, under 60 s
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import pathlib
import re
import select
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

from environment_requests import nemo_verify
from websocket import Closed, WebSocket

ROOT = pathlib.Path(__file__).resolve().parent.parent

# A well-formed /v1/score request and the rewards it must get.
GOOD_SCORE = {"ground_truth": "1", "completions": ["\\boxed{1}", "2"]}
GOOD_REWARDS = [1.0, 0.0]

RUN_CODE = {"code": "print(1)", "language": "python", "stdin": "", "compile_timeout": 1, "run_timeout": 5,
            "memory_limit_MB": 256, "files": {}, "fetch_files": []}
SCORE = {"ground_truth": "1", "completions": ["1"], "id": "a", "credit": "binary", "format_weight": 0.0}

# (route, base body, field, wrong value, what the detail must name); `task` and
# `verification_info` replace `ground_truth`.
WRONG_TYPES = [
    ("/run_code", RUN_CODE, "code", 5, "code"),
    ("/run_code", RUN_CODE, "code", None, "code"),
    ("/run_code", RUN_CODE, "language", 5, "language"),
    ("/run_code", RUN_CODE, "language", "cobol", "cobol"),
    ("/run_code", RUN_CODE, "stdin", [1], "stdin"),
    ("/run_code", RUN_CODE, "compile_timeout", "ten", "compile_timeout"),
    ("/run_code", RUN_CODE, "run_timeout", "ten", "run_timeout"),
    ("/run_code", RUN_CODE, "run_timeout", -1, "run_timeout"),
    ("/run_code", RUN_CODE, "memory_limit_MB", "lots", "memory_limit_MB"),
    ("/run_code", RUN_CODE, "files", [1], "files"),
    ("/run_code", RUN_CODE, "files", {"a": 1}, "files"),
    ("/run_code", RUN_CODE, "fetch_files", "x", "fetch_files"),
    ("/run_code", RUN_CODE, "fetch_files", [1], "fetch_files"),
    ("/v1/score", SCORE, "completions", "abc", "completions"),
    ("/v1/score", SCORE, "completions", [1], "completions[0]"),
    ("/v1/score", SCORE, "completions", None, "completions"),
    ("/v1/score", SCORE, "id", 5, "id"),
    ("/v1/score", SCORE, "credit", 5, "credit"),
    ("/v1/score", SCORE, "credit", "most", "credit"),
    ("/v1/score", SCORE, "format_weight", "x", "format_weight"),
    ("/v1/score", SCORE, "ground_truth", True, "ground_truth"),
    ("/v1/score", SCORE, "ground_truth", [1], "ground_truth"),
    ("/v1/score", SCORE, "task", 5, "task"),
    ("/v1/score", SCORE, "verification_info", 5, "verification_info"),
    ("/v1/score", SCORE, "unknown_field", 1, "unknown_field"),
]

# Malformed environment-protocol requests: (route, body, status, what the answer must name).
# NeMo Gym's routes answer our error shape; OpenEnv's stateless routes answer FastAPI's 422
# (`{"detail": [{"loc": [...], ...}]}`), as OpenEnv's server does.
VERIFY_MATH = nemo_verify("What is 1 + 1?", "2", "\\boxed{2}")
BAD_ENVIRONMENT_REQUESTS = [
    ("/verify", {k: v for k, v in VERIFY_MATH.items() if k != "response"}, 422, "response"),
    ("/verify", dict(VERIFY_MATH, response=5), 422, "response"),
    ("/verify", {k: v for k, v in VERIFY_MATH.items() if k not in ("question", "expected_answer")}, 422,
     "expected_answer"),
    ("/ng-rollout/r-1/verify", {k: v for k, v in VERIFY_MATH.items() if k != "response"}, 422, "response"),
    ("/close_session", {"episode_id": {"rollout_id": "r", "attempt": 0}}, 422, "resources_session_id"),
    ("/openenv/python/step", {"action": {}}, 422, "code"),
    ("/openenv/python/step", {"action": {"code": 5}}, 422, "code"),
    ("/openenv/python/step", {}, 422, "action"),
    ("/openenv/tasks/step", {"action": {"task_id": "x"}}, 422, "completion"),
]


# --- the server ------------------------------------------------------------------------------


def binary(explicit: str | None) -> str:
    if explicit:
        return explicit
    if os.environ.get("GRPO_BIN"):
        return os.environ["GRPO_BIN"]
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    for profile in ("release", "debug"):
        candidate = target / profile / "grpo"
        if candidate.exists():
            return str(candidate)
    sys.exit("build grpo first (cargo build -p grpo-cli), or pass --grpo BIN or --url URL")


def serve_flags(args: argparse.Namespace) -> list[str]:
    return ["--max-inflight", str(args.max_inflight), "--max-queue", str(args.max_queue),
            "--queue-wait-ms", str(args.queue_wait_ms), "--max-body-bytes", str(args.max_body_bytes),
            "--header-read-timeout-ms", str(args.header_timeout_ms),
            "--body-read-timeout-ms", str(args.body_timeout_ms),
            "--max-connections", str(args.max_connections), "--workers", str(args.workers),
            "--max-sessions", str(args.max_sessions), "--session-idle-ttl-s", str(args.session_idle_ttl_s),
            "--pack", "builtin:arith"]


def start(bin_path: str, flags: list[str], log) -> tuple[subprocess.Popen, str, int]:
    process = subprocess.Popen([bin_path, "serve", "--addr", "127.0.0.1:0", *flags], stdout=subprocess.PIPE,
                               stderr=log, text=True)
    line = process.stdout.readline()
    if not line:
        sys.exit("grpo serve did not start")
    host, port = json.loads(line)["listening"].rsplit(":", 1)
    return process, host, int(port)


class Memory:
    """Samples VmRSS of a process every 100 ms; `peak()` since the last `reset()`, `hwm()`."""

    def __init__(self, pid: int | None):
        self.pid, self.max_rss, self.stop = pid, 0, threading.Event()
        if pid is not None:
            threading.Thread(target=self.run, daemon=True).start()

    def status(self) -> dict[str, int]:
        try:
            with open(f"/proc/{self.pid}/status") as f:
                return {k: int(v.split()[0]) for k, v in (l.split(":", 1) for l in f) if k in ("VmRSS", "VmHWM")}
        except (OSError, ValueError):
            return {}

    def run(self) -> None:
        while not self.stop.is_set():
            self.max_rss = max(self.max_rss, self.status().get("VmRSS", 0))
            time.sleep(0.1)

    def reset(self) -> None:
        self.max_rss = self.status().get("VmRSS", 0) if self.pid else 0

    def peak(self) -> str:
        return f"{self.max_rss / 1024:.0f}" if self.pid else "n/a"

    def hwm(self) -> str:
        return f"{self.status().get('VmHWM', 0) / 1024:.0f}" if self.pid else "n/a"


# --- a raw HTTP/1.1 client -------------------------------------------------------------------


class Reply:
    """What came back on one connection: a response, or `closed` (no response at all)."""

    def __init__(self, raw: bytes, elapsed: float):
        self.elapsed, self.status, self.body = elapsed, None, b""
        split = raw.find(b"\r\n\r\n")
        if split >= 0:
            head = raw[:split].decode("latin-1")
            self.status = int(head.split(" ", 2)[1])
            self.body = raw[split + 4:]

    @property
    def label(self) -> str:
        return str(self.status) if self.status is not None else "closed"

    def json(self) -> dict:
        try:
            value = json.loads(self.body)
            return value if isinstance(value, dict) else {}
        except ValueError:
            return {}

    def error(self, status: int, code: str, names: str = "") -> bool:
        """Whether this is `status` with `{"detail", "code": code}` and a detail containing `names`."""
        v = self.json()
        return self.status == status and v.get("code") == code and names in str(v.get("detail", ""))


async def read_reply(reader: asyncio.StreamReader, started: float) -> Reply:
    """Reads one response (its `Content-Length` of body), or up to close; resets end the read."""
    raw = b""
    try:
        while True:
            split = raw.find(b"\r\n\r\n")
            if split >= 0:
                m = re.search(rb"(?im)^content-length:\s*(\d+)", raw[:split])
                if m and len(raw) >= split + 4 + int(m.group(1)):
                    break
            chunk = await reader.read(65536)
            if not chunk:
                break
            raw += chunk
    except (ConnectionError, OSError):
        pass
    return Reply(raw, time.monotonic() - started)


async def connect(host: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection(host, port, limit=1 << 20)


def close(writer: asyncio.StreamWriter, reset: bool = False) -> None:
    if reset:  # an abortive close: the peer sees a reset, not an end of file
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.close()


async def send(host: str, port: int, head: bytes, body: bytes = b"", timeout: float = 120) -> Reply:
    """Sends `head` and `body` on a fresh connection and reads the reply. The body goes in 64 KiB
    pieces and stops as soon as a reply is in: a server may answer from the headers and close,
    and writing on after that would reset the connection under the reply."""
    started = time.monotonic()
    reader, writer = await connect(host, port)
    reading = asyncio.ensure_future(read_reply(reader, started))
    try:
        writer.write(head)
        for i in range(0, len(body), 65536):
            if reading.done():
                break
            writer.write(body[i:i + 65536])
            await writer.drain()
            await asyncio.sleep(0)
        await writer.drain()
    except (ConnectionError, OSError):
        pass
    try:
        return await asyncio.wait_for(reading, timeout)
    finally:
        close(writer)


def send_blocking(host: str, port: int, head: bytes, body: bytes, timeout: float = 60) -> Reply:
    """`send` for bodies the server refuses from the headers, with a blocking socket: the body
    goes only while no reply is readable, and the reply is read straight from the kernel, which
    keeps it even when the server's close resets the connection after it."""
    started = time.monotonic()
    raw = b""
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(head)
        sent = 0
        while sent < len(body):
            readable, writable, _ = select.select([s], [s], [], timeout)
            if readable or not writable:
                break
            try:
                sent += s.send(body[sent:sent + 65536])
            except OSError:
                break
        while True:
            try:
                chunk = s.recv(65536)
            except OSError:
                break
            if not chunk:
                break
            raw += chunk
            split = raw.find(b"\r\n\r\n")
            m = re.search(rb"(?im)^content-length:\s*(\d+)", raw[:split]) if split >= 0 else None
            if m and len(raw) >= split + 4 + int(m.group(1)):
                break
    return Reply(raw, time.monotonic() - started)


async def exchange(host: str, port: int, method: str, path: str, body: bytes = b"",
                   content_length: int | None = None, timeout: float = 120) -> Reply:
    """One request on a fresh connection (`Connection: close`), `content_length` declared
    (default: the body's length)."""
    length = len(body) if content_length is None else content_length
    head = (f"{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {length}\r\nConnection: close\r\n\r\n").encode()
    return await send(host, port, head, body, timeout)


async def post(host: str, port: int, path: str, value) -> Reply:
    return await exchange(host, port, "POST", path, json.dumps(value).encode())


# --- scenarios -------------------------------------------------------------------------------


class Row:
    def __init__(self, name: str):
        self.name, self.requests, self.statuses = name, 0, collections.Counter()
        self.bad_ok: bool | None = None
        self.overload_ok: bool | None = None
        self.rss, self.note, self.failures = "n/a", "", []

    def record(self, reply: Reply) -> None:
        self.requests += 1
        self.statuses[reply.label] += 1

    def check(self, ok: bool, what: str, field: str | None = "bad_ok") -> None:
        """Records a check; `field` is the table column it counts in (None: only the result)."""
        if field is not None:
            setattr(self, field, (getattr(self, field) is not False) and ok)
        if not ok:
            self.failures.append(what)


async def trickle(h, p, head: bytes, piece, limit: float) -> Reply:
    """Sends `head`, then `piece(i)` every 200 ms until the server answers or closes (or long
    after `limit` seconds); returns the reply."""
    started = time.monotonic()
    reader, writer = await connect(h, p)
    reading = asyncio.ensure_future(read_reply(reader, started))
    try:
        writer.write(head)
        for i in range(int(limit * 10) + 100):
            if reading.done():
                break
            writer.write(piece(i))
            await writer.drain()
            await asyncio.sleep(0.2)
    except (ConnectionError, OSError):
        pass
    reply = await asyncio.wait_for(reading, limit + 60)
    close(writer)
    return reply


async def slow_headers(h, p, args, row: Row) -> None:
    """Clients that send a header line every 200 ms and never finish: each must be cut off."""
    limit = args.header_timeout_ms / 1000

    def one(head: bytes) -> Reply:
        return trickle(h, p, head, lambda i: f"X-Slow-{i}: 1\r\n".encode(), limit)

    # A plain POST, and a WebSocket upgrade to an OpenEnv session that never finishes its head.
    heads = [b"POST /v1/score HTTP/1.1\r\nHost: x\r\n",
             b"GET /openenv/python/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             b"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"]
    replies = await asyncio.gather(*(one(heads[i % 2]) for i in range(args.slow_clients)))
    for r in replies:
        row.record(r)
        row.check(r.status in (None, 408), f"slow headers answered {r.label}")
    worst = max(r.elapsed for r in replies)
    row.note = f"cut off after ≤ {worst:.1f} s (timeout {limit:g} s)"


async def slow_bodies(h, p, args, row: Row) -> None:
    """Clients that send headers, then one body byte every 200 ms: each must get a 408."""
    limit = args.body_timeout_ms / 1000

    def one(path: str) -> Reply:
        head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n".encode()
        return trickle(h, p, head, lambda _: b" ", limit)

    paths = ["/v1/score", "/run_code", "/verify", "/seed_session", "/openenv/python/step",
             "/openenv/tasks/reset"] * max(1, args.slow_clients // 6)
    replies = await asyncio.gather(*(one(path) for path in paths))
    for r in replies:
        row.record(r)
        row.check(r.error(408, "body_timeout", "ms"), f"slow body answered {r.label} {r.body[:80]!r}")
    worst = max(r.elapsed for r in replies)
    row.note = f"408 after ≤ {worst:.1f} s (timeout {limit:g} s)"


async def over_limit(h, p, args, row: Row) -> None:
    """Bodies over --max-body-bytes: declared only (no bytes sent), or sent in full."""
    limit = args.max_body_bytes
    slowest = 0.0
    for path in ("/v1/score", "/run_code"):
        for declared in (limit + 1, 10 * limit, 1 << 40):
            # Only the headers: the 413 must come from them, not after a body that never comes.
            r = await exchange(h, p, "POST", path, b"", content_length=declared, timeout=60)
            row.record(r)
            slowest = max(slowest, r.elapsed)
            row.check(r.error(413, "body_too_large", "--max-body-bytes"), f"{path} declared {declared}: {r.label}")
        head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {limit + 1}\r\n\r\n".encode()
        r = await asyncio.to_thread(send_blocking, h, p, head, b"x" * (limit + 1))
        row.record(r)
        row.check(r.error(413, "body_too_large"), f"{path} sent {limit + 1} bytes: {r.label}")
        # Chunked, with no length declared: refused once the bytes pass the limit.
        body = b"".join(b"%x\r\n%s\r\n" % (65536, b"y" * 65536) for _ in range(limit // 65536 + 2)) + b"0\r\n\r\n"
        head = f"POST {path} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
        r = await asyncio.to_thread(send_blocking, h, p, head, body)
        row.record(r)
        row.check(r.error(413, "body_too_large"), f"{path} chunked past the limit: {r.label}")
    row.note = f"header-only 413s in ≤ {slowest * 1000:.0f} ms"


async def invalid_utf8(h, p, args, row: Row) -> None:
    bad = [b"\xc3\x28", b"\xed\xa0\x80", b"\x80", b"\\ud800", b"\xff\xfe"]
    bodies = {"/v1/score": [b'{"ground_truth": "1", "completions": ["' + x + b'"]}' for x in bad],
              "/run_code": [b'{"code": "print(\'' + x + b'\')"}' for x in bad]}
    for path, cases in bodies.items():
        for body in cases + [b"\xff\xfe{}", b"\x00" * 64]:
            r = await exchange(h, p, "POST", path, body)
            row.record(r)
            row.check(r.error(400, "malformed_json", "line 1"), f"{path} {body[:40]!r}: {r.label} {r.body[:80]!r}")


async def nested_json(h, p, args, row: Row) -> None:
    """100k levels of nesting: the parser's recursion limit (or a type error at the first level
    that cannot nest) answers, never the stack."""
    depth = 100_000
    nested = b"[" * depth + b"1" + b"]" * depth
    bodies = {
        "/v1/score": [b"[" * depth, b'{"completions": [], "task": ' + nested + b"}",
                      b'{"completions": [], "ground_truth": ' + b'{"x":' * depth + b"1" + b"}" * depth + b"}",
                      b'{"completions": ' + nested + b', "ground_truth": "1"}'],
        "/run_code": [b"[" * depth, b"{" * depth, b'{"code": "print(1)", "files": {"a": ' + nested + b"}}",
                      b'{"code": ' + nested + b"}"],
    }
    for path, cases in bodies.items():
        for body in cases:
            r = await exchange(h, p, "POST", path, body)
            row.record(r)
            ok = r.status in (400, 422) and r.json().get("code") in ("malformed_json", "invalid_request") \
                and "line 1" in str(r.json().get("detail", ""))
            row.check(ok, f"{path} nested {body[:24]!r}: {r.label} {r.body[:100]!r}")
    row.note = f"depth {depth:,}"


async def wrong_types(h, p, args, row: Row) -> None:
    for path, base, field, wrong, names in WRONG_TYPES:
        body = dict(base)
        if field in ("task", "verification_info"):
            body.pop("ground_truth", None)
        body[field] = wrong
        r = await post(h, p, path, body)
        row.record(r)
        ok = r.status == 422 and r.json().get("code") in ("invalid_request", "unsupported_language") \
            and names in str(r.json().get("detail", ""))
        row.check(ok, f"{path} {field}={wrong!r}: {r.label} {r.body[:100]!r}")
    for path, body, status, names in BAD_ENVIRONMENT_REQUESTS:
        r = await post(h, p, path, body)
        row.record(r)
        row.check(r.status == status and names in r.body.decode(errors="replace"),
                  f"{path} malformed (no {names}): {r.label} {r.body[:160]!r}")
    row.note = f"{len(WRONG_TYPES)} fields × wrong values; {len(BAD_ENVIRONMENT_REQUESTS)} malformed environment requests"


async def idle_connections(h, p, args, row: Row) -> None:
    """Thousands of connections that send nothing: the server must close them all (after its
    header timeout, past the connection cap as slots free up), and still serve a real client."""
    n = args.idle

    async def open_one():
        try:
            return await asyncio.wait_for(connect(h, p), 30)
        except (OSError, asyncio.TimeoutError):
            return None

    pairs = [c for c in await asyncio.gather(*(open_one() for _ in range(n))) if c is not None]
    opened = len(pairs)
    readers = [r for r, _ in pairs]
    writers = [w for _, w in pairs]
    started = time.monotonic()
    # A real request while the idle ones hold the cap.
    good = asyncio.ensure_future(post(h, p, "/v1/score", GOOD_SCORE))

    async def closed_by_server(reader) -> bool:
        try:
            return await reader.read(1) == b""
        except (ConnectionError, OSError):
            return True

    rounds = n / args.max_connections + 2
    budget = rounds * args.header_timeout_ms / 1000 + 10

    async def wait_closed(reader, wait: float) -> bool:
        try:
            return await asyncio.wait_for(closed_by_server(reader), wait)
        except asyncio.TimeoutError:
            return False

    closed = await asyncio.gather(*(wait_closed(r, budget) for r in readers))
    closed_in = time.monotonic() - started
    # A handshake past the listen backlog is dropped by the kernel while the client believes
    # it connected: the server never saw it, so nothing can close it until the client sends.
    ghosts = [i for i, c in enumerate(closed) if not c]
    for i in ghosts:
        try:
            writers[i].write(b"G")
        except (ConnectionError, OSError):
            pass
    late = await asyncio.gather(*(wait_closed(readers[i], budget) for i in ghosts))
    for w in writers:
        close(w)
    row.requests = opened
    row.statuses["closed idle"] = sum(closed)
    if ghosts:
        row.statuses["closed after 1 byte"] = sum(late)
    row.statuses["never closed"] = len(ghosts) - sum(late)
    row.check(opened > 0 and len(ghosts) == sum(late), f"{len(ghosts) - sum(late)} idle connections never closed",
              field=None)
    r = await good
    row.record(r)
    row.check(r.status == 200, f"request during the idle flood: {r.label}", field=None)
    row.note = (f"{sum(closed)} of {opened} closed by the header timeout within {closed_in:.1f} s"
                + (f" ({len(ghosts)} dropped by the kernel's listen backlog, closed once they sent a byte)"
                   if ghosts else "")
                + f"; a real request during the flood answered {r.label} in {r.elapsed:.1f} s")


async def disconnects(h, p, args, row: Row) -> None:
    """Clients that go away mid-request: after the head, mid-body, or while their program runs."""
    n = args.disconnects
    for i in range(n):
        reader, writer = await connect(h, p)
        try:
            if i % 3 == 0:
                writer.write(b"POST /v1/score HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
            elif i % 3 == 1:
                writer.write(b'POST /run_code HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"code": "pri')
            elif i % 6 == 5:
                # An OpenEnv session dropped while its step runs.
                ws = await asyncio.to_thread(WebSocket, h, p, "/openenv/python/ws")
                await asyncio.to_thread(ws.call, {"type": "reset", "data": {}})
                await asyncio.to_thread(ws.send_text, json.dumps(
                    {"type": "step", "data": {"code": "import time\ntime.sleep(0.3)\nprint(1)"}}))
                ws.drop()
            else:
                body = json.dumps(dict(RUN_CODE, code="import time\ntime.sleep(0.3)\nprint(1)")).encode()
                head = f"POST /run_code HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n"
                writer.write(head.encode() + body)
            await writer.drain()
        except (ConnectionError, OSError):
            pass
        await asyncio.sleep(0.01)
        close(writer, reset=i % 2 == 0)
        row.requests += 1
    row.statuses["gone"] = n
    # Every connection and admission slot comes back (the /metrics request itself is open).
    deadline = time.monotonic() + 60
    while True:
        r = await exchange(h, p, "GET", "/metrics")
        text = r.body.decode(errors="replace")
        conns = re.search(r"^grpo_http_open_connections (\d+)", text, re.M)
        inflight = re.search(r"^grpo_http_inflight_requests (\d+)", text, re.M)
        sessions = re.search(r"^grpo_sessions_open (\d+)", text, re.M)
        if conns and inflight and sessions and int(conns.group(1)) <= 1 and int(inflight.group(1)) == 0 \
                and int(sessions.group(1)) == 0:
            break
        if time.monotonic() > deadline:
            row.check(False, f"after disconnects: {conns and conns.group(0)}, {inflight and inflight.group(0)}, "
                      f"{sessions and sessions.group(0)}", field=None)
            break
        await asyncio.sleep(0.2)
    row.note = "connections, in-flight slots and sessions (OpenEnv ones dropped mid-step) all released"


async def overload(h, p, args, row: Row) -> None:
    """Many clients sending /run_code programs of 0.5 s back to back, far past --max-inflight:
    each is served (200) or answered 503/504 within the configured wait."""
    run_timeout = 1
    wait = max(args.queue_wait_ms / 1000, run_timeout)
    slack = max(1.0, wait / 2)
    body = dict(RUN_CODE, code="import time\ntime.sleep(0.5)\nprint('ok')", run_timeout=run_timeout)
    stop = time.monotonic() + args.overload_seconds
    latencies = collections.defaultdict(list)

    async def client() -> None:
        while time.monotonic() < stop:
            r = await post(h, p, "/run_code", body)
            row.record(r)
            latencies[r.status].append(r.elapsed)
            if r.status == 200:
                row.check(r.json().get("run_result", {}).get("stdout") == "ok\n", f"served wrong: {r.body[:80]!r}",
                          "overload_ok")
            elif r.status in (503, 504):
                row.check(r.json().get("code") in ("overloaded", "sandbox_error") and r.elapsed <= wait + slack,
                          f"{r.status} after {r.elapsed:.2f} s (wait {wait:g} s)", "overload_ok")
                await asyncio.sleep(0.02)  # a refused client comes back at once, but not in a spin
            else:
                row.check(False, f"overload answered {r.label}", "overload_ok")

    await asyncio.gather(*(client() for _ in range(args.overload_clients)))
    refused = latencies.get(504, []) + latencies.get(503, [])
    row.note = (f"{args.overload_clients} clients × {args.overload_seconds:g} s, max-inflight {args.max_inflight}: "
                f"{len(latencies.get(200, [])) / args.overload_seconds:.1f} served/s; refusals within "
                f"{max(refused, default=0):.2f} s (wait {wait:g} s)")
    if not refused:
        row.check(False, "no request was refused: the load did not exceed --max-inflight", "overload_ok")


async def environment_sessions(h, p, args, row: Row) -> None:
    """OpenEnv sessions over WebSocket used badly: broken messages (not JSON, an unknown type, a
    step before any reset, a step missing its field) each get an error frame and the session
    goes on; hostile steps (8 GiB, an endless loop, an endless print) come back within the
    limits with a non-zero exit code; one session past --max-sessions is refused with
    CAPACITY_REACHED; a session silent past --session-idle-ttl-s is closed by the server."""

    def scenario() -> list[tuple[bool, str]]:
        results = []
        ws = WebSocket(h, p, "/openenv/python/ws")
        for message, code in ((b"{not json", "INVALID_JSON"), ({"type": "render"}, "UNKNOWN_TYPE"),
                              ({"type": "step", "data": {"code": "1"}}, None),
                              ({"type": "reset", "data": {}}, "ok"), ({"type": "step", "data": {}}, "VALIDATION_ERROR")):
            ws.send_text(message.decode() if isinstance(message, bytes) else json.dumps(message))
            frame = json.loads(ws.recv_text())
            row.requests += 1
            if code == "ok":
                results.append((frame.get("type") == "observation", f"reset after bad messages: {frame}"))
            elif code is None:
                results.append((frame.get("type") == "error", f"step before reset: {frame}"))
            else:
                results.append((frame.get("type") == "error" and frame["data"].get("code") == code,
                                f"{message!r}: wanted {code}, got {frame}"))
        ws.call({"type": "step", "data": {"code": "x = 41"}})
        for code in ("b = bytearray(8 << 30)", "while True: pass", "while True: print('y' * 65536)"):
            started = time.monotonic()
            frame = ws.call({"type": "step", "data": {"code": code}})
            row.requests += 1
            obs = frame.get("data", {}).get("observation", {})
            results.append((frame.get("type") == "observation" and obs.get("exit_code") != 0
                            and time.monotonic() - started < 60, f"hostile {code!r}: {str(frame)[:200]}"))
        frame = ws.call({"type": "step", "data": {"code": "print('alive')"}})
        row.requests += 1
        results.append((frame.get("data", {}).get("observation", {}).get("stdout") == "alive\n",
                        f"the session goes on after the hostile steps: {str(frame)[:200]}"))
        # The cap: this session plus --max-sessions more; the last is refused.
        others = []
        refused = None
        for _ in range(args.max_sessions):
            other = WebSocket(h, p, "/openenv/python/ws")
            others.append(other)
            frame = other.call({"type": "reset", "data": {}})
            row.requests += 1
            if frame.get("type") == "error":
                refused = frame
                break
        results.append((refused is not None and refused["data"].get("code") == "CAPACITY_REACHED",
                        f"session past --max-sessions {args.max_sessions}: {refused}"))
        for other in others:
            other.close()
        ws.close()
        # Idle: a session that says nothing is closed by the server.
        # The sessions just closed free their places as the server reads the closes: retry.
        for _ in range(50):
            idle = WebSocket(h, p, "/openenv/python/ws")
            opened = idle.call({"type": "reset", "data": {}})
            if opened.get("type") == "observation":
                break
            idle.drop()
            time.sleep(0.2)
        results.append((opened.get("type") == "observation", f"a session once the others closed: {opened}"))
        idle.sock.settimeout(args.session_idle_ttl_s + 30)
        started = time.monotonic()
        try:
            idle.recv_text()
            closed = False
        except (Closed, OSError):
            closed = True
        waited = time.monotonic() - started
        results.append((closed and args.session_idle_ttl_s - 0.5 <= waited < args.session_idle_ttl_s + 10,
                        f"idle session closed after {waited:.1f} s (ttl {args.session_idle_ttl_s} s)"))
        idle.drop()
        row.note = (f"error frames for 4 broken messages; 3 hostile steps contained; CAPACITY_REACHED past "
                    f"{args.max_sessions} sessions; an idle session closed after {waited:.1f} s")
        return results

    for ok, what in await asyncio.to_thread(scenario):
        row.check(ok, what)


async def after_abuse(h, p, args, row: Row) -> None:
    r = await post(h, p, "/v1/score", GOOD_SCORE)
    row.record(r)
    rewards = [x.get("reward") for x in r.json().get("results", [])]
    row.check(r.status == 200 and rewards == GOOD_REWARDS, f"/v1/score after the abuse: {r.label} {rewards}",
              field=None)
    r = await post(h, p, "/run_code", dict(RUN_CODE, code="print(6 * 7)"))
    row.record(r)
    row.check(r.status == 200 and r.json().get("run_result", {}).get("stdout") == "42\n",
              f"/run_code after the abuse: {r.label}", field=None)
    row.note = "well-formed /v1/score and /run_code served"


SCENARIOS = [
    ("slow headers", slow_headers), ("slow bodies", slow_bodies), ("over-limit bodies", over_limit),
    ("invalid UTF-8", invalid_utf8), ("nested JSON", nested_json), ("wrong types", wrong_types),
    ("idle connections", idle_connections), ("disconnects mid-request", disconnects),
    ("overload /run_code", overload), ("OpenEnv sessions", environment_sessions), ("after the abuse", after_abuse),
]


def table(rows: list[Row], hwm: str) -> str:
    def mark(v: bool | None) -> str:
        return "n/a" if v is None else ("yes" if v else "**NO**")

    lines = ["| scenario | requests | statuses seen | bad requests got a 4xx naming it | overload 503/504 "
             "within the wait | peak RSS MiB | result | notes |", "|---|---:|---|---|---|---:|---|---|"]
    for r in rows:
        statuses = ", ".join(f"{k} ×{v}" for k, v in sorted(r.statuses.items()))
        lines.append(f"| {r.name} | {r.requests} | {statuses} | {mark(r.bad_ok)} | {mark(r.overload_ok)} | "
                     f"{r.rss} | {'**FAIL**' if r.failures else 'pass'} | {r.note} |")
    lines.append(f"\nserver VmHWM (peak resident memory over the whole run): {hwm} MiB")
    return "\n".join(lines)


async def run(host: str, port: int, args: argparse.Namespace, memory: Memory) -> list[Row]:
    rows = []
    only = set(args.only.split(",")) if args.only else None
    for name, scenario in SCENARIOS:
        if only and name not in only and name != "after the abuse":
            continue
        row = Row(name)
        memory.reset()
        started = time.monotonic()
        try:
            await scenario(host, port, args, row)
        except Exception as e:  # a scenario that breaks is a failure of the run, not a crash
            row.failures.append(f"{type(e).__name__}: {e}")
        row.rss = memory.peak()
        print(f"{name}: {time.monotonic() - started:.1f} s, {row.requests} requests"
              + (f", FAILED: {row.failures[:3]}" if row.failures else ""), file=sys.stderr, flush=True)
        rows.append(row)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--url", help="a running server (started with the limits below)")
    target.add_argument("--grpo", help="the grpo binary to start (default: $GRPO_BIN, target/release, target/debug)")
    parser.add_argument("--short", action="store_true", help="fewer clients and shorter runs (CI: under 60 s)")
    parser.add_argument("--only", help="comma-separated scenario names")
    limits = parser.add_argument_group("server limits (passed to the server this script starts)")
    limits.add_argument("--max-inflight", type=int, default=2)
    limits.add_argument("--max-queue", type=int, default=16)
    limits.add_argument("--queue-wait-ms", type=int, default=1000)
    limits.add_argument("--max-body-bytes", type=int, default=1 << 20)
    limits.add_argument("--header-timeout-ms", type=int, default=2000)
    limits.add_argument("--body-timeout-ms", type=int, default=2000)
    limits.add_argument("--max-connections", type=int, default=512)
    limits.add_argument("--workers", type=int, default=2)
    limits.add_argument("--max-sessions", type=int, default=3)
    limits.add_argument("--session-idle-ttl-s", type=int, default=3)
    load = parser.add_argument_group("load (defaults: full mode; --short lowers them)")
    load.add_argument("--slow-clients", type=int)
    load.add_argument("--idle", type=int, help="idle connections opened at once")
    load.add_argument("--disconnects", type=int)
    load.add_argument("--overload-clients", type=int)
    load.add_argument("--overload-seconds", type=float)
    args = parser.parse_args()
    defaults = dict(slow_clients=(20, 200), idle=(1000, 5000), disconnects=(60, 600), overload_clients=(16, 64),
                    overload_seconds=(4.0, 30.0))
    for key, (short, full) in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, short if args.short else full)

    process, log = None, tempfile.TemporaryFile(mode="w+")
    if args.url:
        url = urllib.parse.urlsplit(args.url)
        host, port = url.hostname or "127.0.0.1", url.port or 80
    else:
        process, host, port = start(binary(args.grpo), serve_flags(args), log)
    memory = Memory(process.pid if process else None)
    started = time.monotonic()
    try:
        rows = asyncio.run(run(host, port, args, memory))
        if process is not None and process.poll() is not None:
            rows[-1].failures.append(f"the server exited with {process.returncode}")
        print(table(rows, memory.hwm()))
    finally:
        memory.stop.set()
        if process is not None:
            process.terminate()
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
    failures = [f"{r.name}: {f}" for r in rows for f in r.failures]
    print(f"\n{len(rows)} scenarios in {time.monotonic() - started:.0f} s; "
          f"server flags: {' '.join(serve_flags(args)) if not args.url else args.url}")
    if failures:
        print(f"{len(failures)} failures:", *failures[:40], sep="\n  ")
        log.seek(0)
        tail = log.read()[-4000:]
        if tail:
            print("server log (tail):", tail, sep="\n")
        return 1
    print("every check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

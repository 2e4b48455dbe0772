"""A WebSocket client in the Python standard library, enough for the service scripts to drive
`grpo serve`'s OpenEnv sessions (`WS /openenv/<env>/ws`): the handshake, masked text frames
out, text and close frames in (RFC 6455; no extensions, no fragmentation on send)."""

from __future__ import annotations

import base64
import json
import os
import socket
import struct


class Closed(Exception):
    """The server closed the WebSocket (or the connection)."""


class WebSocket:
    """One WebSocket connection to `host:port` at `path`."""

    def __init__(self, host: str, port: int, path: str, timeout: float = 120.0, token: str | None = None):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        auth = f"Authorization: Bearer {token}\r\n" if token else ""
        self.sock.sendall((f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                           f"Sec-WebSocket-Version: 13\r\n{auth}\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise Closed("connection closed during the handshake")
            head += chunk
        head, self.buffer = head.split(b"\r\n\r\n", 1)
        status = head.split(b"\r\n", 1)[0]
        if b" 101 " not in status + b" ":
            self.sock.close()
            raise Closed(f"handshake refused: {status.decode(errors='replace')}")

    def _read(self, n: int) -> bytes:
        while len(self.buffer) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise Closed("connection closed")
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def send_text(self, text: str) -> None:
        payload = text.encode()
        n = len(payload)
        if n < 126:
            header = struct.pack("!BB", 0x81, 0x80 | n)
        elif n < 1 << 16:
            header = struct.pack("!BBH", 0x81, 0x80 | 126, n)
        else:
            header = struct.pack("!BBQ", 0x81, 0x80 | 127, n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(header + mask + masked)

    def recv_text(self) -> str:
        """The next text (or binary) message; answers pings; raises Closed on a close frame."""
        message = b""
        while True:
            first, second = self._read(2)
            opcode, fin = first & 0x0F, first & 0x80
            n = second & 0x7F
            if n == 126:
                n = struct.unpack("!H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._read(8))[0]
            payload = self._read(n)
            if opcode == 0x8:
                raise Closed("close frame")
            if opcode == 0x9:
                self._control(0xA, payload)
                continue
            if opcode == 0xA:
                continue
            message += payload
            if fin:
                return message.decode()

    def _control(self, opcode: int, payload: bytes) -> None:
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(struct.pack("!BB", 0x80 | opcode, 0x80 | len(payload)) + mask + masked)

    def call(self, message: dict) -> dict:
        """Sends one OpenEnv message and returns the frame that answers it."""
        self.send_text(json.dumps(message))
        return json.loads(self.recv_text())

    def close(self) -> None:
        """A clean close: OpenEnv's `close` message, a close frame, then the socket."""
        try:
            self.send_text(json.dumps({"type": "close"}))
            self._control(0x8, struct.pack("!H", 1000))
        except OSError:
            pass
        self.sock.close()

    def drop(self) -> None:
        """Drops the connection without a word, as a crashed client does."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()

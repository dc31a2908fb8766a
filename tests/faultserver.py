"""A misbehaving web server on 127.0.0.1, for the reliability tests.

Each route is a function ``(conn, request) -> None`` that writes whatever
bytes it likes to the raw socket: a valid answer, half of one, a lie about
its length, a decompression bomb, or nothing at all for a while.
``server.hits`` counts requests per path, so a test can see what the crawler
asked for, and how often.
"""

import gzip
import socket
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

import brotli
from backports import zstd


@dataclass
class Request:
    method: str
    path: str  # path and query as sent
    headers: dict[str, str]


Route = Callable[[socket.socket, Request], None]


def answer(status: int = 200, body: bytes = b"", headers: dict[str, str] | None = None, *,
           length: int | None = None, reason: str = "OK") -> Route:
    """A route that sends one answer; ``length`` overrides Content-Length (to lie)."""
    def route(conn: socket.socket, request: Request) -> None:
        head = {"Content-Type": "text/html; charset=utf-8", **(headers or {})}
        head["Content-Length"] = str(len(body) if length is None else length)
        send(conn, status, head, body, reason=reason)
    return route


def send(conn: socket.socket, status: int, headers: dict[str, str], body: bytes, *, reason: str = "OK") -> None:
    lines = [f"HTTP/1.1 {status} {reason}", *(f"{k}: {v}" for k, v in headers.items()), "Connection: close", "", ""]
    conn.sendall("\r\n".join(lines).encode("latin-1") + body)


def sequence(*routes: Route) -> Route:
    """The first request gets the first route, the next the second...; the last repeats."""
    calls = Counter[int]()
    lock = threading.Lock()

    def route(conn: socket.socket, request: Request) -> None:
        with lock:
            n = calls[0]
            calls[0] += 1
        routes[min(n, len(routes) - 1)](conn, request)
    return route


def stall(seconds: float, body_first: bytes = b"") -> Route:
    """Headers (and ``body_first``), then silence for ``seconds``: a slow or hung server."""
    def route(conn: socket.socket, request: Request) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n" + body_first)
        time.sleep(seconds)
    return route


def drop_after(body: bytes, sent: int) -> Route:
    """Promise the whole body, send ``sent`` bytes of it, close the connection."""
    def route(conn: socket.socket, request: Request) -> None:
        conn.sendall(
            f"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {len(body)}\r\n\r\n".encode()
            + body[:sent]
        )
    return route


def compressed(body: bytes, encoding: str, *, truncate: int | None = None) -> Route:
    """``body`` compressed with gzip, deflate, br or zstd, optionally cut short."""
    data = {"gzip": gzip.compress, "deflate": zlib.compress, "br": brotli.compress, "zstd": zstd.compress}[encoding](body)
    if truncate is not None:
        data = data[:truncate]
    return answer(200, data, {"Content-Encoding": encoding})


def bomb(encoding: str, size: int) -> Route:
    """``size`` zero bytes, compressed: a few hundred kilobytes on the wire."""
    return compressed(b"\0" * size, encoding)


class FaultServer:
    """``with FaultServer(routes) as server:``; ``server.base`` is ``http://127.0.0.1:PORT``."""

    def __init__(self, routes: dict[str, Route]):
        self.routes = routes
        self.hits = Counter[str]()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.base = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.stopping = False
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> "FaultServer":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping = True
        self.sock.close()

    def _serve(self) -> None:
        while not self.stopping:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            try:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
                method, target, _ = head[0].split(" ", 2)
                headers = dict(line.split(": ", 1) for line in head[1:] if ": " in line)
                path = urlsplit(target).path + (f"?{urlsplit(target).query}" if urlsplit(target).query else "")
                self.hits[path] += 1
                route = self.routes.get(path) or self.routes.get(urlsplit(target).path) or answer(404, b"not found")
                route(conn, Request(method, path, headers))
            except OSError:
                pass  # the crawler hung up: that is its right

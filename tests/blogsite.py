"""Blogs served from memory: a real HTTP server on 127.0.0.1 answering from a route table.

    routes = {"/": html_page("<h1>Home</h1>"), "/p/1": html_page(...), "/old": redirect("/p/1")}
    with RouteServer(routes) as server:
        urlopen(server.base + "/p/1")          # server.base == "http://127.0.0.1:PORT"
        assert "/old" not in server.paths()    # every request is recorded

How a request finds its route
-----------------------------
A route key is a request target: a path, optionally with a query string
(``"/p/370"``, ``"/?page=2"``, ``"/2024/07/30/内存/"``).  Keys and requests are both
reduced to ``(path, query)``:

* the **path is percent-decoded, then read as UTF-8**, so a crawler that sends the
  raw UTF-8 bytes ``/2024/07/30/内存/`` and one that sends
  ``/2024/07/30/%E5%86%85%E5%AD%98/`` reach the same route (mixed forms too).
  Paths are otherwise exact: case-sensitive, and ``/p/370/`` is not ``/p/370``.
* the **query string is kept exactly as sent** (no decoding, no reordering); a
  fragment never reaches a server, and one in a key is dropped.
* an absolute-form target (``GET http://host/path``) is reduced to its path.

(``http.server`` alone answers 400 to some raw UTF-8 targets, since it splits the request
line as latin-1 text and ``\x85`` is whitespace there; the handler escapes raw bytes first.)

Lookup: the exact ``(path, query)`` first; then ``(path, "")``, so a route without a
query also answers that path with any query string (``/post/a/?utm_source=x`` is
``/post/a/``), as real servers ignore parameters they do not know.  Anything else
is a 404 (the ``not_found`` page if given).

A route's value is a :class:`Page` or a callable ``(path, query) -> Page | None``
(``None`` is a 404) for dynamic pages: calendars that never end, session ids that
change on every request.  The callable receives the decoded path and the raw query.

``server.requests`` lists every request (GET, HEAD, anything else) in arrival order,
so a test can assert what a crawler fetched, and above all what it did not.
"""

from __future__ import annotations

import gzip
import http.server
import os
import re
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Self
from urllib.parse import quote, unquote_to_bytes


@dataclass
class Page:
    """One HTTP answer: the body bytes, the status and the headers (Content-Length is added)."""

    body: bytes
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


Handler = Callable[[str, str], "Page | None"]
Route = Page | Handler
Routes = Mapping[str, Route]


@dataclass(frozen=True)
class Request:
    """A request as the server saw it."""

    method: str
    target: str  # as sent: raw UTF-8 bytes read as UTF-8, %XX escapes left as they were
    path: str  # percent-decoded, UTF-8
    query: str  # as sent, "" when none
    headers: dict[str, str]
    at: float = 0.0  # time.monotonic() when it arrived
    pid: int | None = None  # the process that sent it, where the server was asked (RouteServer.identify_clients)


def split_target(raw: bytes) -> tuple[str, str]:
    """``(decoded path, raw query)`` of a request target given as bytes."""
    if raw.lower().startswith((b"http://", b"https://")):
        rest = raw.split(b"//", 1)[1]
        raw = b"/" + rest.split(b"/", 1)[1] if b"/" in rest else b"/"
    raw = raw.split(b"#", 1)[0]
    path, _, query = raw.partition(b"?")
    return (
        unquote_to_bytes(path or b"/").decode("utf-8", "replace"),
        query.decode("utf-8", "replace"),
    )


def route_key(target: str) -> tuple[str, str]:
    """``(path, query)`` of a route key written as text (non-ASCII taken as UTF-8)."""
    return split_target(target.encode("utf-8"))


# --- pages ---------------------------------------------------------------------------------


def html_page(
    text: str,
    charset: str = "utf-8",
    headers: dict[str, str] | None = None,
    *,
    status: int = 200,
    content_type: str | None = None,
) -> Page:
    """HTML encoded in ``charset`` and declared so in Content-Type, unless ``content_type``
    gives the header verbatim (a wrong charset, or none at all)."""
    ctype = content_type or f"text/html; charset={charset}"
    return Page(text.encode(charset), status, {"Content-Type": ctype, **(headers or {})})


def xml_page(
    text: str,
    content_type: str = "application/xml; charset=utf-8",
    encoding: str = "utf-8",
    headers: dict[str, str] | None = None,
) -> Page:
    """XML (feeds, sitemaps) encoded in ``encoding``, served with ``content_type`` verbatim."""
    return Page(text.encode(encoding), 200, {"Content-Type": content_type, **(headers or {})})


def gzip_page(
    data: bytes | str,
    content_type: str = "application/x-gzip",
    headers: dict[str, str] | None = None,
) -> Page:
    """A gzip file (``sitemap.xml.gz``): the body *is* compressed; no Content-Encoding."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    body = gzip.compress(raw, mtime=0)  # mtime=0: the same bytes on every run
    return Page(body, 200, {"Content-Type": content_type, **(headers or {})})


def text_page(text: str, content_type: str = "text/plain; charset=utf-8") -> Page:
    """Plain text, such as robots.txt."""
    return Page(text.encode("utf-8"), 200, {"Content-Type": content_type})


def file_page(data: bytes, content_type: str) -> Page:
    """Any binary file: a PDF, an image."""
    return Page(data, 200, {"Content-Type": content_type})


def redirect(location: str, status: int = 301) -> Page:
    """A redirect to ``location`` (absolute or relative, as the blog would send it).

    Non-ASCII characters are sent percent-encoded as UTF-8, as real servers do.
    """
    location = quote(location, safe=":/?#[]@!$&'()*+,;=%")
    body = f'<html><body><p>Moved to <a href="{location}">{location}</a></p></body></html>'
    return Page(
        body.encode("utf-8"),
        status,
        {"Location": location, "Content-Type": "text/html; charset=utf-8"},
    )


NOT_FOUND = Page(
    b"<!DOCTYPE html><html><head><title>404 Not Found</title></head>"
    b"<body><h1>Not Found</h1></body></html>",
    404,
    {"Content-Type": "text/html; charset=utf-8"},
)


# --- server --------------------------------------------------------------------------------


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers
    server_version = "blogsite/1.0"
    timeout = 30  # an idle keep-alive connection is closed after this many seconds
    server: _HTTPServer
    raw_requestline: bytes
    _sent_target: bytes | None = None

    def parse_request(self) -> bool:
        # http.server reads the request line as latin-1 and splits it with str.split(), which
        # takes \x85 and \xa0 for whitespace: raw UTF-8 such as "内" (e5 86 85) would be a 400.
        # Keep the target as sent, and let http.server parse a copy with %XX escapes instead.
        parts = self.raw_requestline.split(b" ")
        self._sent_target = parts[1] if len(parts) == 3 else None
        self.raw_requestline = re.sub(rb"[\x80-\xff]", lambda m: b"%%%02X" % m[0][0], self.raw_requestline)
        return super().parse_request()

    def do_GET(self) -> None:
        self._answer(body=True)

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def do_POST(self) -> None:
        self.server.app._record(self)
        self.close_connection = True  # the request body is never read
        self._send(Page(b"", 405, {"Allow": "GET, HEAD"}), body=False)

    do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_POST

    def _answer(self, body: bool) -> None:
        app = self.server.app
        app._record(self)
        try:
            page = app.lookup(self._raw_target())
        except Exception:  # noqa: BLE001 - a broken dynamic route: say so loudly in a 500
            page = Page(traceback.format_exc().encode(), 500, {"Content-Type": "text/plain"})
        self._send(page, body)

    def client_pid(self) -> int | None:
        """The process on this machine that holds the client's end of the connection (looked up once)."""
        if not hasattr(self, "_pid"):
            self._pid = socket_owner(self.client_address[1], self.server.server_address[1])
        return self._pid

    def _raw_target(self) -> bytes:
        """The request target exactly as the client sent it."""
        return self._sent_target if self._sent_target is not None else self.path.encode("latin-1")

    def _send(self, page: Page, body: bool) -> None:
        self.send_response(page.status)
        for name, value in page.headers.items():
            if name.lower() != "content-length":
                # http.server writes headers as latin-1: send anything else as raw UTF-8 bytes
                self.send_header(name, value.encode("utf-8").decode("latin-1"))
        self.send_header("Content-Length", str(len(page.body)))
        self.end_headers()
        if body:
            self.wfile.write(page.body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def socket_owner(client_port: int, server_port: int) -> int | None:
    """The pid whose open files hold the TCP socket 127.0.0.1:client_port -> :server_port (Linux /proc)."""
    inode = None
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            if int(fields[1].split(":")[1], 16) == client_port and int(fields[2].split(":")[1], 16) == server_port:
                inode = fields[9]
    if inode is None:
        return None
    wanted = f"socket:[{inode}]"
    for pid in filter(str.isdigit, os.listdir("/proc")):
        if _holds(pid, wanted):
            return int(pid)
    return None


def _holds(pid: str, wanted: str) -> bool:
    """Whether process ``pid`` has ``wanted`` open; its other descriptors may close while they are read."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False  # gone, or not ours to read
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == wanted:
                return True
        except OSError:
            continue  # closed since the listing (a busy crawl opens and closes files all the time)
    return False


class _HTTPServer(http.server.ThreadingHTTPServer):
    app: RouteServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)  # a bug here: print it
        # clients that hang up mid-answer are not news


class RouteServer:
    """A :class:`http.server.ThreadingHTTPServer` on 127.0.0.1, a free port, in a daemon thread.

    Use it as a context manager; ``base`` is ``"http://127.0.0.1:PORT"``.
    """

    def __init__(self, routes: Routes, not_found: Page | None = None):
        self.routes: dict[tuple[str, str], Route] = {}
        for target, route in routes.items():
            key = route_key(target)
            if key in self.routes:
                raise ValueError(f"two routes for {key}: {target!r}")
            self.routes[key] = route
        self.not_found = not_found or NOT_FOUND
        self.identify_clients = False  # record which process sent each request (Request.pid)
        self._requests: list[Request] = []
        self._lock = threading.Lock()
        self.httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.app = self
        self.port = self.httpd.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join()

    def url(self, target: str) -> str:
        """The server's URL of a path (``/p/1`` -> ``http://127.0.0.1:PORT/p/1``)."""
        return self.base + target

    def lookup(self, raw_target: bytes) -> Page:
        """The answer to a request target given as bytes (404 page when nothing matches)."""
        path, query = split_target(raw_target)
        route = self.routes.get((path, query))
        if route is None and query:
            route = self.routes.get((path, ""))
        if route is not None and not isinstance(route, Page):
            route = route(path, query)
        return route if route is not None else self.not_found

    def _record(self, handler: _Handler) -> None:
        raw = handler._raw_target()
        path, query = split_target(raw)
        request = Request(
            method=handler.command,
            target=raw.decode("utf-8", "replace"),
            path=path,
            query=query,
            headers=dict(handler.headers.items()),
            at=time.monotonic(),
            pid=handler.client_pid() if self.identify_clients else None,
        )
        with self._lock:
            self._requests.append(request)

    @property
    def requests(self) -> list[Request]:
        """Every request so far, oldest first (a copy)."""
        with self._lock:
            return list(self._requests)

    def paths(self) -> list[str]:
        """Decoded paths of every request so far, oldest first, repeats kept."""
        return [r.path for r in self.requests]

    def requested(self, prefix: str) -> list[Request]:
        """Requests whose decoded path starts with ``prefix`` (``/private/``)."""
        return [r for r in self.requests if r.path.startswith(prefix)]

    def clear(self) -> None:
        """Forget the requests recorded so far."""
        with self._lock:
            self._requests.clear()

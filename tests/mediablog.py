"""A test blog whose posts show images, and a second host standing in for its CDN.

``media_blog()`` and ``media_cdn()`` are the two sites' files (path -> content
type and body); ``SiteServer`` serves one on 127.0.0.1 with ETag and
Last-Modified, answers 304 to a matching conditional request, and logs every
request. The images are drawn with Pillow: PNG, JPEG (a srcset), WebP (og:image
and a ``<picture>``), GIF (lazy), an SVG with a script, one image in three
posts, a 404, one larger than the 1 MB cap the tests set, an HTML page served
as ``image/jpeg``, a logo and an avatar on every page (the theme's), a video
and a PDF (listed, never fetched).
"""

import hashlib
import http.server
import io
import random
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from email.utils import format_datetime

from PIL import Image

HOST, CDN = "media.test", "cdn.media.test"
POSTS = 8
MODIFIED = format_datetime(datetime(2024, 3, 1, tzinfo=timezone.utc), usegmt=True)
SVG_SCRIPT = (
    b'<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40">'
    b'<rect id="box" width="120" height="40" fill="teal"/>'
    b'<script>document.getElementById("box").setAttribute("data-ran", "yes")</script></svg>'
)
# what each post shows inside its article, beside the theme's avatar
BODIES = {
    1: '<img src="/img/diagram.png" alt="A diagram" width="64" height="48">'
       '<img src="/img/photo-small.jpg" srcset="/img/photo-small.jpg 320w, /img/photo-large.jpg 1280w" alt="A photo">',
    2: '<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" data-src="/img/lazy.gif" alt="Lazy">'
       '<picture><source srcset="/img/pic.webp 800w" type="image/webp"><img src="/img/pic.png" alt="Picture"></picture>'
       '<img src="/img/drawing.svg" alt="A drawing">',
    3: '<img src="/img/shared.png" alt="Shared"><img src="/img/missing.png" alt="The missing one">',
    4: '<img src="/img/shared.png" alt="Shared"><img src="/img/huge.png" alt="Too big">',
    5: '<img src="/img/shared.png" alt="Shared"><img src="/img/fake.jpg" alt="Not a picture">',
    6: f'<img src="http://{CDN}/c/remote.png" alt="From the CDN"><video src="/v/clip.mp4"></video>'
       '<p>The <a href="/files/paper.pdf">paper</a>.</p><img src="/px.gif" width="1" height="1" alt="">',
}


def image(kind: str, size: tuple[int, int], seed: int, *, noise: bool = False) -> bytes:
    """A generated image: a flat colour, or (``noise``) random pixels that do not compress."""
    rng = random.Random(seed)
    if noise:
        picture = Image.frombytes("RGB", size, rng.randbytes(size[0] * size[1] * 3))
    else:
        picture = Image.new("RGB", size, (rng.randrange(256), rng.randrange(256), rng.randrange(256)))
    out = io.BytesIO()
    picture.save(out, format=kind)
    return out.getvalue()


def text(n: int) -> str:
    rng = random.Random(n)
    words = "image archive picture diagram photo post blog theme crawl store serve export".split()
    return "".join("<p>" + " ".join(rng.choice(words) for _ in range(60)).capitalize() + ".</p>" for _ in range(3))


def site_page(title: str, body: str, head: str = "") -> bytes:
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f'<link rel="alternate" type="application/atom+xml" href="http://{HOST}/feed.xml">{head}</head>'
        f'<body><header><img src="/theme/logo.png" alt="Media test blog"></header>{body}'
        '<footer>A test blog</footer></body></html>'
    ).encode()


def post_page(n: int) -> bytes:
    og = '<meta property="og:image" content="/img/cover.webp">' if n == 1 else ""
    meta = (f'<meta property="og:type" content="article">{og}'
            f'<meta property="article:published_time" content="2024-02-{n:02d}T09:00:00+00:00">')
    article = (f'<article><h1>Post {n} with pictures</h1><img src="/theme/avatar.png" alt="The author">'
               f'{text(n)}{BODIES.get(n, "")}</article>')
    return site_page(f"Post {n} with pictures", article, meta)


def media_blog() -> dict[str, tuple[str, bytes]]:
    links = "".join(f'<li><a href="/p/{n}/">Post {n} with pictures</a></li>' for n in range(1, POSTS + 1))
    entries = "".join(
        f"<entry><id>tag:{HOST},{n}</id><title>Post {n} with pictures</title><link href=\"http://{HOST}/p/{n}/\"/>"
        f"<published>2024-02-{n:02d}T09:00:00Z</published><updated>2024-02-{n:02d}T09:00:00Z</updated></entry>"
        for n in range(1, POSTS + 1))
    files = {
        "/": ("text/html; charset=utf-8", site_page("Media test blog", f'<aside><img src="/theme/avatar.png" alt="The author"></aside><ul>{links}</ul>')),
        "/feed.xml": ("application/atom+xml", (
            '<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
            f'<title>Media test blog</title><id>http://{HOST}/</id><updated>2024-03-01T00:00:00Z</updated>{entries}</feed>').encode()),
        "/robots.txt": ("text/plain", b"User-agent: *\nAllow: /\n"),
        "/theme/logo.png": ("image/png", image("PNG", (200, 50), 1)),
        "/theme/avatar.png": ("image/png", image("PNG", (48, 48), 2)),
        "/img/diagram.png": ("image/png", image("PNG", (64, 48), 3)),
        "/img/photo-small.jpg": ("image/jpeg", image("JPEG", (320, 240), 4)),
        "/img/photo-large.jpg": ("image/jpeg", image("JPEG", (1280, 960), 4)),
        "/img/cover.webp": ("image/webp", image("WEBP", (600, 315), 5)),
        "/img/lazy.gif": ("image/gif", image("GIF", (40, 30), 6)),
        "/img/pic.webp": ("image/webp", image("WEBP", (800, 600), 7)),
        "/img/pic.png": ("image/png", image("PNG", (400, 300), 7)),
        "/img/drawing.svg": ("image/svg+xml", SVG_SCRIPT),
        "/img/shared.png": ("image/png", image("PNG", (100, 100), 8)),
        "/img/huge.png": ("image/png", image("PNG", (800, 800), 9, noise=True)),  # about 1.9 MB
        "/img/fake.jpg": ("image/jpeg", b"<!doctype html><html><body><h1>Error 500</h1></body></html>"),
        "/px.gif": ("image/gif", image("GIF", (1, 1), 10)),
        "/v/clip.mp4": ("video/mp4", b"\x00\x00\x00\x18ftypmp42"),
        "/files/paper.pdf": ("application/pdf", b"%PDF-1.4\n"),
    }
    files.update({f"/p/{n}/": ("text/html; charset=utf-8", post_page(n)) for n in range(1, POSTS + 1)})
    return files


def media_cdn() -> dict[str, tuple[str, bytes]]:
    return {"/c/remote.png": ("image/png", image("PNG", (300, 200), 11))}


@dataclass
class Hit:
    path: str
    status: int
    conditional: bool


class _Handler(http.server.BaseHTTPRequestHandler):
    server: "_Server"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        site = self.server.site
        path = self.path.split("?", 1)[0]
        found = site.files.get(path)
        conditional = bool(self.headers.get("If-None-Match") or self.headers.get("If-Modified-Since"))
        if found is None:
            status, headers, body = 404, {"Content-Type": "text/html"}, b"<html><body>Not found</body></html>"
        else:
            etag = '"' + hashlib.sha1(found[1]).hexdigest()[:16] + '"'
            headers = {"Content-Type": found[0], "ETag": etag, "Last-Modified": MODIFIED}
            status, body = (304, b"") if self.headers.get("If-None-Match") == etag else (200, found[1])
        with site.lock:
            site.hits.append(Hit(path, status, conditional))
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _Server(http.server.ThreadingHTTPServer):
    site: "SiteServer"


class SiteServer:
    """A site's files on 127.0.0.1, on a free port, in a thread; ``hits`` logs every request."""

    def __init__(self, files: dict[str, tuple[str, bytes]]):
        self.files = files
        self.hits: list[Hit] = []
        self.lock = threading.Lock()
        self.httpd = _Server(("127.0.0.1", 0), _Handler)
        self.httpd.site = self
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> "SiteServer":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        if self.thread.is_alive():
            self.httpd.shutdown()
        self.httpd.server_close()

    def take_hits(self) -> list[Hit]:
        with self.lock:
            hits, self.hits = self.hits, []
        return hits

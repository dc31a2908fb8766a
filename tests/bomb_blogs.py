"""Blogs whose home page or feed is a bomb, beside ordinary blogs, all served by one FaultServer.

Each blog lives under its own folder ``/NAME/`` (a source of its own). ``BOMBS`` names what a
bomb blog sends:

- ``gzip-home``, ``deflate-home``, ``br-home``, ``zstd-home``: a home page of 1 GiB of zeros
  compressed (a few kB to 1 MB on the wire); ``br64-home``: 64 GiB of zeros as brotli (12 MB);
- ``gzip-feed`` ... ``br64-feed``: an ordinary home page that declares a feed which is such a bomb;
- ``laughs-feed``: a feed whose entity nests ten levels of ten (a billion times its text);
- ``quadratic-feed``: a feed that refers 1,500,000 times to one entity of 100,000 characters;
- ``nested-feed``: a feed of entities that each refer eight times to the one before (defusedxml's
  xmlbomb, in its own words);
- ``external-feed``: a feed whose entity is a file of the machine (``file:///etc/hostname``).

``ordinary(name)`` is a blog of ``POSTS`` posts with a feed that lists them, whose posts are
archived whole. ``routes(blogs)`` serves ``{name: kind}``, ``kind`` a bomb or ``"ordinary"``.
"""

import zlib
from collections.abc import Callable
from functools import cache

import brotli
from backports import zstd
from faultserver import Route, answer
from hostile_blogs import br_bomb

CODECS = ("gzip", "deflate", "br", "zstd", "br64")
ENTITY_BOMBS = ("laughs", "quadratic", "nested", "external")
BOMBS = (*(f"{codec}-home" for codec in CODECS), *(f"{codec}-feed" for codec in CODECS),
         *(f"{kind}-feed" for kind in ENTITY_BOMBS))
POSTS = 3
GIB = 1 << 30
BLOCK = 1 << 24  # zeros are compressed a block at a time: a GiB is never held


def _zeros(compress: Callable[[bytes], bytes], flush: Callable[[], bytes], size: int) -> bytes:
    block = b"\0" * BLOCK
    return b"".join(compress(block) for _ in range(size // BLOCK)) + flush()


@cache
def compression_bomb(codec: str) -> bytes:
    """1 GiB of zeros in ``codec`` (gzip, deflate, br, zstd), or 64 GiB as brotli (``br64``)."""
    if codec == "br64":
        return br_bomb()
    if codec == "gzip":
        z = zlib.compressobj(9, wbits=31)
    elif codec == "deflate":
        z = zlib.compressobj(9)
    elif codec == "br":
        b = brotli.Compressor(quality=5)
        return _zeros(b.process, b.finish, GIB)
    else:
        c = zstd.ZstdCompressor()
        return _zeros(c.compress, lambda: c.flush(zstd.ZstdCompressor.FLUSH_FRAME), GIB)
    return _zeros(z.compress, z.flush, GIB)


def _feed(name: str, doctype: str, text: str) -> bytes:
    return (f'<?xml version="1.0" encoding="utf-8"?>{doctype}<rss version="2.0"><channel><title>{name}</title>'
            f"<link>http://{name}.test/{name}/</link><item><title>A post {text}</title>"
            f"<link>http://{name}.test/{name}/p/1/</link><description>{text}</description></item>"
            "</channel></rss>").encode()


@cache
def entity_bomb(kind: str, name: str) -> bytes:
    """A feed that is an entity bomb of ``kind`` (see ``ENTITY_BOMBS``)."""
    if kind == "laughs":
        levels = "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
        return _feed(name, f'<!DOCTYPE rss [<!ENTITY l0 "lol">{levels}]>', "&l9;")
    if kind == "quadratic":
        return _feed(name, f'<!DOCTYPE rss [<!ENTITY a "{"B" * 100_000}">]>', "&a;" * 1_500_000)
    if kind == "nested":
        levels = "".join(f'<!ENTITY {c} "{f"&{p};" * 8}">' for p, c in zip("abcdefg", "bcdefgh"))
        return _feed(name, f'<!DOCTYPE rss [<!ENTITY a "1234567890">{levels}]>', "&h;")
    return _feed(name, '<!DOCTYPE rss [<!ENTITY xxe SYSTEM "file:///etc/hostname">]>', "&xxe;")


def post(name: str, i: int) -> bytes:
    paras = "".join(f"<p>Paragraph {n} of post {i} of {name}, an ordinary post that is long enough to be "
                    "archived as an article, every word of it.</p>" for n in range(8))
    return (f'<html lang="en"><head><title>Post {i} of {name}</title><meta property="og:type" content="article">'
            f'<meta property="article:published_time" content="2024-05-0{i}T10:00:00+00:00"></head>'
            f"<body><article><h1>Post {i} of {name}</h1>{paras}</article></body></html>").encode()


def home(name: str, feed: bool = True) -> bytes:
    links = "".join(f'<a href="/{name}/p/{i}/">post {i}</a> ' for i in range(1, POSTS + 1))
    head = f'<link rel="alternate" type="application/rss+xml" href="/{name}/feed.xml">' if feed else ""
    return f"<html><head><title>{name}</title>{head}</head><body>{links}</body></html>".encode()


def ordinary_feed(name: str) -> bytes:
    items = "".join(f"<item><title>Post {i} of {name}</title><link>http://{name}.test/{name}/p/{i}/</link>"
                    f"<pubDate>Mon, 0{i} May 2024 10:00:00 +0000</pubDate></item>" for i in range(1, POSTS + 1))
    return (f'<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>{name}</title>'
            f"<link>http://{name}.test/{name}/</link>{items}</channel></rss>").encode()


def routes(blogs: dict[str, str]) -> dict[str, Route]:
    """The server's routes for ``{name: kind}``."""
    rss = {"Content-Type": "application/rss+xml"}
    out = {"/robots.txt": answer(200, b"User-agent: *\nAllow: /\n", {"Content-Type": "text/plain"})}
    for name, kind in blogs.items():
        what, _, where = kind.partition("-")
        encoding = {"br64": "br"}.get(what, what)
        out[f"/{name}/"] = answer(200, home(name))
        out[f"/{name}/feed.xml"] = answer(200, ordinary_feed(name), rss)
        if where == "home":
            out[f"/{name}/"] = answer(200, compression_bomb(what), {"Content-Encoding": encoding})
        elif what in CODECS:
            out[f"/{name}/feed.xml"] = answer(200, compression_bomb(what), {**rss, "Content-Encoding": encoding})
        elif what in ENTITY_BOMBS:
            out[f"/{name}/feed.xml"] = answer(200, entity_bomb(what, name), rss)
        for i in range(1, POSTS + 1):
            out[f"/{name}/p/{i}/"] = answer(200, post(name, i))
    return out

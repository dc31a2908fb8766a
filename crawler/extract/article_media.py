"""The media a post shows: pure reads of an lxml tree, no network.

``article_media`` lists, in the order the article shows them, its images (a
lazy-loading attribute first, then the best ``srcset`` or ``<picture>``
candidate, then ``src``), its videos, audio and linked files, and the page's
``og:image`` last. ``page_images`` is every image a page shows, the evidence
that tells the theme's (a logo, an avatar on every page) from a post's own.
"""

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from archive.core.urls import parse_url

LAZY = ("data-src", "data-original", "data-lazy-src")
LAZY_SRCSET = ("data-srcset", "data-lazy-srcset")
VIDEO = {"mp4", "webm", "mov", "m4v", "ogv", "mkv"}
AUDIO = {"mp3", "ogg", "oga", "wav", "m4a", "flac", "opus"}
FILES = {"pdf", "zip", "gz", "tgz", "tar", "bz2", "xz", "7z", "rar", "epub", "csv", "xlsx", "docx", "pptx", "odt", "ods"}
DESCRIPTOR = re.compile(r"^(\d+(?:\.\d+)?)([wx])$")


def best_srcset(value: str | None) -> str | None:
    """The widest (or densest) candidate of a ``srcset``."""
    best, score = None, -1.0
    for candidate in (value or "").split(","):
        parts = candidate.split()
        if not parts:
            continue
        match = DESCRIPTOR.match(parts[1]) if len(parts) > 1 else None
        size = float(match.group(1)) if match else 1.0  # one srcset holds w or x descriptors, not both
        if size > score:
            best, score = parts[0], size
    return best


def image_url(img: Any, base: str) -> str | None:
    """What an ``<img>`` shows, as an absolute http(s) URL; None for a tracking pixel or inline data."""
    if img.get("width") in ("0", "1") or img.get("height") in ("0", "1"):
        return None
    raw = next((img.get(a) for a in LAZY if img.get(a)), None)
    raw = raw or best_srcset(next((img.get(a) for a in (*LAZY_SRCSET, "srcset") if img.get(a)), None))
    picture = next(img.iterancestors("picture"), None)  # lxml nests the <img> in the <source> before it
    if not raw and picture is not None:
        raw = best_srcset(", ".join(s.get("srcset", "") for s in picture.iter("source")))
    return _absolute(raw or img.get("src"), base)


def article_media(holder: Any, base: str, og_image: str | None = None) -> list[dict[str, Any]]:
    """The media of the article ``holder`` in order: ``url``, ``kind`` (image, video, audio, file), ``alt``."""
    found: dict[str, dict[str, Any]] = {}
    for url, kind, alt in _media(holder, base):
        found.setdefault(url, {"url": url, "kind": kind, "alt": alt})
    og = _absolute(og_image, base)
    if og:
        found.setdefault(og, {"url": og, "kind": "image", "alt": None})
    return list(found.values())


def page_images(root: Any, base: str) -> set[str]:
    """Every image a page shows (its ``og:image`` too)."""
    urls = {u for img in root.iter("img") if (u := image_url(img, base))}
    og = root.xpath('//meta[@property="og:image"]/@content')
    return urls | {u for u in (_absolute(og[0], base) if og else None,) if u}


def _media(holder: Any, base: str) -> Iterator[tuple[str, str, str | None]]:
    for el in holder.iter("img", "video", "audio", "source", "a"):
        if el.tag == "img":
            url = image_url(el, base)
            if url:
                yield url, "image", (el.get("alt") or "").strip() or None
        elif el.tag in ("video", "audio") or (el.tag == "source" and el.getparent() is not None
                                              and el.getparent().tag in ("video", "audio")):
            kind = el.tag if el.tag != "source" else el.getparent().tag
            url = _absolute(el.get("src"), base)
            if url:
                yield url, kind, None
        elif el.tag == "a":
            url = _absolute(el.get("href"), base)
            kind = _file_kind(url) if url else None
            if url and kind:
                yield url, kind, (el.text_content() or "").strip() or None


def _file_kind(url: str) -> str | None:
    ext = urlsplit(url).path.rsplit("/", 1)[-1].rpartition(".")[2].lower()
    return "video" if ext in VIDEO else "audio" if ext in AUDIO else "file" if ext in FILES else None


def _absolute(raw: str | None, base: str) -> str | None:
    if not raw or raw.strip().startswith("data:"):
        return None
    return parse_url(raw.strip(), base)  # a src that is no URL shows no image

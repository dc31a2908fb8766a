"""Post media: the images a post shows, kept once by sha256, and the other files it links to.

A ``media`` row is one URL: its kind (image, video, audio, file), what became of
it (``status``) and, for an image fetched, the body's sha256 in
``capture_bodies`` (where every fetched body is kept once), its type as the
bytes say and its size. ``post_media`` links a post to its media in order, with
the alt text. Videos, audio and other files are ``listed``: recorded, never
fetched.
"""

import re
import struct
from typing import Any

from sqlite_utils import Database

from archive.core.db import utcnow
from archive.core.urls import normalize_url

MODES = ("all", "metadata", "off")
LISTED, OK, THEME = "listed", "ok", "theme"
DEFERRED = "deferred"  # not reached in its run (its host down, or the network failed): asked for by the next
SVG = re.compile(rb"^\s*(?:<\?xml[^>]*>\s*)?(?:<!--.*?-->\s*|<!DOCTYPE[^>]*>\s*)*<svg[\s>]", re.DOTALL | re.IGNORECASE)


def sniff_image(body: bytes) -> tuple[str | None, int | None, int | None]:
    """The image type ``body`` really is, with its width and height where the header holds them;
    ``(None, None, None)`` for anything that is not an image (an HTML error page, above all)."""
    if body.startswith(b"\x89PNG\r\n\x1a\n") and len(body) >= 24:
        width, height = struct.unpack(">II", body[16:24])
        return "image/png", width, height
    if body[:6] in (b"GIF87a", b"GIF89a") and len(body) >= 10:
        width, height = struct.unpack("<HH", body[6:10])
        return "image/gif", width, height
    if body[:4] == b"RIFF" and body[8:12] == b"WEBP":
        return ("image/webp", *_webp_size(body))
    if body.startswith(b"\xff\xd8\xff"):
        return ("image/jpeg", *_jpeg_size(body))
    if SVG.match(body[:4096]):
        return "image/svg+xml", None, None
    return None, None, None


def _webp_size(body: bytes) -> tuple[int | None, int | None]:
    chunk = body[12:16]
    if chunk == b"VP8X" and len(body) >= 30:
        return 1 + int.from_bytes(body[24:27], "little"), 1 + int.from_bytes(body[27:30], "little")
    if chunk == b"VP8L" and len(body) >= 25:
        bits = int.from_bytes(body[21:25], "little")
        return 1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF)
    if chunk == b"VP8 " and len(body) >= 30:
        width, height = struct.unpack("<HH", body[26:30])
        return width & 0x3FFF, height & 0x3FFF
    return None, None


def _jpeg_size(body: bytes) -> tuple[int | None, int | None]:
    """Width and height from the first start-of-frame marker."""
    i = 2
    while i + 9 < len(body):
        if body[i] != 0xFF:
            return None, None
        marker = body[i + 1]
        length = int.from_bytes(body[i + 2 : i + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", body[i + 5 : i + 9])
            return width, height
        i += 2 + length
    return None, None


def save_post_media(db: Database, post_id: int, source_id: int, media: list[dict[str, Any]]) -> None:
    """Link a post to its media, in order (``url``, ``kind``, ``alt``), replacing its links;
    a URL not known yet is added as ``listed``."""
    with db.atomic():
        db.execute("delete from post_media where post_id = ?", [post_id])
        for position, item in enumerate(media):
            url = normalize_url(item["url"])
            db.execute(
                "insert into media (url, source_id, kind, status) values (?, ?, ?, ?) on conflict (url) do nothing",
                [url, source_id, item.get("kind") or "image", LISTED],
            )
            media_id = db.execute("select id from media where url = ?", [url]).fetchone()[0]
            db.table("post_media").insert({"post_id": post_id, "position": position, "media_id": media_id, "alt": item.get("alt")})


def save_media_file(db: Database, url: str, *, source_id: int, status: str, sha256: str | None = None,
                    content_type: str | None = None, size: int | None = None, width: int | None = None,
                    height: int | None = None) -> None:
    """What fetching an image gave: ``ok`` with its body's sha256 (in ``capture_bodies``), or why not."""
    fields: dict[str, Any] = {"status": status, "fetched_at": utcnow()}
    if sha256:
        fields |= {"sha256": sha256, "content_type": content_type, "bytes": size, "width": width, "height": height}
    url = normalize_url(url)
    with db.atomic():  # its row is there, unless the post that showed it could not be saved
        db.execute("insert into media (url, source_id, kind, status) values (?, ?, 'image', ?) on conflict (url) do nothing",
                   [url, source_id, LISTED])
        db.table("media").update(db.execute("select id from media where url = ?", [url]).fetchone()[0], fields)


def mark_theme_media(db: Database, source_id: int, urls: list[str]) -> int:
    """The blog's theme shows these images on its pages: no post's media. Return the links removed."""
    removed, posts = 0, set()
    with db.atomic():
        for url in urls:
            row = db.execute("select id from media where url = ?", [normalize_url(url)]).fetchone()
            if row:
                mine = "media_id = ? and post_id in (select id from posts where source_id = ?)"
                posts |= {r[0] for r in db.execute(f"select post_id from post_media where {mine}", [row[0], source_id])}
                removed += db.execute(f"delete from post_media where {mine}", [row[0], source_id]).rowcount
                db.execute("update media set status = ? where id = ?", [THEME, row[0]])
        for post_id in posts:  # the links left numbered from 0 again, as a new extraction numbers them
            kept = list(db.query("select media_id, alt from post_media where post_id = ? order by position", [post_id]))
            db.execute("delete from post_media where post_id = ?", [post_id])
            db.table("post_media").insert_all({"post_id": post_id, "position": i, **r} for i, r in enumerate(kept))
    return removed


def theme_media(db: Database, source_id: int) -> set[str]:
    """The URLs an earlier crawl found to be the source's theme images."""
    return {r["url"] for r in db.query("select url from media where source_id = ? and status = ?", [source_id, THEME])}


def media_states(db: Database, urls: list[str]) -> dict[str, str]:
    """The status of each of ``urls`` the archive knows."""
    states = {}
    for url in urls:
        row = db.execute("select status from media where url = ?", [normalize_url(url)]).fetchone()
        if row:
            states[url] = row[0]
    return states


def shown_images(db: Database, source_id: int, status: str) -> dict[str, list[str]]:
    """The images of that status the source's posts show, each with those posts."""
    return _shown_images(db, source_id, "m.status = ?", [status])


def unarchived_images(db: Database, source_id: int) -> dict[str, list[str]]:
    """The images the source's posts show that are neither archived nor the theme's (listed, deferred, or
    failed: a 404, a cap, not an image), each with those posts."""
    return _shown_images(db, source_id, "m.status not in (?, ?)", [OK, THEME])


def _shown_images(db: Database, source_id: int, condition: str, params: list[str]) -> dict[str, list[str]]:
    shown: dict[str, list[str]] = {}
    for row in db.query(
            "select m.url, p.url post from media m join post_media pm on pm.media_id = m.id join posts p on p.id = pm.post_id "
            f"where p.source_id = ? and m.kind = 'image' and {condition} order by p.id, pm.position", [source_id, *params]):
        shown.setdefault(row["url"], []).append(row["post"])
    return shown


def source_media_bytes(db: Database, source_id: int) -> int:
    """Bytes of the images archived for the source's posts."""
    return db.execute(
        "select coalesce(sum(bytes), 0) from media where status = ? and id in "
        "(select media_id from post_media join posts on posts.id = post_id where posts.source_id = ?)",
        [OK, source_id]).fetchone()[0]


def post_media(db: Database, post_id: int) -> list[dict[str, Any]]:
    """A post's media in order: position, alt, and the media row."""
    return list(db.query(
        "select pm.position, pm.alt, m.* from post_media pm join media m on m.id = pm.media_id "
        "where pm.post_id = ? order by pm.position", [post_id]))

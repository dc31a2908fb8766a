"""WARC (ISO 28500) out of the captures, and captures out of any crawler's WARC files.

``export_warc`` writes WARC/1.1, every record gzipped on its own: a
``warcinfo`` record naming the sources, then for each capture a ``response``
(the status line and the headers as stored, the body as Scrapy gave it) with
a ``request`` beside it, or a ``revisit`` (identical-payload-digest) when the
body was written earlier in the file; then a ``response`` for each HTTP
redirect that led to a post (its status, and the post as its ``Location``). Request headers are not archived: the
``request`` records hold what every crawl sends. The body is stored decoded,
so the headers that described the transfer (``Content-Encoding``,
``Transfer-Encoding``) are left out and ``Content-Length`` is the body's.

``import_warc`` reads WARC files of blogarchive, wget, Heritrix or
browsertrix and saves each response (HTML, feeds, sitemaps, robots.txt,
redirects; not images, scripts or styles) as a capture, once.
"""

import base64
import hashlib
import io
import json
from collections.abc import Iterator
from http import HTTPStatus
from importlib.metadata import version
from typing import IO, Any
from urllib.parse import urlsplit

import brotli
from sqlite_utils import Database
from warcio.archiveiterator import ArchiveIterator
from warcio.bufferedreaders import ChunkedDataReader
from warcio.exceptions import ArchiveLoadFailed
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from archive.core.dates import parse_date
from archive.core.urls import parse_url
from archive.tables.captures import load_body, save_capture

# What a crawl sends besides Host (crawler/settings.py, Scrapy's defaults and its compression middleware).
REQUEST_HEADERS = [
    ("User-Agent", "blogarchive/0.1 (+https://pypi.org/project/blogarchive/)"),
    ("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"),
    ("Accept-Language", "en"),
    ("Accept-Encoding", "gzip, deflate, br, zstd"),
]
TRANSFER_HEADERS = {"content-encoding", "content-length", "transfer-encoding"}
SKIPPED_TYPES = ("image/", "font/", "audio/", "video/", "text/css", "javascript", "application/wasm")
SOURCES_FIELD = "blogarchive-sources"  # the warcinfo field listing the sources, as JSON
SOURCE_FIELDS = ("name", "url", "folder", "title", "site_url", "hosts")


def payload_digest(body: bytes) -> str:
    """The ``WARC-Payload-Digest`` of a body: SHA-1, base32, as warcio and pywb write it."""
    return "sha1:" + base64.b32encode(hashlib.sha1(body).digest()).decode("ascii")


def export_warc(db: Database, out: IO[bytes], *, source: str | None = None, since: str | None = None,
                filename: str = "blogarchive.warc.gz") -> int:
    """Write the captures (of one source, fetched since a date) as WARC/1.1; return the captures written.

    ``filename`` is the file's name, for its ``warcinfo`` record.

    Raises:
        ValueError: no source has that name, or ``since`` is not a date.
    """
    sources = list(db.query("select * from sources" + (" where name = ?" if source else "") + " order by id",
                            [source] if source else []))
    if source and not sources:
        raise ValueError(f"no source named {source!r}")
    since_at = parse_date(since) if since else None
    if since and since_at is None:
        raise ValueError(f"not a date: {since!r}")
    writer = WARCWriter(out, gzip=True, warc_version="1.1")
    info = {
        "software": f"blogarchive/{version('blogarchive')}",
        "format": "WARC File Format 1.1",
        "conformsTo": "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/",
        SOURCES_FIELD: json.dumps([{k: s.get(k) for k in SOURCE_FIELDS} for s in sources], ensure_ascii=False),
    }
    writer.write_record(writer.create_warcinfo_record(filename, info))
    written: dict[str, tuple[str, str, str]] = {}  # body sha256 -> its digest, URL and date in this file
    responses: dict[str, str] = {}  # URL -> the record ID of its last response in this file
    count = 0
    source_ids = [s["id"] for s in sources] if source else None
    for capture in _captures(db, source_ids, since_at):
        if capture.get("fetched_via") == "browser":  # the HTML a browser rendered from a response: a conversion of it
            writer.write_record(_conversion_record(writer, db, capture, responses.get(capture["url"])))
            count += 1
            continue
        response = _response_record(writer, db, capture, written)
        responses[capture["url"]] = response.rec_headers.get_header("WARC-Record-ID")
        writer.write_record(response)
        writer.write_record(_request_record(writer, capture, response.rec_headers.get_header("WARC-Record-ID")))
        count += 1
    for redirect in _redirects(db, source_ids, since_at):
        response = _redirect_record(writer, redirect)
        writer.write_record(response)
        writer.write_record(_request_record(writer, redirect, response.rec_headers.get_header("WARC-Record-ID")))
    return count


def _selected(source_column: str, time_column: str, source_ids: list[int] | None, since: str | None,
              where: list[str]) -> tuple[str, list[Any]]:
    """A ``where`` clause (empty when there is nothing to select) keeping the rows of these sources
    since that time, and its parameters."""
    params: list[Any] = []
    if source_ids is not None:
        where = [*where, f"{source_column} in ({', '.join('?' * len(source_ids))})"]
        params += source_ids
    if since:
        where = [*where, f"{time_column} >= ?"]
        params.append(since)
    return (" where " + " and ".join(where) if where else ""), params


def _captures(db: Database, source_ids: list[int] | None, since: str | None) -> Iterator[dict[str, Any]]:
    where, params = _selected("source_id", "fetched_at", source_ids, since, [])
    yield from db.query("select * from captures" + where + " order by fetched_at, id", params)


def _redirects(db: Database, source_ids: list[int] | None, since: str | None) -> Iterator[dict[str, Any]]:
    """The HTTP redirects that led to posts (``post_aliases``), as captures of their own: status,
    the post's URL as their ``Location``, and when the redirect was first seen."""
    where, params = _selected("p.source_id", "a.first_seen", source_ids, since, ["a.why like 'redirect %'"])
    sql = ("select a.alias as url, a.why, a.first_seen as fetched_at, p.url as location from post_aliases a "
           "join posts p on p.id = a.post_id" + where + " order by a.first_seen, a.alias")
    for row in db.query(sql, params):
        status = row["why"].removeprefix("redirect ")
        if status.isdigit():
            yield {**row, "status": int(status), "headers": json.dumps({"location": row["location"]})}


def _redirect_record(writer: WARCWriter, redirect: dict[str, Any]) -> Any:
    return writer.create_warc_record(redirect["url"], "response", payload=io.BytesIO(b""), length=0,
                                     http_headers=_http_headers(redirect, 0),
                                     warc_headers_dict={"WARC-Date": redirect["fetched_at"],
                                                        "WARC-Payload-Digest": payload_digest(b"")})


def _http_headers(capture: dict[str, Any], size: int) -> StatusAndHeaders:
    status = capture["status"]
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = ""
    headers = [(k, v) for k, v in json.loads(capture["headers"] or "{}").items() if k not in TRANSFER_HEADERS]
    return StatusAndHeaders(f"{status} {phrase}".strip(), headers + [("content-length", str(size))], protocol="HTTP/1.1")


def _response_record(writer: WARCWriter, db: Database, capture: dict[str, Any],
                     written: dict[str, tuple[str, str, str]]) -> Any:
    date = {"WARC-Date": capture["fetched_at"]}
    if capture["sha256"] in written:
        digest, uri, when = written[capture["sha256"]]
        size = db.execute("select size from capture_bodies where sha256 = ?", [capture["sha256"]]).fetchone()[0]
        return writer.create_revisit_record(capture["url"], digest, uri, when,
                                            http_headers=_http_headers(capture, size), warc_headers_dict=date)
    body = load_body(db, capture["sha256"]) or b""
    digest = payload_digest(body)
    written[capture["sha256"]] = (digest, capture["url"], capture["fetched_at"])
    return writer.create_warc_record(capture["url"], "response", payload=io.BytesIO(body), length=len(body),
                                     http_headers=_http_headers(capture, len(body)),
                                     warc_headers_dict={**date, "WARC-Payload-Digest": digest})


def _conversion_record(writer: WARCWriter, db: Database, capture: dict[str, Any], response_id: str | None) -> Any:
    """The HTML a browser rendered from a page (docs/rendering.md), referring to the page's response."""
    body = load_body(db, capture["sha256"]) or b""
    # the page's own Content-Type: the browser's HTML is encoded in its charset (or UTF-8, which it then names)
    content_type = json.loads(capture["headers"] or "{}").get("content-type") or "text/html; charset=utf-8"
    headers = {"WARC-Date": capture["fetched_at"], "Content-Type": content_type,
               **({"WARC-Refers-To": response_id} if response_id else {})}
    return writer.create_warc_record(capture["url"], "conversion", payload=io.BytesIO(body), length=len(body),
                                     warc_headers_dict=headers)


def _request_record(writer: WARCWriter, capture: dict[str, Any], response_id: str) -> Any:
    parts = urlsplit(capture["url"])
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    headers = StatusAndHeaders(f"GET {target} HTTP/1.1", [("Host", parts.netloc), *REQUEST_HEADERS],
                               is_http_request=True)
    return writer.create_warc_record(capture["url"], "request", payload=io.BytesIO(b""), length=0, http_headers=headers,
                                     warc_headers_dict={"WARC-Date": capture["fetched_at"],
                                                        "WARC-Concurrent-To": response_id})


def check_warc(path: str) -> dict[str, Any]:
    """Read a WARC file through, storing nothing: what ``import_warc`` would find in it.

    Raises:
        ValueError: the file cannot be read as WARC, or holds no blog (no source, no HTML page).
    """
    return _read_warc(path, None)


def import_warc(db: Database, path: str) -> dict[str, Any]:
    """Save the responses of one WARC file as captures, each once; return what it held.

    Returns:
        ``captures`` saved, ``known`` (captures already in the archive),
        ``skipped`` (responses of other types), and ``sources``: the sources
        the file names (blogarchive's warcinfo), else its first page as a seed.

    Raises:
        ValueError: as ``check_warc``.
    """
    return _read_warc(path, db)


def _read_warc(path: str, db: Database | None) -> dict[str, Any]:
    result: dict[str, Any] = {"captures": 0, "known": 0, "skipped": 0, "sources": []}
    seed = None
    digests: dict[str, str] = {}  # payload digest -> sha256 of the body, for the revisit records
    try:
        with open(path, "rb") as f:
            for record in ArchiveIterator(f):
                if record.rec_type == "warcinfo":
                    result["sources"] += _named_sources(record)
                elif record.rec_type in ("response", "revisit") and record.http_headers:
                    capture = _capture_of(record, digests)
                    if capture is None:
                        result["skipped"] += 1
                        continue
                    if seed is None and _looks_like_seed(capture):
                        seed = capture["url"]
                    result["captures" if db is None or _save_once(db, capture) else "known"] += 1
    except (ArchiveLoadFailed, OSError, EOFError, ValueError) as e:
        raise ValueError(f"{path}: not a readable WARC file ({e})") from e
    if not result["sources"] and seed:
        result["sources"] = [{"url": seed}]
    if not result["sources"]:
        raise ValueError(f"{path}: no blog in this file (no HTML page to start from)")
    return result


def _named_sources(record: Any) -> list[dict[str, Any]]:
    fields = record.content_stream().read().decode("utf-8", "replace")
    for line in fields.splitlines():
        name, _, value = line.partition(":")
        if name.strip() == SOURCES_FIELD:
            return list(json.loads(value))
    return []


def _capture_of(record: Any, digests: dict[str, str]) -> dict[str, Any] | None:
    """The capture a response or revisit record holds (a revisit's with no body, only its sha256),
    or None for a type not archived or a target that is no URL."""
    url = parse_url((record.rec_headers.get_header("WARC-Target-URI") or "").strip("<>"))
    if url is None:
        return None
    http = record.http_headers
    headers: dict[str, str] = {}
    for name, value in http.headers:
        name = name.lower()
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    if any(t in headers.get("content-type", "").lower() for t in SKIPPED_TYPES):
        return None
    digest = record.rec_headers.get_header("WARC-Payload-Digest")
    body = None
    if record.rec_type == "revisit":
        sha = digests.get(digest or "")
        if sha is None:  # server-not-modified, or a body in another file
            return None
    else:
        body = _payload(record)
        sha = hashlib.sha256(body).hexdigest()
        digests[digest or payload_digest(body)] = sha
    status = int(http.get_statuscode() or 0)
    when = parse_date(record.rec_headers.get_header("WARC-Date"))
    return {"url": url, "status": status, "fetched_at": when,
            "headers": {k: v for k, v in headers.items() if k not in TRANSFER_HEADERS}, "body": body, "sha": sha}


def _payload(record: Any) -> bytes:
    """The body a response record holds, decoded. warcio decodes chunked, gzip and deflate, and br
    only with brotlipy's API; Scrapy needs Google's brotli, so br is decoded here."""
    http = record.http_headers
    if (http.get_header("content-encoding") or "").strip().lower() != "br":
        return bytes(record.content_stream().read())
    raw = record.raw_stream
    if "chunked" in (http.get_header("transfer-encoding") or "").lower():
        raw = ChunkedDataReader(raw, decomp_type=None)
    try:
        return bytes(brotli.decompress(raw.read()))
    except brotli.error as e:
        raise ValueError(f"a br body that does not decode at {record.rec_headers.get_header('WARC-Target-URI')}") from e


def _looks_like_seed(capture: dict[str, Any]) -> bool:
    """A blog's first page in a crawler's WARC: HTML, or a redirect, and not robots.txt."""
    if urlsplit(capture["url"]).path == "/robots.txt":
        return False
    return 300 <= capture["status"] < 400 or "html" in capture["headers"].get("content-type", "")


def _save_once(db: Database, capture: dict[str, Any]) -> bool:
    known = db.execute("select 1 from captures where url = ? and fetched_at = ? and sha256 = ? and status = ?",
                       [capture["url"], capture["fetched_at"], capture["sha"], capture["status"]]).fetchone()
    if known:
        return False
    body = capture["body"] if capture["body"] is not None else load_body(db, capture["sha"]) or b""
    save_capture(db, **{**capture, "body": body})
    return True

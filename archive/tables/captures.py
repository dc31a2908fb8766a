"""Raw captures: every fetched body, compressed and content-addressed.

A body is stored once in ``capture_bodies`` under its sha256 (zlib); each
fetch is a ``captures`` row with its URL, status, headers and time, so the
archive can be re-extracted later without the network.
"""

import hashlib
import json
import zlib
from typing import Any

from sqlite_utils import Database

from archive.core.db import utcnow


def body_sha256(body: bytes) -> str:
    """The key a body is stored under."""
    return hashlib.sha256(body).hexdigest()


def save_capture(
    db: Database,
    *,
    url: str,
    status: int,
    headers: dict[str, str],
    body: bytes,
    source_id: int | None = None,
    run_id: int | None = None,
    sha: str | None = None,
    fetched_at: str | None = None,
    fetched_via: str | None = None,
) -> str:
    """Store one fetch (its body only if new) and return the body's sha256 (``sha``, when the caller has it).

    ``fetched_at`` is the time of the fetch (ISO 8601 UTC), now when not given; ``fetched_via``
    is ``browser`` for the HTML a browser rendered from it (the HTTP answer is a capture of its own).
    """
    sha = sha or body_sha256(body)
    with db.atomic():
        db.execute(
            "insert or ignore into capture_bodies (sha256, size, body) values (?, ?, ?)",
            [sha, len(body), zlib.compress(body, 6)],
        )
        db.table("captures").insert(
            {
                "url": url,
                "source_id": source_id,
                "run_id": run_id,
                "status": status,
                "headers": json.dumps(headers, ensure_ascii=False, sort_keys=True),
                "sha256": sha,
                "fetched_at": fetched_at or utcnow(),
                "fetched_via": fetched_via,
            }
        )
    return sha


def stored_body(stored: bytes) -> bytes:
    """A body as ``capture_bodies`` stores it, decoded."""
    return zlib.decompress(stored)


def load_body(db: Database, sha: str) -> bytes | None:
    """A stored body by its sha256, or None."""
    row = db.execute("select body from capture_bodies where sha256 = ?", [sha]).fetchone()
    return stored_body(row[0]) if row else None


def latest_capture(db: Database, url: str, *, status: int = 200, http: bool = False) -> dict[str, Any] | None:
    """The newest capture of ``url`` with that status, its body and headers decoded (with ``http``, of
    what the server sent, not of what a browser rendered from it)."""
    rows = list(
        db.query(
            "select * from captures where url = ? and status = ?"
            f"{' and fetched_via is null' if http else ''} order by id desc limit 1",
            [url, status],
        )
    )
    if not rows:
        return None
    row = rows[0]
    row["headers"] = json.loads(row["headers"] or "{}")
    row["body"] = load_body(db, row["sha256"])
    return row

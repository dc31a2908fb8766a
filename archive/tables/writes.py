"""Idempotent writes: sources, runs, posts, pages and errors.

Posts are keyed on their canonical URL (and, within a source, on the feed's
guid), so crawling a blog twice never duplicates a post.
"""

import hashlib
import json
from typing import Any, cast
from urllib.parse import urlsplit

from sqlite_utils import Database

from archive.core.copies import COPY, outranks, text_key
from archive.core.db import utcnow
from archive.core.urls import is_http_url, normalize_url, post_url
from archive.tables.media import save_post_media

POST_FIELDS = (
    "guid",
    "title",
    "author",
    "published",
    "updated",
    "summary",
    "text",
    "markdown",
    "lang",
    "tags",
    "word_count",
    "categories",
    "conflicts",
    "protected",
)
JSON_FIELDS = ("tags", "categories", "conflicts")


def scope_of(url: str) -> str:
    """The URL prefix a blog lives under: its folder, ending in ``/``."""
    parts = urlsplit(normalize_url(url))
    path = parts.path
    if not path.endswith("/"):
        last = path.rsplit("/", 1)[-1]
        path = path.rsplit("/", 1)[0] + "/" if "." in last else path + "/"
    return f"{parts.scheme}://{parts.netloc}{path}"


def default_name(url: str) -> str:
    """A source's default name: host and path, without scheme or slashes at the end."""
    parts = urlsplit(scope_of(url))
    return (parts.netloc + parts.path).rstrip("/")


def unique_name(db: Database, url: str) -> str:
    """``default_name(url)``, or when another source has it, the URL with its file name
    (``site/feeds/b.xml``), else that with a number (``site/feeds-2``)."""
    parts = urlsplit(normalize_url(url))
    whole = (parts.netloc + parts.path).rstrip("/")
    taken = {r["name"] for r in db.query("select name from sources")}
    for name in (default_name(url), whole):
        if name not in taken:
            return name
    return next(f"{whole}-{n}" for n in range(2, len(taken) + 3) if f"{whole}-{n}" not in taken)


def ensure_source(db: Database, url: str, *, name: str | None = None) -> dict[str, Any]:
    """Return the source for ``url``, adding it when new.

    Raises:
        ValueError: ``url`` is not an absolute http(s) URL, or ``name`` is
            taken by another source.
    """
    if not is_http_url(url):
        raise ValueError(f"not an http(s) URL: {url!r}")
    url = normalize_url(url)
    existing = list(db.query("select * from sources where url = ?", [url]))
    if existing:
        return existing[0]
    if name is None:
        name = unique_name(db, url)
    elif list(db.query("select id from sources where name = ?", [name])):
        raise ValueError(f"a source named {name!r} already exists")
    with db.atomic():
        db.table("sources").insert(
            {
                "name": name,
                "url": url,
                "scope": scope_of(url),
                "enabled": 1,
                "feeds": "[]",
                "sitemaps": "[]",
                "added_at": utcnow(),
            }
        )
    return next(db.query("select * from sources where url = ?", [url]))


def update_source(db: Database, source_id: int, **fields: Any) -> None:
    """Set columns of a source; lists are stored as JSON."""
    values = {k: json.dumps(v) if isinstance(v, list) else v for k, v in fields.items()}
    with db.atomic():
        db.table("sources").update(source_id, values)


def start_run(db: Database, source_ids: list[int]) -> int:
    """Record the start of a crawl run and return its id."""
    with db.atomic():
        table = db.table("crawl_runs").insert(
            {"started_at": utcnow(), "status": "running", "sources": json.dumps(source_ids)}
        )
    return int(cast(int, table.last_pk))  # set by every insert (sqlite-utils types it optional)


def finish_run(db: Database, run_id: int, *, status: str, seconds: float, pages: int | None = None) -> None:
    """Close a run with its status and totals (post counts are kept as posts are saved; pages too, without ``pages``)."""
    with db.atomic():
        errors = db.execute(
            "select count(*) from crawl_errors where run_id = ?", [run_id]
        ).fetchone()[0]
        fields = {"finished_at": utcnow(), "status": status, "seconds": round(seconds, 3), "errors": errors}
        if pages is not None:
            fields["pages"] = pages
        db.table("crawl_runs").update(run_id, fields)


def run_status(reason: str) -> str:
    """A run's status from its crawl's finish reason (Scrapy's: ``finished``, ``shutdown``, ...)."""
    return {"finished": "finished", "shutdown": "interrupted"}.get(reason, reason)


def add_run_totals(db: Database, run_id: int, *, mode: str | None, sources: list[int], **counts: int) -> None:
    """Add one crawl process's counts (``pages``, ``requests``, ...) and sources to its run."""
    row = db.table("crawl_runs").get(run_id)
    fields: dict[str, Any] = {key: (row[key] or 0) + value for key, value in counts.items()}
    fields["sources"] = json.dumps(sorted(set(json.loads(row["sources"] or "[]")) | set(sources)))
    fields["mode"] = mode
    db.table("crawl_runs").update(run_id, fields)


def ensure_sources(db: Database, urls: list[str]) -> list[dict[str, Any]]:
    """``ensure_source`` for each URL, in one transaction."""
    with db.atomic():
        return [ensure_source(db, url) for url in urls]


def content_hash(post: dict[str, Any]) -> str:
    """Hash of what a reader sees: title and body text."""
    data = json.dumps([post.get("title"), post.get("text")], ensure_ascii=False)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def save_post(db: Database, post: dict[str, Any], *, run_id: int) -> str:
    """Insert or update one post; return ``new``, ``updated`` or ``unchanged``.

    A post whose title and text another post of its source has (``archive.core.copies``; a short text:
    with the same publication day too, ``short_text_key``) is that post: its URL becomes an alias of
    it, or, when this URL outranks the other (``outranks``: listed in a feed, then the shorter path,
    then no or a shorter query string, then the URL that sorts first), the post's own URL (the other
    an alias), whichever was saved first.
    """
    url = post_url(post["url"], post.get("guid"))
    row = {k: post.get(k) for k in POST_FIELDS}
    _check_unicode(url, row)
    for key in JSON_FIELDS:
        row[key] = json.dumps(row[key] or [], ensure_ascii=False)
    row["content_hash"] = content_hash(post)
    row["text_hash"] = text_key(post.get("title"), post.get("text")) or short_text_key(post)
    now = utcnow()
    with db.atomic():
        existing = _find_post(db, url, post["source_id"], post.get("guid"))
        if existing is not None and existing["url"] != url and _copy_alias(db, url):
            return _copy_seen(db, url, existing, run_id)  # a copy whose text has changed since: still a copy
        copy = _copy_of(db, url, post["source_id"], row["text_hash"]) if existing is None else None
        if copy is not None:
            if not outranks(url, post.get("guid"), copy["url"], copy["guid"]):
                _save_aliases(db, copy["id"], copy["url"], [{"alias": url, "why": COPY}], now)
                return _copy_seen(db, url, copy, run_id)
            # this URL is the post's own: the one it had is the copy, and what the copy gave the
            # post's history in this run is the post's first sight of it, as if it had come first
            db.execute("delete from post_aliases where alias = ?", [url])
            db.execute("delete from post_versions where post_id = ? and run_id = ?", [copy["id"], run_id])
            db.table("posts").update(copy["id"], {"url": url})
            post = {**post, "aliases": [*(post.get("aliases") or []), {"alias": copy["url"], "why": COPY}]}
            _mark_copy(db, copy["url"], url)
            existing = {**copy, "url": url}
        if existing is None:
            post_id = cast(int, db.table("posts").insert(
                {**row, "url": url, "source_id": post["source_id"], "first_seen": now, "last_seen": now}
            ).last_pk)
            outcome = "new"
        else:
            post_id = existing["id"]
            changed = any(existing[k] != row[k] for k in row if row[k] is not None)
            update = {k: v for k, v in row.items() if v is not None}
            db.table("posts").update(post_id, {**update, "last_seen": now})
            outcome = "updated" if changed else "unchanged"
        _save_aliases(db, post_id, url, post.get("aliases") or [], now)
        if post.get("media") is not None:  # None: the crawl keeps no media, the links stay as they were
            save_post_media(db, post_id, post["source_id"], post["media"])
        if post.get("provenance"):
            db.execute("delete from provenance where post_id = ?", [post_id])
            db.table("provenance").insert_all(
                {**p, "post_id": post_id, "value": _text(p["value"])} for p in post["provenance"]
            )
        db.execute(
            f"update crawl_runs set posts_{outcome} = posts_{outcome} + 1 where id = ?",
            [run_id],
        )
    return outcome


def short_text_key(post: dict[str, Any]) -> str | None:
    """The key of a text too short for ``text_key`` alone (a note of a line or two), given a title and a
    publication day: a stub's few words ("Coming soon.") are shared by posts of other titles or days,
    never by another post of the same title published the same day, which is the post itself at a
    second URL (a generator's copy, a query string the server ignores). None without a title, a day
    or any text."""
    title, text, day = post.get("title"), post.get("text"), (post.get("published") or "")[:10]
    if not (title and title.strip() and text and text.strip() and len(day) == 10):
        return None
    return "short:" + hashlib.sha256(json.dumps([" ".join(title.split()), " ".join(text.split()), day],
                                                ensure_ascii=False).encode("utf-8")).hexdigest()


def _copy_of(db: Database, url: str, source_id: int, key: str | None) -> dict[str, Any] | None:
    """The post of the source at another URL whose text is the same, if any."""
    if key is None:
        return None
    rows = list(db.query("select * from posts where source_id = ? and text_hash = ? and url != ? order by id limit 1",
                         [source_id, key, url]))
    return rows[0] if rows else None


def _copy_alias(db: Database, url: str) -> bool:
    return bool(list(db.query("select 1 from post_aliases where alias = ? and why = ?", [url, COPY])))


def _copy_seen(db: Database, url: str, post: dict[str, Any], run_id: int) -> str:
    """A copy of ``post`` read at ``url``: the post is seen, not changed; the page is recorded as the alias it is."""
    db.table("posts").update(post["id"], {"last_seen": utcnow()})
    _mark_copy(db, url, post["url"])
    db.execute("update crawl_runs set posts_unchanged = posts_unchanged + 1 where id = ?", [run_id])
    return "unchanged"


def _mark_copy(db: Database, url: str, canonical: str) -> None:
    db.execute("update pages set kind = 'alias', reason = ? where url = ?", [f"{COPY} as {canonical}", url])


def _check_unicode(url: str, row: dict[str, Any]) -> None:
    """SQLite stores UTF-8: text that cannot be encoded is refused whole, never mangled."""
    for key, value in row.items():
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str):
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError as e:
                    raise ValueError(f"{key} of {url} is not valid Unicode ({e.reason}): not saved") from e


def _save_aliases(db: Database, post_id: int, url: str, aliases: list[dict[str, str]], now: str) -> None:
    for alias in aliases:
        alias_url = normalize_url(alias["alias"])
        if alias_url != url:
            db.execute(
                "insert into post_aliases (alias, post_id, why, first_seen) values (?, ?, ?, ?) "
                "on conflict (alias) do update set post_id = excluded.post_id, why = excluded.why",
                [alias_url, post_id, alias["why"], now],
            )


def save_alias(db: Database, alias: str, url: str, why: str) -> bool:
    """Record that ``alias`` leads to the post at ``url``; False when there is no such post (yet)."""
    rows = list(db.query("select id from posts where url = ?", [normalize_url(url)]))
    if rows:
        with db.atomic():
            _save_aliases(db, rows[0]["id"], normalize_url(url), [{"alias": alias, "why": why}], utcnow())
    return bool(rows)


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False) if isinstance(value, list) else str(value)


def _find_post(db: Database, url: str, source_id: int, guid: str | None) -> dict[str, Any] | None:
    rows = list(db.query("select * from posts where url = ?", [url]))
    if not rows:
        rows = list(db.query(
            "select p.* from post_aliases a join posts p on p.id = a.post_id where a.alias = ?", [url]))
    if not rows and guid:
        rows = list(
            db.query("select * from posts where source_id = ? and guid = ?", [source_id, guid])
        )
    return rows[0] if rows else None


def save_page(db: Database, page: dict[str, Any], *, run_id: int) -> None:
    """Record what the classifier decided about one fetched page."""
    with db.atomic():
        db.table("pages").upsert(
            {**page, "url": normalize_url(page["url"]), "last_run_id": run_id, "fetched_at": utcnow()},
            pk="url",
        )


def save_error(
    db: Database, *, run_id: int, source_id: int | None, url: str | None, kind: str, message: str
) -> None:
    """Record one failure of a run."""
    with db.atomic():
        db.table("crawl_errors").insert(
            {
                "run_id": run_id,
                "source_id": source_id,
                "url": url,
                "kind": kind,
                "message": message,
                "at": utcnow(),
            }
        )

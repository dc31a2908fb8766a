"""A post's history: one version per distinct content, deletions and returns.

A version is recorded when a saved post differs from its latest version
(never for an unchanged refetch), classified by what changed: ``title``,
``text`` (with the number of lines added and removed), ``title+text``,
``metadata`` (author, dates, summary, tags only); ``new`` for the first one
and ``restored`` when a post marked gone comes back. Each version is also graded
(``typo``, ``edit``, ``title``, ``retraction``, ``new``: ``archive.tables.grades``), with
the share of its text changed and a short word diff.
"""

import difflib
import hashlib
import json
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from sqlite_utils import Database

from archive.core.db import utcnow
from archive.core.urls import normalize_url
from archive.tables.grades import grade_change

VERSION_FIELDS = ("title", "author", "published", "updated", "summary", "tags", "text", "markdown")


class NoPost(ValueError):
    """No post has that URL."""


def version_hash(post: dict[str, Any]) -> str:
    data = json.dumps([post.get(k) for k in VERSION_FIELDS], ensure_ascii=False)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def diff_lines(old: str | None, new: str | None) -> int:
    """Lines added plus lines removed between two texts."""
    diff = difflib.unified_diff((old or "").splitlines(), (new or "").splitlines(), lineterm="", n=0)
    return sum(1 for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---"))


def classify(old: dict[str, Any], new: dict[str, Any]) -> tuple[str, list[str]]:
    """What kind of change leads from version ``old`` to post ``new``, and the fields changed."""
    changed = [k for k in VERSION_FIELDS if old.get(k) != new.get(k)]
    body = "text" in changed or "markdown" in changed
    if "title" in changed and body:
        return "title+text", changed
    if "title" in changed:
        return "title", changed
    if body:
        return "text", changed
    return "metadata", changed


def record_version(db: Database, url: str, *, run_id: int | None) -> str | None:
    """Record the post's current content as a version when it is new, changed or back.

    Returns:
        The kind of change recorded, or None when the post is as its latest version.
    """
    post = _post(db, url)
    latest = list(db.query("select * from post_versions where post_id = ? order by id desc limit 1", [post["id"]]))
    sha = version_hash(post)
    restored = post["gone_at"] is not None
    if latest and latest[0]["sha256"] == sha and not restored:
        return None
    if not latest:
        change, changed = "new", list(VERSION_FIELDS)
    else:
        change, changed = classify(latest[0], post)
        if restored:
            change = "restored" if not changed else f"restored, {change}"
    grade, share, word_diff = grade_change(latest[0] if latest else None, post)
    with db.atomic():
        db.table("post_versions").insert(
            {
                "post_id": post["id"],
                "run_id": run_id,
                "sha256": sha,
                "captured_at": utcnow(),
                "change": change,
                "grade": grade,
                "changed_share": share,
                "word_diff": word_diff,
                "diff_lines": diff_lines(latest[0]["text"] if latest else "", post["text"]),
                "changed": json.dumps(changed),
                **{k: post[k] for k in VERSION_FIELDS},
            }
        )
        if restored:
            db.table("posts").update(post["id"], {"gone_at": None})
    return change


def mark_gone(db: Database, url: str) -> bool:
    """Note that a post answered 404/410; its content stays. True when it was live until now."""
    with db.atomic():
        cursor = db.execute(
            "update posts set gone_at = ? where url = ? and gone_at is null", [utcnow(), normalize_url(url)]
        )
    return cursor.rowcount > 0


def list_versions(db: Database, url: str) -> list[dict[str, Any]]:
    """The post's versions, oldest first, each with its ``number`` among them (from 1): the one numbering of
    a post's versions that ``history`` shows, takes and diffs.

    Raises:
        NoPost: no post has that URL (``find_post``).
    """
    post = find_post(db, url)
    rows = db.query("select * from post_versions where post_id = ? order by id", [post["id"]])
    return [{**row, "number": n} for n, row in enumerate(rows, 1)]


def diff_versions(old: dict[str, Any], new: dict[str, Any]) -> str:
    """A unified diff of two versions' (of ``list_versions``) titles and Markdown."""
    def lines(v: dict[str, Any]) -> list[str]:
        return [f"# {v['title'] or ''}", "", *(v["markdown"] or v["text"] or "").splitlines()]

    return "\n".join(
        difflib.unified_diff(
            lines(old), lines(new), f"version {old['number']} ({old['captured_at']})",
            f"version {new['number']} ({new['captured_at']})", lineterm="",
        )
    )


def find_post(db: Database, url: str) -> dict[str, Any]:
    """The post at ``url`` or at an alias of it (a redirect, a copy), whatever its scheme, trailing slash
    or tracking parameters: the URL as given first, then its other forms.

    Raises:
        NoPost: no post has any of these URLs.
    """
    for form in _forms(normalize_url(url)):
        rows = list(db.query("select * from posts where url = ?", [form])) or list(db.query(
            "select p.* from post_aliases a join posts p on p.id = a.post_id where a.alias = ?", [form]))
        if rows:
            return rows[0]
    raise NoPost(f"no post at {url}")


def _forms(url: str) -> list[str]:
    """A normal URL, then it with the trailing slash added or taken off, then both over the other scheme."""
    parts = urlsplit(url)
    paths = [parts.path] if parts.path == "/" else [parts.path, parts.path[:-1] if parts.path.endswith("/") else f"{parts.path}/"]
    schemes = [parts.scheme, "https" if parts.scheme == "http" else "http"]
    return [urlunsplit(parts._replace(scheme=scheme, path=path)) for scheme in schemes for path in paths]


def _post(db: Database, url: str) -> dict[str, Any]:
    rows = list(db.query("select * from posts where url = ?", [normalize_url(url)]))
    if not rows:
        raise NoPost(f"no post at {url}")
    return rows[0]

"""Notifications: the archive's changes told through Apprise after a crawl has committed them.

A target is an Apprise URL, for the whole archive or one source, with the least grade it hears of
(``archive.tables.grades``; ``new`` and ``gone`` always) and how it is told: one message per post,
or a digest (``run``: one a run; ``daily``: one a day at most, the changes waiting till then).
The targets are kept in ``ARCHIVE.notify.json`` beside the archive, readable by its owner only:
never in the archive, whose every table Datasette shows and ``export`` and ``backup`` copy. The
archive holds only their delivery state (``notify_state``, keyed by the target's id, a hash of its
URL): the last version and the last time a post went gone told, and the last error, redacted. A
target whose delivery fails keeps its state: the next run tells it everything since.

A generic JSON webhook (``json://``, ``jsons://``) gets Apprise's JSON document, whose ``message``
is itself a JSON object (``item``): url, title, grade, changed_share, diff, version_id, source, at.
Apprise is imported only when a message is sent or a target shown.
"""

import hashlib
import json
import logging
import os
import re
import urllib.parse
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from archive.core.db import open_archive, utcnow, writing
from archive.tables.grades import GRADES, rank

DIGESTS = ("run", "daily")
JSON_SCHEMES = ("json", "jsons")
SECRET_CHARS = 4  # the shortest piece of a URL masked in an error message
_SERVER = re.compile(r"(?:[\w-]+\.)+[a-z]{2,}|\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-f:]+\]", re.I)


@dataclass
class Target:
    url: str
    source: str | None = None
    min_grade: str = GRADES[0]
    digest: str | None = None

    @property
    def id(self) -> str:
        return hashlib.sha256(self.url.encode()).hexdigest()[:12]

    def shown(self) -> str:
        return redact(self.url)


@dataclass
class Delivery:
    target: Target
    error: str | None  # redacted; None: sent, or nothing to send


def config_path(db_path: str | os.PathLike[str]) -> Path:
    return Path(f"{db_path}.notify.json")


def load_targets(db_path: str | os.PathLike[str]) -> list[Target]:
    path = config_path(db_path)
    if not path.exists():
        return []
    return [Target(**t) for t in json.loads(path.read_text(encoding="utf-8"))["targets"]]


def save_targets(db_path: str | os.PathLike[str], targets: list[Target]) -> None:
    """Write the targets, readable and writable by the owner only (0600), replacing the file whole."""
    path = config_path(db_path)
    temporary = path.with_name(path.name + ".tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump({"targets": [asdict(t) for t in targets]}, f, indent=1)
    os.replace(temporary, path)


def redact(url: str) -> str:
    """A URL as it may be shown: its scheme and its server when that is a host name or an address,
    nothing else (the user, password, path and query of a webhook or a token in the host's place)."""
    scheme, _, rest = url.partition("://")
    host = re.split(r"[/?#]", rest, maxsplit=1)[0].rpartition("@")[2]
    name, _, port = host.partition(":") if not host.startswith("[") else (host, "", "")
    shown = name + (f":{port}" if port.isdigit() else "") if _SERVER.fullmatch(name) else "…"
    return f"{scheme.lower()}://{shown}/…"


def redact_text(text: str, urls: list[str]) -> str:
    """``text`` with every piece of ``urls`` that ``redact`` hides masked."""
    for url in urls:
        shown = redact(url)
        pieces = {url, *re.split(r"[:/?#@&=+]", url.partition("://")[2])}
        pieces |= {urllib.parse.unquote(p) for p in pieces}
        for piece in sorted(pieces, key=len, reverse=True):
            if len(piece) >= SECRET_CHARS and piece not in shown:
                text = text.replace(piece, "***")
    return text


def check_url(url: str) -> None:
    """Refuse a URL Apprise cannot send to (ValueError, saying nothing of the URL but its scheme)."""
    import apprise

    if apprise.Apprise.instantiate(url) is None:
        raise ValueError(f"not a URL Apprise can send to: {redact(url)} (see Apprise's list of services)")


def add_target(db: Database, db_path: str | os.PathLike[str], target: Target) -> None:
    """Add or replace a target; it hears of the changes after this moment, not the archive's past."""
    check_url(target.url)
    with writing(db):  # a busy archive refuses it before the targets' file is written
        last_version = db.execute("select coalesce(max(id), 0) from post_versions").fetchone()[0]
        last_gone = db.execute("select coalesce(max(gone_at), '') from posts").fetchone()[0]
        _state_table(db).upsert({"target": target.id, "last_version_id": last_version, "last_gone_at": last_gone,
                                 "last_sent_at": None, "last_error": None, "last_error_at": None}, pk="target")
        save_targets(db_path, [*(t for t in load_targets(db_path) if t.id != target.id), target])


def remove_target(db: Database, db_path: str | os.PathLike[str], key: str) -> Target | None:
    """Remove the target of id, URL or place in the list (from 1) ``key``; None when none is."""
    targets = load_targets(db_path)
    found = next((t for i, t in enumerate(targets, 1) if key in (t.id, t.url, str(i))), None)
    if found:
        with writing(db):
            if db["notify_state"].exists():
                db.execute("delete from notify_state where target = ?", [found.id])
            save_targets(db_path, [t for t in targets if t is not found])
    return found


def states(db: Database) -> dict[str, dict[str, Any]]:
    if not db["notify_state"].exists():
        return {}
    return {row["target"]: row for row in db["notify_state"].rows}


def deliver(db: Database, db_path: str | os.PathLike[str], *, now: datetime | None = None) -> list[Delivery]:
    """Tell each target what changed since its state, advancing the state over what was sent."""
    targets = load_targets(db_path)
    now = now or datetime.now(timezone.utc)
    known = states(db)
    return [_deliver(db, target, known.get(target.id), now) for target in targets]


def deliver_after_crawl(db_path: str | os.PathLike[str]) -> str | None:
    """``deliver`` for ``blogarchive crawl``: it never raises; a line to print when a target failed."""
    targets: list[Target] = []
    try:
        targets = load_targets(db_path)
        if not targets:
            return None
        db = open_archive(db_path)
        try:
            failed = [d for d in deliver(db, db_path) if d.error]
        finally:
            db.close()
    except Exception as e:  # noqa: BLE001  the crawl's outcome stands, whatever notifying met
        return f"Warning: notifications not sent: {redact_text(f'{type(e).__name__}: {e}', [t.url for t in targets])}"
    if failed:
        return (f"Warning: {len(failed)} notification target(s) failed, retried on the next run "
                f"(blogarchive notify list: {failed[-1].target.id}: {failed[-1].error})")
    return None


def send_test(db: Database, target: Target) -> str | None:
    """Send ``target`` a test message, the archive's latest change of its source as a sample; the error."""
    sample = _versions(db, target, 0, newest=True) or [{}]
    item = {"test": True, **sample[0]}
    return _send(target, f"blogarchive test: {_headline(item)}", [item])


def _deliver(db: Database, target: Target, state: dict[str, Any] | None, now: datetime) -> Delivery:
    last_version = state["last_version_id"] if state else 0
    last_gone = state["last_gone_at"] if state else ""
    if target.digest == "daily" and state and state["last_sent_at"]:
        if now - _parse(state["last_sent_at"]) < timedelta(days=1):
            return Delivery(target, None)
    versions = _versions(db, target, last_version)
    seen = db.execute("select coalesce(max(id), ?) from post_versions", [last_version]).fetchone()[0]
    gone = _gone(db, target, last_gone)
    told = [v for v in versions if rank(v["grade"]) >= rank(target.min_grade)] + gone
    sent, error, new_version, new_gone = 0, None, last_version, last_gone
    if told and target.digest:
        error = _send(target, f"blogarchive: {len(told)} changes", told)
        sent = 0 if error else 1
    else:
        for item in told:  # the state follows each message sent: a failure leaves the rest for the next run
            error = _send(target, _headline(item), [item])
            if error:
                break
            sent += 1
            new_version, new_gone = item["version_id"] or new_version, item["at"] if item["grade"] == "gone" else new_gone
    if not error:
        new_version, new_gone = seen, max([last_gone, *(g["at"] for g in gone)])
    record: dict[str, Any] = {"target": target.id, "last_version_id": new_version, "last_gone_at": new_gone}
    if sent:
        record["last_sent_at"] = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    if error:
        record |= {"last_error": error, "last_error_at": utcnow()}
    elif told:
        record |= {"last_error": None, "last_error_at": None}
    _state_table(db).upsert(record, pk="target")
    return Delivery(target, error)


def _versions(db: Database, target: Target, after: int, *, newest: bool = False) -> list[dict[str, Any]]:
    """The versions of ``target``'s sources after version ``after``, oldest first; ``newest``: the last one only."""
    rows = db.query(
        "select v.id as version_id, p.url, v.title, v.grade, v.changed_share, v.word_diff as diff, s.name as source,"
        " v.captured_at as at from post_versions v join posts p on p.id = v.post_id"
        " join sources s on s.id = p.source_id where v.id > ? and (? is null or s.name = ?)"
        + (" order by v.id desc limit 1" if newest else " order by v.id"),
        [after, target.source, target.source],
    )
    return list(rows)


def _gone(db: Database, target: Target, after: str) -> list[dict[str, Any]]:
    rows = db.query(
        "select null as version_id, p.url, p.title, 'gone' as grade, null as changed_share, null as diff,"
        " s.name as source, p.gone_at as at from posts p join sources s on s.id = p.source_id"
        " where p.gone_at > ? and (? is null or s.name = ?) order by p.gone_at, p.id",
        [after, target.source, target.source],
    )
    return list(rows)


def _headline(item: dict[str, Any]) -> str:
    return f"{item.get('grade', 'test')}: {item.get('title') or item.get('url') or 'blogarchive'}"


def _text(item: dict[str, Any]) -> str:
    share = f", {item['changed_share']:.0%} of the text changed" if item.get("changed_share") is not None else ""
    lines = [_headline(item) + share, item.get("url") or "", item.get("diff") or "",
             f"version {item['version_id']}" if item.get("version_id") else ""]
    return "\n".join(line for line in lines if line)


def _send(target: Target, title: str, items: list[dict[str, Any]]) -> str | None:
    """Send one message of ``items``; the error, redacted, or None."""
    import apprise

    if target.url.partition("://")[0].lower() in JSON_SCHEMES:
        body = json.dumps(items[0] if len(items) == 1 and not target.digest else {"digest": target.digest, "changes": items},
                          ensure_ascii=False)
    else:
        body = "\n\n".join(_text(item) for item in items)
    notifier = apprise.Apprise()
    logger = logging.getLogger("apprise")
    propagate, logger.propagate = logger.propagate, False  # Apprise's own messages name hosts and paths
    try:
        with apprise.LogCapture(level=logging.WARNING) as logs:
            ok = notifier.add(target.url) and notifier.notify(body=body, title=title)
        said = [line for line in logs.getvalue().splitlines() if line.strip()]
    except Exception as e:  # noqa: BLE001  a plugin's error is the target's, not the crawl's
        ok, said = False, [f"{type(e).__name__}: {e}"]
    finally:
        logger.propagate = propagate
    if ok:
        return None
    return redact_text(said[-1].split(" - ", 2)[-1] if said else "not sent", [target.url])[:300]


def _state_table(db: Database) -> Any:
    table = db.table("notify_state")
    if not table.exists():
        table.create({"target": str, "last_version_id": int, "last_gone_at": str, "last_sent_at": str,
                      "last_error": str, "last_error_at": str}, pk="target")
    return table


def _parse(stamp: str) -> datetime:
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)

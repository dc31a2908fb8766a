"""What to fetch again, and how: validators per URL, hosts, the revisit policy.

``fetches`` keeps what the last fetch of each URL said (ETag, Last-Modified,
body hash, freshness); ``hosts`` the hosts whose validators lie or that asked
to be left alone. The revisit policy says how often a known post is checked,
by its age: ``7d:0,90d:1d,*:7d`` is "posts younger than 7 days every run,
younger than 90 days once a day, the others once a week".
"""

import re
from datetime import datetime, timedelta, timezone
from typing import Any

from sqlite_utils import Database

from archive.core.db import utcnow

DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smhdw]?)$")
UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
DEFAULT_POLICY = "7d:0,90d:1d,*:7d"


def parse_duration(text: str) -> float:
    """Seconds in ``90``, ``30m``, ``12h``, ``7d`` or ``2w``.

    Raises:
        ValueError: not such a duration.
    """
    match = DURATION.match(text.strip().lower())
    if not match:
        raise ValueError(f"not a duration (such as 30m, 12h, 7d): {text!r}")
    return float(match.group(1)) * UNITS[match.group(2)]


def parse_policy(text: str) -> list[tuple[float, float]]:
    """Read a revisit policy: ``AGE:INTERVAL`` pairs, the last one's age ``*``.

    Returns:
        ``(max_age, interval)`` pairs in seconds, ``inf`` for ``*``.

    Raises:
        ValueError: a malformed policy.
    """
    rules = []
    for part in text.split(","):
        age, sep, interval = part.partition(":")
        if not sep:
            raise ValueError(f"a revisit policy is AGE:INTERVAL,...,*:INTERVAL, as in {DEFAULT_POLICY}, not {text!r}")
        rules.append((float("inf") if age.strip() == "*" else parse_duration(age), parse_duration(interval)))
    if not rules or rules[-1][0] != float("inf"):
        raise ValueError(f"a revisit policy ends with *:INTERVAL, as in {DEFAULT_POLICY}: {text!r}")
    return sorted(rules)


def revisit_interval(rules: list[tuple[float, float]], age: float) -> float:
    """Seconds between two checks of a post ``age`` seconds old."""
    return next(interval for max_age, interval in rules if age < max_age)


POSTS_SQL = """select p.url, coalesce(p.published, p.first_seen) as born,
  coalesce(f.checked_at, p.last_seen) as checked
from posts p left join fetches f on f.url = p.url
where p.source_id = ? order by checked"""


def is_due(rules: list[tuple[float, float]], born: str | None, checked: str | None, now: datetime | None = None) -> bool:
    """Whether a post born (published, else first seen) and last checked at these ISO 8601 times is due."""
    now = now or datetime.now(timezone.utc)
    age = (now - _parse(born, now)).total_seconds()
    since = (now - _parse(checked, now)).total_seconds()
    return since >= revisit_interval(rules, max(age, 0))


def due_posts(db: Database, source_id: int, rules: list[tuple[float, float]], *, everything: bool = False) -> list[str]:
    """URLs of the source's posts that the policy says to check in this run, oldest check first."""
    now = datetime.now(timezone.utc)
    return [r["url"] for r in db.query(POSTS_SQL, [source_id])
            if everything or is_due(rules, r["born"], r["checked"], now)]


def revisit_summary(db: Database, source: dict[str, Any], default_policy: str = DEFAULT_POLICY) -> dict[str, Any]:
    """How the revisit policy stands for a source: its policy, posts, how many are due in the next
    run, and the oldest and latest of its posts' last checks."""
    policy = source.get("revisit") or default_policy
    rules = parse_policy(policy)
    now = datetime.now(timezone.utc)
    checks = [(r["checked"], is_due(rules, r["born"], r["checked"], now)) for r in db.query(POSTS_SQL, [source["id"]])]
    known = [c for c, _ in checks if c]
    return {"policy": policy, "posts": len(checks), "due": sum(due for _, due in checks),
            "oldest_check": min(known, default=None), "latest_check": max(known, default=None)}


def _parse(value: str | None, default: datetime) -> datetime:
    if not value:
        return default
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def get_fetch(db: Database, url: str) -> dict[str, Any] | None:
    """What the last fetch of ``url`` said, or None."""
    rows = list(db.query("select * from fetches where url = ?", [url]))
    return rows[0] if rows else None


def save_fetch(db: Database, url: str, **fields: Any) -> None:
    """Record what a fetch of ``url`` said (only the fields given change)."""
    with db.atomic():
        db.table("fetches").upsert({"url": url, **fields}, pk="url")


def mark_processed(db: Database, url: str, sha: str) -> None:
    """Every item from the body ``sha`` of ``url`` is archived."""
    with db.atomic():
        db.execute("update fetches set processed = ? where url = ?", [sha, url])


def get_host(db: Database, host: str) -> dict[str, Any]:
    """A host's row (``validators`` ok or broken, ``not_before``), defaults when unknown."""
    rows = list(db.query("select * from hosts where host = ?", [host]))
    return rows[0] if rows else {"host": host, "validators": "ok", "reason": None, "not_before": None}


def note_host(db: Database, host: str, **fields: Any) -> None:
    """Record something learnt about a host: broken validators and why, or a Retry-After."""
    with db.atomic():
        db.table("hosts").upsert({"host": host, **fields, "noted_at": utcnow()}, pk="host")


def in_future(value: str | None, *, slack: float = 0) -> bool:
    """True when the ISO 8601 UTC time ``value`` is later than now plus ``slack`` seconds."""
    if not value:
        return False
    return _parse(value, datetime.now(timezone.utc)) > datetime.now(timezone.utc) + timedelta(seconds=slack)


def later(seconds: float) -> str:
    """ISO 8601 UTC time ``seconds`` from now."""
    return (datetime.now(timezone.utc) + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def start_source_crawl(db: Database, source_id: int) -> None:
    """The source is being crawled (a run that dies leaves it so: the next one resumes)."""
    with db.atomic():
        db.table("sources").update(source_id, {"run_state": "running"})


def finish_source_crawl(db: Database, source_id: int, *, finished: bool, complete: bool) -> None:
    """The run ended for the source; a finished complete crawl makes the next runs incremental."""
    values: dict[str, Any] = {"run_state": "done" if finished else "interrupted"}
    if complete:
        values["complete_at"] = utcnow()
    with db.atomic():
        db.table("sources").update(source_id, values)

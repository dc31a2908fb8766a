"""``blogarchive notify add``, ``list``, ``test`` and ``remove``: who hears of a crawl's changes (``archive.notify``).

A target's URL holds its secrets: it is shown only redacted, and kept beside the archive, never in it.
"""

import click

from archive import notify
from archive.cli.common import ConfigError, check_source, db_option, open_db, require_archive
from archive.tables.grades import GRADES

LIST_HEADER = ("id", "target", "source", "min grade", "digest", "last sent", "last error")


@click.group("notify")
def notify_() -> None:
    """Tell Apprise targets (e-mail, ntfy, Matrix, Slack, a JSON webhook...) what a crawl changed."""


@notify_.command("add")
@click.argument("url")
@click.option("--source", help="Only this source's changes (default: every source's).")
@click.option("--min-grade", type=click.Choice(GRADES), default=GRADES[0], show_default=True,
              help="The least change told; new posts and posts gone always are.")
@click.option("--digest", type=click.Choice(notify.DIGESTS),
              help="One message a run (run) or a day at most (daily), instead of one a post.")
@db_option
def add(url: str, source: str | None, min_grade: str, digest: str | None, db_path: str) -> None:
    """Add an Apprise URL as a target: it hears of the changes of the crawls from now on."""
    db = open_db(db_path)
    try:
        check_source(db, source)
        target = notify.Target(url, source, min_grade, digest)
        notify.add_target(db, db_path, target)
    except ValueError as e:
        raise ConfigError(str(e)) from e
    finally:
        db.close()
    click.echo(f"target {target.id}: {target.shown()}")


@notify_.command("list")
@db_option
def list_(db_path: str) -> None:
    """The targets, their URLs redacted, and how their last delivery went."""
    db = open_db(db_path, read_only=True)
    try:
        states = notify.states(db)
    finally:
        db.close()
    click.echo("\t".join(LIST_HEADER))
    for target in notify.load_targets(db_path):
        state = states.get(target.id) or {}
        click.echo("\t".join([target.id, target.shown(), target.source or "all", target.min_grade,
                              target.digest or "-", state.get("last_sent_at") or "-", state.get("last_error") or "-"]))


@notify_.command("test")
@click.argument("target", required=False)
@db_option
def test(target: str | None, db_path: str) -> None:
    """Send each target (or the one of this id) a test message now: the latest change as a sample.
    Exits 1 when one failed."""
    require_archive(db_path)
    targets = [t for t in notify.load_targets(db_path) if target in (None, t.id)]
    if not targets:
        raise ConfigError(f"no notify target {target}" if target else "no notify target (blogarchive notify add URL)")
    db = open_db(db_path)
    try:
        errors = {t.id: notify.send_test(db, t) for t in targets}
    finally:
        db.close()
    for t in targets:
        click.echo(f"{t.id} {t.shown()}: " + (f"failed: {errors[t.id]}" if errors[t.id] else "sent"))
    if any(errors.values()):
        raise SystemExit(1)


@notify_.command("remove")
@click.argument("target")
@db_option
def remove(target: str, db_path: str) -> None:
    """Remove a target, by its id (see notify list), its place in the list or its URL."""
    db = open_db(db_path)
    try:
        removed = notify.remove_target(db, db_path, target)
    finally:
        db.close()
    if not removed:
        raise ConfigError("no such notify target (see blogarchive notify list)")
    click.echo(f"removed {removed.id}: {removed.shown()}")

"""``blogarchive extract`` and ``reextract``: the crawl's own extraction, offline, on saved pages or on
the archive's captures; run in this process, importing the extraction only when asked for."""

import json
import sys

import click

from archive.cli.common import check_source, db_option, open_db, require_archive
from archive.core.lock import acquire_lock, release_lock

EXTRACT_FIELDS = ("title", "author", "published", "updated", "tags", "lang")


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, readable=True))
@click.option("--url", help="The URL the page was saved from.")
@click.option("--format", "fmt", type=click.Choice(["json", "ndjson", "text", "markdown"]), default="json", show_default=True)
def extract(files: tuple[str, ...], url: str | None, fmt: str) -> None:
    """Extract posts from saved HTML files, offline, as the crawler does."""
    from crawler.extract.offline import extract_file  # trafilatura: only when asked for

    results = [extract_file(path, url) for path in files]
    failed = [r for r in results if "error" in r]
    for r in failed:
        click.echo(f"Error: {r['file']}: {r['error']}", err=True)
    ok = [r for r in results if "error" not in r]
    if fmt == "json":
        click.echo(json.dumps(ok if len(files) > 1 else (ok[0] if ok else None), ensure_ascii=False, indent=2))
    elif fmt == "ndjson":
        for r in ok:
            click.echo(json.dumps(r, ensure_ascii=False))
    else:
        for r in ok:
            header = "\n".join(f"{k}: {json.dumps(r[k], ensure_ascii=False) if k == 'tags' else r[k]}" for k in EXTRACT_FIELDS if r.get(k))
            body = r["markdown"] if fmt == "markdown" else r["text"]
            click.echo(f"---\n{header}\n---\n{body}\n" if fmt == "markdown" else f"{body}\n")
    if failed:
        sys.exit(1)


@click.command()
@click.option("--source", "source_name", help="Only this source's posts.")
@click.option("--dry-run", is_flag=True, help="Report what would change; save nothing.")
@db_option
def reextract(source_name: str | None, dry_run: bool, db_path: str) -> None:
    """Extract every post again from its raw capture with the current code, offline; report changes."""
    require_archive(db_path)
    lock, _ = acquire_lock(db_path)
    from crawler.extract.reextract import reextract as extract_again  # trafilatura: only when asked for

    db = open_db(db_path)
    try:
        check_source(db, source_name)
        results = list(extract_again(db, source=source_name, dry_run=dry_run))
    except ValueError as e:
        raise click.ClickException(f"re-extraction failed: {e}") from e
    finally:
        db.close()
        release_lock(lock)
    for r in results[:-1]:
        if "error" in r:
            click.echo(f"Error: {r['url']}: {r['error']}", err=True)
        else:
            click.echo(f"{r['url']}\t{', '.join(r['changed'])}" + (f"\t{r['change']}" if r.get("change") else ""))
    summary = results[-1]
    verb = "would change" if dry_run else "changed"
    click.echo(f"{summary['posts']} posts re-extracted offline, {summary['changed']} {verb}")

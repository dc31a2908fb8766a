"""The archive's schema, as ordered sqlite-utils migrations.

Each function is one change, named for what it does; a shipped migration is
never edited, a new one is appended instead.
"""

from sqlite_utils import Database, Migrations

migrations = Migrations("blogarchive")


@migrations()
def create_core_tables(db: Database) -> None:
    db["sources"].create(
        {
            "id": int,
            "name": str,  # short unique name, the host (and path) by default
            "url": str,  # the URL the user gave: home page, feed or sitemap
            "scope": str,  # URL prefix that bounds the crawl
            "kind": str,  # home, feed or sitemap (what the URL turned out to be)
            "enabled": int,
            "feeds": str,  # JSON array of feed URLs found
            "sitemaps": str,  # JSON array of sitemap URLs found
            "added_at": str,
            "last_crawl_at": str,
            "last_status": str,
        },
        pk="id",
        not_null={"name", "url", "scope", "enabled"},
        defaults={"enabled": 1, "feeds": "[]", "sitemaps": "[]"},
    )
    db["sources"].create_index(["name"], unique=True)
    db["sources"].create_index(["url"], unique=True)
    db["crawl_runs"].create(
        {
            "id": int,
            "started_at": str,
            "finished_at": str,
            "status": str,  # running, finished, failed, interrupted
            "sources": str,  # JSON array of source ids
            "pages": int,
            "posts_new": int,
            "posts_updated": int,
            "posts_unchanged": int,
            "errors": int,
            "seconds": float,
        },
        pk="id",
        defaults={
            "pages": 0,
            "posts_new": 0,
            "posts_updated": 0,
            "posts_unchanged": 0,
            "errors": 0,
        },
    )
    db["posts"].create(
        {
            "id": int,
            "source_id": int,
            "url": str,  # canonical URL, normalised
            "guid": str,
            "title": str,
            "author": str,
            "published": str,  # ISO 8601, UTC
            "updated": str,  # ISO 8601, UTC
            "summary": str,
            "text": str,
            "markdown": str,
            "lang": str,
            "tags": str,  # JSON array of strings
            "word_count": int,
            "content_hash": str,
            "first_seen": str,
            "last_seen": str,
        },
        pk="id",
        not_null={"source_id", "url"},
        foreign_keys=[("source_id", "sources", "id")],
    )
    db["posts"].create_index(["url"], unique=True)
    db["posts"].create_index(["source_id", "published"])
    db["posts"].create_index(["guid"])
    db["crawl_errors"].create(
        {
            "id": int,
            "run_id": int,
            "source_id": int,
            "url": str,
            "kind": str,  # http, network, parse, extract, robots, ...
            "message": str,
            "at": str,
        },
        pk="id",
        foreign_keys=[("run_id", "crawl_runs", "id"), ("source_id", "sources", "id")],
    )
    db["crawl_errors"].create_index(["run_id"])


@migrations()
def create_pages_table(db: Database) -> None:
    # Every HTML page fetched and what the classifier decided about it, so a
    # reader can see why a page is, or is not, a post.
    db["pages"].create(
        {
            "url": str,
            "source_id": int,
            "kind": str,  # post, listing, page, alias
            "reason": str,
            "last_run_id": int,
            "fetched_at": str,
        },
        pk="url",
        foreign_keys=[("source_id", "sources", "id")],
    )
    db["pages"].create_index(["source_id", "kind"])


@migrations()
def enable_posts_search(db: Database) -> None:
    # A trigram index finds words of three or more characters in any script,
    # Chinese included; shorter queries fall back to LIKE (see queries.search).
    db["posts"].enable_fts(["title", "text"], create_triggers=True, tokenize="trigram")


@migrations()
def add_post_provenance_and_aliases(db: Database) -> None:
    db["posts"].add_column("categories", str, not_null_default="[]")
    db["posts"].add_column("conflicts", str, not_null_default="[]")
    # Every other URL that led to a post: redirects, meta refresh, rel=canonical, feed links.
    db["post_aliases"].create(
        {"alias": str, "post_id": int, "why": str, "first_seen": str},
        pk="alias",
        foreign_keys=[("post_id", "posts", "id")],
    )
    db["post_aliases"].create_index(["post_id"])
    # Every metadata candidate of a post and where it came from; chosen = 1 for the winner.
    db["provenance"].create(
        {"id": int, "post_id": int, "field": str, "value": str, "origin": str, "chosen": int},
        pk="id",
        foreign_keys=[("post_id", "posts", "id")],
    )
    db["provenance"].create_index(["post_id", "field"])


def ensure_schema(db: Database) -> None:
    """Create or upgrade the archive's tables; a no-op when up to date."""
    migrations.apply(db)

"""The archive's schema, as ordered sqlite-utils migrations.

Each function is one change, named for what it does; a shipped migration is
never edited, a new one is appended instead.
"""

from sqlite_utils import Database, Migrations

from archive.core.copies import text_key
from archive.core.langs import iso639_1
from archive.search.index import register_functions

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


@migrations()
def add_incremental_crawling(db: Database) -> None:
    # Raw captures: every fetched body once, zlib-compressed, keyed by its
    # sha256; one row per fetch with its URL, status, headers and time.
    db["capture_bodies"].create(
        {"sha256": str, "size": int, "body": bytes}, pk="sha256", not_null={"body"}
    )
    db["captures"].create(
        {
            "id": int,
            "url": str,
            "source_id": int,
            "run_id": int,
            "status": int,
            "headers": str,  # JSON object, names lower-case
            "sha256": str,
            "fetched_at": str,
        },
        pk="id",
        foreign_keys=[("sha256", "capture_bodies", "sha256")],
    )
    db["captures"].create_index(["url", "id"])
    # What the last fetch of a URL said: validators, body hash, freshness,
    # and the body whose items were saved (so a resumed run knows what is done).
    db["fetches"].create(
        {
            "url": str,
            "source_id": int,
            "status": int,
            "etag": str,
            "last_modified": str,
            "sha256": str,  # body of the last 200
            "processed": str,  # sha256 of the body whose items are all archived
            "fetched_at": str,  # last 200
            "checked_at": str,  # last 200 or 304
            "fresh_until": str,  # Cache-Control max-age / Expires of feeds
        },
        pk="url",
    )
    db["fetches"].create_index(["source_id"])
    # Hosts whose validators cannot be trusted (body hashes are compared
    # instead), and hosts that asked to be left alone (Retry-After).
    db["hosts"].create(
        {"host": str, "validators": str, "reason": str, "noted_at": str, "not_before": str},
        pk="host",
        defaults={"validators": "ok"},
    )
    db["post_versions"].create(
        {
            "id": int,
            "post_id": int,
            "run_id": int,
            "sha256": str,  # of every stored field of the post
            "captured_at": str,
            "change": str,  # new, title, text, title+text, metadata, restored
            "diff_lines": int,  # lines added and removed in the text
            "changed": str,  # JSON array of the fields that changed
            "title": str,
            "author": str,
            "published": str,
            "updated": str,
            "summary": str,
            "tags": str,
            "text": str,
            "markdown": str,
        },
        pk="id",
        foreign_keys=[("post_id", "posts", "id")],
    )
    db["post_versions"].create_index(["post_id", "id"])
    db["posts"].add_column("gone_at", str)
    # Per-source crawl settings (NULL: the crawl's own), and the crawl state
    # that decides between a complete and an incremental run.
    db["sources"].add_column("delay", float)
    db["sources"].add_column("max_pages", int)
    db["sources"].add_column("revisit", str)
    db["sources"].add_column("complete_at", str)  # end of the last complete crawl
    db["sources"].add_column("run_state", str)  # running, interrupted, done
    db["crawl_runs"].add_column("mode", str)  # incremental, recheck, full
    db["crawl_runs"].add_column("requests", int)
    db["crawl_runs"].add_column("not_modified", int)
    db["crawl_runs"].add_column("extractions", int)
    db["crawl_runs"].add_column("versions", int)


@migrations()
def add_protected_posts(db: Database) -> None:
    # Why a post's body is not archived (encrypted, behind a password); NULL for readable posts.
    db["posts"].add_column("protected", str)


@migrations()
def add_source_subscriptions(db: Database) -> None:
    # What a subscription list (OPML) said of a source: the folders it was filed in, one path a
    # line ("News/Tech" when nested), its title, and the blog's own page beside the feed.
    db["sources"].add_column("folder", str)
    db["sources"].add_column("title", str)
    db["sources"].add_column("site_url", str)


@migrations()
def add_source_hosts(db: Database) -> None:
    # The other hosts a crawl took as the blog's own (JSON array): --map-host sent them to its server.
    db["sources"].add_column("hosts", str)


@migrations()
def add_cluster_ingest(db: Database) -> None:
    # The last entry of a cluster run's result stream whose writes are committed here
    # (crawler.run.coordinator), in the same transaction: a coordinator that restarts skips the entries before it.
    db["cluster_ingest"].create({"stream": str, "last_id": str}, pk="stream")


@migrations()
def add_short_word_index(db: Database) -> None:
    # Words of one or two letters or digits (内, 内存, go), which the trigram index cannot find,
    # from an index of each post's grams (archive/search/index.py) instead of instr() over every post.
    db.execute(
        "create virtual table posts_grams using fts5(grams, tokenize='ascii', detail=none, content='', columnsize=0)"
    )
    db.execute("insert into posts_grams (rowid, grams) select id, post_grams(title, text, protected) from posts")
    grams = "post_grams({0}.title, {0}.text, {0}.protected)"
    delete = f"insert into posts_grams (posts_grams, rowid, grams) values ('delete', old.id, {grams.format('old')});"
    insert = f"insert into posts_grams (rowid, grams) values (new.id, {grams.format('new')});"
    db.execute(f"create trigger posts_grams_ai after insert on posts begin {insert} end")
    db.execute(f"create trigger posts_grams_ad after delete on posts begin {delete} end")
    db.execute(
        "create trigger posts_grams_au after update of title, text, protected on posts when old.title is not new.title"
        f" or old.text is not new.text or old.protected is not new.protected begin {delete} {insert} end"
    )


@migrations()
def reindex_posts_only_when_their_words_change(db: Database) -> None:
    # sqlite-utils' trigger indexed a post again (its old words deleted, its new ones inserted)
    # at every update of the row, its last_seen on each recrawl included.
    db.execute("drop trigger posts_au")
    db.execute(
        "create trigger posts_au after update of title, text on posts"
        " when old.title is not new.title or old.text is not new.text begin"
        " insert into posts_fts (posts_fts, rowid, title, text) values ('delete', old.rowid, old.title, old.text);"
        " insert into posts_fts (rowid, title, text) values (new.rowid, new.title, new.text); end"
    )


@migrations()
def move_post_bodies_to_the_end_of_their_rows(db: Database) -> None:
    # A column is read by walking the row up to it: lang, tags and gone_at came after the
    # text and the Markdown, so each facet and filter on them read every overflow page of
    # every post it counted. The bodies go last; the table's triggers are made again. The posts
    # table is shown newest first: an index on published, so that it is not sorted at each page.
    _post_bodies_last(db)
    db["posts"].create_index(["published"])


def _post_bodies_last(db: Database) -> None:
    """The posts' summary, text and Markdown at the end of their rows, the table's triggers made again."""
    bodies = ["summary", "text", "markdown"]
    triggers = [trigger.sql for trigger in db["posts"].triggers]
    db["posts"].transform(column_order=[c for c in db["posts"].columns_dict if c not in bodies] + bodies)
    for sql in triggers:
        db.execute(sql)


@migrations()
def add_post_media(db: Database) -> None:
    # The images, videos, audio and files posts show, one row a URL. An image's body is in
    # capture_bodies (stored once by sha256, like every capture); the others are never fetched.
    db["media"].create(
        {
            "id": int,
            "url": str,
            "source_id": int,  # the first source that showed it
            "kind": str,  # image, video, audio, file
            "status": str,  # listed, ok, theme, not-an-image, http 404, too-large, post-cap, source-cap, ...
            "sha256": str,
            "content_type": str,  # read from the bytes, not the server's header
            "bytes": int,
            "width": int,
            "height": int,
            "fetched_at": str,
        },
        pk="id",
        not_null={"url", "kind", "status"},
        foreign_keys=[("source_id", "sources", "id"), ("sha256", "capture_bodies", "sha256")],
    )
    db["media"].create_index(["url"], unique=True)
    db["media"].create_index(["source_id", "status"])
    db["post_media"].create(
        {"post_id": int, "position": int, "media_id": int, "alt": str},
        pk=("post_id", "position"),
        foreign_keys=[("post_id", "posts", "id"), ("media_id", "media", "id")],
    )
    db["post_media"].create_index(["media_id"])
    # all, metadata (URLs only) or off; NULL: the crawl's ARCHIVE_MEDIA
    db["sources"].add_column("media", str)


@migrations()
def add_post_listing_index(db: Database) -> None:
    # A search that matches half the posts counts them and counts their blogs, tags, languages,
    # years and months (the posts table's facets): from this index, a few dozen bytes a post,
    # instead of from the posts' rows, a page or more each.
    db["posts"].create_index(["published", "source_id", "lang", "tags"], index_name="idx_posts_listing")
    # The canned queries' order (latest, search): newest first, walked instead of sorted.
    db.execute("create index idx_posts_newest on posts(coalesce(published, first_seen))")


@migrations()
def add_post_copies(db: Database) -> None:
    # A hash of each post's normalised title and text (archive/core/copies.py): a second URL of the
    # same blog with the same title and text is an alias of the post, not another post.
    db["posts"].add_column("text_hash", str)
    _post_bodies_last(db)  # added last, it would come after the bodies: read past them at each lookup
    db.conn.create_function("text_key", 2, text_key, deterministic=True)
    db.execute("update posts set text_hash = text_key(title, text) where text is not null")
    db["posts"].create_index(["source_id", "text_hash"])


@migrations()
def fold_post_languages(db: Database) -> None:
    # posts.lang is ISO 639-1 (archive/core/langs.py): a code a guess or a page gave in another form
    # (wuu and yue, Chinese languages; cmn-Hans; zsm, Malay) becomes its language's or macrolanguage's
    db.conn.create_function("iso639_1", 1, iso639_1, deterministic=True)
    db.execute("update posts set lang = iso639_1(lang) where lang is not iso639_1(lang)")


@migrations()
def add_version_grades(db: Database) -> None:
    # Each version's grade (archive/tables/grades.py), the share of its text changed and a word diff;
    # the versions recorded before are graded from what was known of them (no share, no diff)
    db["post_versions"].add_column("grade", str)
    db["post_versions"].add_column("changed_share", float)
    db["post_versions"].add_column("word_diff", str)
    db.execute(
        "update post_versions set grade = case when change = 'new' then 'new' when change like '%title%' then 'title'"
        " when change like '%text%' then 'edit' else 'typo' end"
    )
    db["post_versions"].create_index(["grade", "captured_at"])


@migrations()
def add_source_host_maps(db: Database) -> None:
    # {"host[:port]": "http://base"}: the --map-host entries a source was crawled with, or set
    # with source set NAME map_host=HOST=BASE; NULL: none (archive/tables/sources.py)
    db["sources"].add_column("map_hosts", str)


@migrations()
def add_rendering(db: Database) -> None:
    # a page whose scripts write its text (crawler/judge/render.py, docs/rendering.md): the source's
    # render mode (auto, always, never; NULL: the crawl's) and what its crawls learned of its pages
    # ("browser": they need one, "http": they do not), how a page was fetched ("http", or
    # "browser: WHY"; NULL before rendering existed), and a capture of the rendered HTML ("browser")
    db["sources"].add_column("render", str)
    db["sources"].add_column("rendered", str)
    db["pages"].add_column("fetched_via", str)
    db["captures"].add_column("fetched_via", str)


@migrations()
def add_source_media_max_mb(db: Database) -> None:
    # the largest post image a source's crawls fetch, in MB (crawl URL --media-max-mb, or source set NAME
    # media_max_mb=N); NULL: the crawl's ARCHIVE_MEDIA_MAX_MB
    db["sources"].add_column("media_max_mb", float)


@migrations()
def add_run_files(db: Database) -> None:
    # the responses to requests for the posts' images, counted apart from the pages (pages counted both
    # before: a run of before has no files)
    db["crawl_runs"].add_column("files", int)


def ensure_schema(db: Database) -> None:
    """Create or upgrade the archive's tables; a no-op when up to date."""
    register_functions(db.conn)
    migrations.apply(db)

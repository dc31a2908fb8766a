"""Per-source crawl settings, and the crawl command's exit codes and output modes."""

import sqlite3
from pathlib import Path

import pytest
from blogserver import Blog, BlogServer
from conftest import rows, run_cli
from mediablog import CDN, SiteServer, media_blog, media_cdn
from mediablog import HOST as MEDIA_HOST

from archive import ensure_source, open_archive
from archive.core.lock import acquire_lock, release_lock


def source_row(db: Path) -> dict:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return dict(conn.execute("select * from sources").fetchone())
    finally:
        conn.close()


@pytest.fixture
def blog():
    with BlogServer(Blog("set.test", 6)) as server:
        yield server


def crawl(db: Path, server: BlogServer, *extra: str, check: bool = True):
    return run_cli("crawl", "--db", str(db), "--map-host", f"set.test={server.base}", *extra, check=check)


def test_source_set_stores_the_settings_and_default_clears_them(db_path):
    run_cli("add", "http://set.test/", "--name", "set", "--db", str(db_path))
    proc = run_cli("source", "set", "set", "delay=0.5", "max_pages=3", "revisit=1d:0,*:2d", "enabled=no",
                   "--db", str(db_path))
    assert proc.stdout == "source set: delay=0.5, max_pages=3, revisit=1d:0,*:2d, enabled=0\n"
    row = source_row(db_path)
    assert (row["delay"], row["max_pages"], row["revisit"], row["enabled"]) == (0.5, 3, "1d:0,*:2d", 0)
    run_cli("source", "set", "set", "delay=default", "max_pages=default", "enabled=1", "--db", str(db_path))
    row = source_row(db_path)
    assert (row["delay"], row["max_pages"], row["enabled"]) == (None, None, 1)


@pytest.mark.parametrize(
    "pair,message",
    [
        ("speed=3", "Error: unknown setting 'speed': one of delay, max_pages, revisit, media, media_max_mb, render, map_host, enabled"),
        ("map_host=set.test", "Error: bad value for map_host: 'set.test': HOST=BASE, as in example.com=http://127.0.0.1:8000, or HOST=default\n"),
        ("media=some", "Error: bad value for media: 'some': one of all, metadata, off"),
        ("delay=-1", "Error: bad value for delay: '-1': a number of seconds, 0 or more, as in 1.5\n"),
        ("delay=fast", "Error: bad value for delay: 'fast': a number of seconds, 0 or more, as in 1.5\n"),
        ("delay=nan", "Error: bad value for delay: 'nan': a number of seconds, 0 or more, as in 1.5\n"),
        ("max_pages=lots", "Error: bad value for max_pages: 'lots': a whole number of pages, 1 or more\n"),
        ("media_max_mb=big", "Error: bad value for media_max_mb: 'big': a number of MB over 0, as in 10\n"),
        ("media_max_mb=0", "Error: bad value for media_max_mb: '0': a number of MB over 0, as in 10\n"),
        ("revisit=7d:0", "Error: bad value for revisit: '7d:0': a revisit policy ends with *:INTERVAL"),
        ("enabled=maybe", "Error: bad value for enabled: 'maybe': 1 or 0\n"),
        ("delay", "Error: settings are KEY=VALUE, not 'delay'"),
    ],
)
def test_source_set_errors_are_one_line_with_exit_2(db_path, pair, message):
    run_cli("add", "http://set.test/", "--name", "set", "--db", str(db_path))
    proc = run_cli("source", "set", "set", pair, "--db", str(db_path), check=False)
    assert proc.returncode == 2
    assert proc.stderr.startswith(message) and len(proc.stderr.strip().splitlines()) == 1


def test_source_set_unknown_source(db_path):
    run_cli("add", "http://set.test/", "--name", "set", "--db", str(db_path))  # with no archive at all: "no archive at"
    proc = run_cli("source", "set", "nope", "delay=1", "--db", str(db_path), check=False)
    assert (proc.returncode, proc.stderr) == (2, "Error: no source named 'nope' (see blogarchive sources)\n")


def test_page_budget_and_enabled_are_obeyed(db_path, blog):
    run_cli("add", "http://set.test/", "--name", "set", "--db", str(db_path))
    run_cli("source", "set", "set", "max_pages=3", "--db", str(db_path))
    crawl(db_path, blog, "--delay", "0")
    assert len([h for h in blog.take_hits() if not h.path.endswith((".txt", ".xml"))]) == 3
    conn = sqlite3.connect(db_path)
    assert conn.execute("select kind, message from crawl_errors").fetchall() == [
        ("cut", "not fetched: the page budget of 3 was reached")]
    # a crawl that hit its budget was not complete: the next one is complete again
    assert conn.execute("select complete_at from sources").fetchone() == (None,)
    conn.close()
    run_cli("source", "set", "set", "enabled=0", "--db", str(db_path))
    proc = crawl(db_path, blog, "--delay", "0")
    assert blog.take_hits() == []
    assert "0 requests" in proc.stdout


def test_quiet_prints_only_the_summary_and_log_file_gets_the_log(db_path, blog, tmp_path):
    run_cli("add", "http://set.test/", "--name", "set", "--db", str(db_path))
    log = tmp_path / "crawl.log"
    proc = crawl(db_path, blog, "--quiet", "--log-file", str(log), "--delay", "0")
    assert proc.stderr == ""
    assert proc.stdout.startswith("run 1 finished: posts 6 new,") and proc.stdout.count("\n") == 1
    assert "[scrapy.core.engine] INFO: Spider closed (finished)" in log.read_text()


def test_a_source_delay_spaces_its_requests_and_a_run_delay_wins_for_its_run(db_path, blog):
    run_cli("add", "http://set.test/", "--name", "set", "--db", str(db_path))
    run_cli("source", "set", "set", "delay=0.3", "--db", str(db_path))

    def gaps(*extra: str) -> list[float]:
        crawl(db_path, blog, "--concurrency", "8", "--full", *extra)
        times = [h.at for h in blog.take_hits()]
        assert len(times) > 8
        return [b - a for a, b in zip(times, times[1:])]

    # Scrapy waits 0.5 to 1.5 times the delay between two requests to one host
    assert min(gaps()) >= 0.3 * 0.5
    assert min(gaps("--delay", "0")) < 0.3 * 0.5  # the run's own delay, for this run
    assert "settings: delay=0.3\t" in run_cli("sources", "--db", str(db_path)).stdout


def listed_settings(db: Path) -> dict[str, str]:
    """Each source's settings as ``blogarchive sources`` shows them."""
    lines = [line.split("\t") for line in run_cli("sources", "--db", str(db)).stdout.splitlines()]
    return {line[0]: next(f for f in line if f.startswith("settings: ")).removeprefix("settings: ") for line in lines}


def test_a_source_crawled_with_map_host_is_crawled_again_with_no_url(db_path, blog):
    first = crawl(db_path, blog, "http://set.test/", "--delay", "0", "--media", "off")
    assert first.stdout.startswith("run 1 finished: posts 6 new,")
    assert listed_settings(db_path) == {"set.test": f"delay=0 media=off map_host=set.test={blog.base}"}
    blog.take_hits()
    # the README's daily command: every enabled source, as it was set up
    proc = run_cli("crawl", "--db", str(db_path), "--full", check=False)
    assert proc.returncode == 0, proc.stderr
    assert "0 errors on the blogs" in proc.stdout
    assert len(blog.take_hits()) > 6  # the feed, the listings and the six posts, from the mapped server
    # the URL again, with no option: the same
    assert run_cli("crawl", "http://set.test/", "--db", str(db_path)).returncode == 0
    assert len(blog.take_hits()) > 0


def test_map_host_is_a_source_setting_and_a_run_map_wins_for_its_run(db_path, blog):
    run_cli("add", "http://set.test/", "--name", "set", "--db", str(db_path))
    proc = run_cli("source", "set", "set", f"map_host=set.test={blog.base}", "map_host=img.set.test=http://127.0.0.1:9",
                   "--db", str(db_path))
    assert proc.stdout == f"source set: map_host=img.set.test=http://127.0.0.1:9, map_host=set.test={blog.base}\n"
    assert run_cli("crawl", "--db", str(db_path), "--delay", "0").returncode == 0
    assert len(blog.take_hits()) > 6
    # a mapping to a dead server, then a run that maps the host itself: its map wins, and is not kept
    run_cli("source", "set", "set", "map_host=set.test=http://127.0.0.1:9", "--db", str(db_path))
    assert crawl(db_path, blog, "--delay", "0").returncode == 0
    assert len(blog.take_hits()) > 0
    assert listed_settings(db_path)["set"] == "map_host=img.set.test=http://127.0.0.1:9 map_host=set.test=http://127.0.0.1:9"
    proc = run_cli("source", "set", "set", "map_host=default", "--db", str(db_path))
    assert (proc.stdout, listed_settings(db_path)["set"]) == ("source set: map_host=default\n", "-")


def test_each_source_keeps_the_map_of_its_own_hosts_and_a_crawl_of_all_maps_them_all(db_path, blog):
    with BlogServer(Blog("other.test", 3)) as other:
        urls = ("http://set.test/", "http://other.test/")
        maps = (f"set.test={blog.base}", f"other.test={other.base}", "cdn.test=http://127.0.0.1:9")
        run_cli("crawl", *urls, *(a for m in maps for a in ("--map-host", m)), "--delay", "0", "--db", str(db_path))
        assert listed_settings(db_path) == {  # an image host of no source's: each keeps it
            "set.test": f"delay=0 map_host=cdn.test=http://127.0.0.1:9 map_host=set.test={blog.base}",
            "other.test": f"delay=0 map_host=cdn.test=http://127.0.0.1:9 map_host=other.test={other.base}"}
        blog.take_hits(), other.take_hits()
        proc = run_cli("crawl", "--db", str(db_path), "--full", check=False)
        assert proc.returncode == 0, proc.stderr
        assert "0 errors on the blogs" in proc.stdout
        assert blog.take_hits() and other.take_hits()


def test_a_run_page_budget_wins_over_the_source_own(db_path, blog):
    run_cli("add", "http://set.test/", "--name", "set", "--db", str(db_path))
    run_cli("source", "set", "set", "max_pages=3", "--db", str(db_path))
    crawl(db_path, blog, "--delay", "0", "--max-pages", "2")
    assert len([h for h in blog.take_hits() if not h.path.endswith((".txt", ".xml"))]) == 2
    assert listed_settings(db_path)["set"] == "max_pages=3"  # a run's budget is never kept


@pytest.mark.parametrize(
    "args,message",
    [
        (["crawl", "blog.test", "--db", "{db}"], "Error: not an http(s) URL: blog.test"),
        (["crawl", "--db", "/no/such/dir/a.db"], "Error: directory does not exist: /no/such/dir"),
        (["crawl", "--full", "--recheck", "--db", "{db}"], "Error: --recheck and --full exclude each other"),
        (["crawl", "--map-host", "x", "--db", "{db}"], "Error: Invalid value for --map-host"),
    ],
)
def test_crawl_usage_and_configuration_errors_exit_2(db_path, args, message):
    proc = run_cli(*[a.format(db=db_path) for a in args], check=False)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_two_feeds_of_one_site_and_two_blogs_of_one_folder_are_distinct_sources(db_path):
    db = open_archive(db_path)
    try:
        a = ensure_source(db, "https://site.test/feeds/a.xml")
        b = ensure_source(db, "https://site.test/feeds/b.xml")
        c = ensure_source(db, "https://site.test/~ann/notes.html")
        d = ensure_source(db, "https://site.test/~ann/diary.html")
        assert [s["name"] for s in (a, b, c, d)] == [
            "site.test/feeds", "site.test/feeds/b.xml", "site.test/~ann", "site.test/~ann/diary.html"]
        # a name taken even with the file name gets a number
        db["sources"].update(b["id"], {"url": "https://site.test/other/"})
        assert ensure_source(db, "https://site.test/feeds/b.xml")["name"] == "site.test/feeds/b.xml-2"
    finally:
        db.close()


def test_a_crawl_of_two_feeds_of_one_site_crawls_both(db_path, blog):
    proc = crawl(db_path, blog, "http://set.test/feed.xml", "http://set.test/feed.xml?lang=en", "--delay", "0")
    names = [r[0] for r in sqlite3.connect(db_path).execute("select name from sources order by id")]
    assert names == ["set.test", "set.test/feed.xml"], proc.stderr


def test_a_crawl_command_that_fails_adds_no_source(db_path, blog):
    proc = crawl(db_path, blog, "http://set.test/", "ftp://set.test/feed.xml", check=False)
    assert proc.returncode == 2 and "not an http(s) URL" in proc.stderr
    assert not db_path.exists() or not rows(db_path, "select * from sqlite_master where name = 'sources'") \
        or rows(db_path, "select * from sources") == []


def counts(db: Path, source: str) -> dict[str, int]:
    """The rows of each table that hold something of the source ``source``."""
    of = "(select id from sources where name = ?)"
    posts = f"(select id from posts where source_id = {of})"
    sql = {"sources": f"select count(*) n from sources where id = {of}", "posts": f"select count(*) n from posts where source_id = {of}",
           **{t: f"select count(*) n from {t} where source_id = {of}" for t in ("pages", "captures", "fetches", "crawl_errors", "media")},
           **{t: f"select count(*) n from {t} where post_id in {posts}" for t in ("post_versions", "post_aliases", "provenance", "post_media")}}
    return {table: rows(db, query, (source,))[0]["n"] for table, query in sql.items()}


def test_source_remove_asks_what_becomes_of_the_posts_and_keeps_or_deletes_them(db_path, blog):
    with SiteServer(media_blog()) as media, SiteServer(media_cdn()) as cdn:
        run_cli("crawl", f"http://{MEDIA_HOST}/", "--db", str(db_path), "--delay", "0", "--map-host", f"{MEDIA_HOST}={media.base}",
                "--map-host", f"{CDN}={cdn.base}")
    crawl(db_path, blog, "http://set.test/", "--delay", "0")
    run_cli("add", "https://typo.test/blgo", "--db", str(db_path))
    media_blog_before, set_before = counts(db_path, MEDIA_HOST), counts(db_path, "set.test")
    assert all(media_blog_before[t] for t in ("posts", "pages", "captures", "fetches", "media", "post_media", "post_versions"))
    assert all(set_before[t] for t in ("posts", "pages", "captures", "fetches", "post_versions", "provenance"))
    before = db_path.read_bytes()

    for asked in ([], ["--keep-posts", "--delete-posts"]):
        proc = run_cli("source", "remove", "set.test", *asked, "--db", str(db_path), check=False)
        assert (proc.returncode, proc.stderr) == (2, "Error: say what becomes of its posts: --keep-posts or --delete-posts\n")
    lock, _ = acquire_lock(db_path)
    try:
        proc = run_cli("source", "remove", "set.test", "--delete-posts", "--db", str(db_path), check=False)
    finally:
        release_lock(lock)
    assert proc.returncode == 75 and proc.stderr.startswith(f"Error: another crawl is running on {db_path}")
    assert db_path.read_bytes() == before

    assert run_cli("source", "remove", "typo.test/blgo", "--keep-posts", "--db", str(db_path)).stdout == \
        "source typo.test/blgo removed: 0 posts, 0 pages, 0 captures, 0 images\n"  # a source with no post goes whole
    proc = run_cli("source", "remove", "set.test", "--delete-posts", "--db", str(db_path))
    assert proc.stdout == (f"source set.test removed: {set_before['posts']} posts, {set_before['pages']} pages, "
                           f"{set_before['captures']} captures, 0 images\n")
    assert set(counts(db_path, "set.test").values()) == {0} and counts(db_path, MEDIA_HOST) == media_blog_before
    assert [r["name"] for r in rows(db_path, "select name from sources")] == [MEDIA_HOST]
    assert rows(db_path, "select count(*) n from capture_bodies where sha256 not in (select sha256 from captures) "
                         "and sha256 not in (select sha256 from media where sha256 is not null)")[0]["n"] == 0
    assert run_cli("search", "set.test", "--db", str(db_path), check=False).stdout == ""

    proc = run_cli("source", "remove", MEDIA_HOST, "--keep-posts", "--db", str(db_path))
    assert proc.stdout == f"source {MEDIA_HOST}: disabled, its {media_blog_before['posts']} posts kept; {media_blog_before['pages']} pages forgotten\n"
    kept = counts(db_path, MEDIA_HOST)
    assert kept == {**media_blog_before, "pages": 0, "fetches": 0, "crawl_errors": 0}
    assert (source_row(db_path)["enabled"], source_row(db_path)["feeds"]) == (0, "[]")
    conn = sqlite3.connect(db_path)
    try:
        assert conn.execute("pragma foreign_key_check").fetchall() == []
        assert conn.execute("pragma integrity_check").fetchall() == [("ok",)]
    finally:
        conn.close()


def test_a_wrong_saved_map_is_fixed_and_a_wrong_host_taken_out_by_source_set(db_path, blog):
    wrong = run_cli("crawl", "http://set.test/", "--map-host", "set.test=http://127.0.0.1:9", "--map-host",
                    "img.set.tset=http://127.0.0.1:9", "--delay", "0", "--db", str(db_path), check=False)
    assert wrong.returncode == 1 and "posts 0 new" in wrong.stdout  # the port was wrong: the blog failed
    proc = run_cli("source", "set", "set.test", f"map_host=set.test={blog.base}", "map_host=img.set.tset=default",
                   "--db", str(db_path))
    assert proc.stdout == f"source set.test: map_host=set.test={blog.base}\n"
    assert listed_settings(db_path) == {"set.test": f"delay=0 map_host=set.test={blog.base}"}
    again = run_cli("crawl", "--db", str(db_path))
    assert again.stdout.startswith("run 2 finished: posts 6 new,")

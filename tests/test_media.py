"""Post media: which images a post shows, fetched through the crawl, checked, capped, stored once."""

import io
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, rows, run_cli
from lxml import html
from mediablog import CDN, HOST, SiteServer, image, media_blog, media_cdn, post_page, site_page
from PIL import Image
from warcio.archiveiterator import ArchiveIterator

from archive import open_archive
from archive.formats.plan import export_plan, save_plan
from archive.search.index import register_functions
from archive.tables.media import sniff_image

from crawler.extract.article_media import article_media, best_srcset, page_images
from crawler.fetch.media_ledger import MediaLedger

BASE = f"http://{HOST}"


def media_crawl(db: Path, blog: SiteServer, cdn: SiteServer, *args: str) -> None:
    run_cli("crawl", f"{BASE}/", "--db", str(db), "--delay", "0", "--concurrency", "8", "--media-max-mb", "1",
            "--map-host", f"{HOST}={blog.base}", "--map-host", f"{CDN}={cdn.base}", *args)


@pytest.fixture(scope="module")
def servers():
    with SiteServer(media_blog()) as blog, SiteServer(media_cdn()) as cdn:
        yield blog, cdn


@pytest.fixture(scope="module")
def crawled(servers, tmp_path_factory: pytest.TempPathFactory):
    """The media blog crawled once: the archive, and the requests each server had."""
    blog, cdn = servers
    blog.take_hits(), cdn.take_hits()
    db = tmp_path_factory.mktemp("media") / "archive.db"
    media_crawl(db, blog, cdn)
    return db, blog.take_hits(), cdn.take_hits()


def statuses(db: Path) -> dict[str, str]:
    return {r["url"].removeprefix(BASE): r["status"] for r in rows(db, "select url, status from media")}


@pytest.mark.parametrize("kind", ["PNG", "JPEG", "WEBP", "GIF"])
def test_sniff_reads_the_type_and_size_from_the_bytes(kind: str) -> None:
    assert sniff_image(image(kind, (37, 21), 1)) == (f"image/{kind.lower()}", 37, 21)


def test_sniff_knows_svg_and_refuses_html() -> None:
    assert sniff_image(b'<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"></svg>')[0] == "image/svg+xml"
    assert sniff_image(b"<!doctype html><html><body>Error</body></html>") == (None, None, None)


def test_sniff_reads_a_lossless_webp() -> None:
    out = io.BytesIO()
    Image.new("RGB", (90, 17)).save(out, format="WEBP", lossless=True)
    assert sniff_image(out.getvalue()) == ("image/webp", 90, 17)


def test_best_srcset_candidate_is_the_widest() -> None:
    assert best_srcset("a.jpg 320w, b.jpg 1280w, c.jpg 640w") == "b.jpg"
    assert best_srcset("a.jpg 1x, b.jpg 2x") == "b.jpg"
    assert best_srcset("only.jpg") == "only.jpg"


def test_article_media_in_order_with_lazy_srcset_picture_files_and_og_image() -> None:
    root = html.fromstring(
        '<article><img src="data:image/gif;base64,R0l" data-lazy-src="/lazy.png" alt=" Lazy ">'
        '<img src="/small.jpg" srcset="/small.jpg 1x, /big.jpg 2x">'
        '<picture><source srcset="/p.avif 400w, /p-wide.avif 900w"><img src="/p.png" alt="P"></picture>'
        '<img src="/pixel.gif" width="1" height="1"><video><source src="/clip.webm"></video>'
        '<audio src="/talk.mp3"></audio><a href="/slides.pdf">slides</a><a href="/other/">a page</a>'
        '<img src="/lazy.png"></article>')
    media = article_media(root, "http://blog.test/post/", "/cover.jpg")
    assert [(m["url"].removeprefix("http://blog.test"), m["kind"], m["alt"]) for m in media] == [
        ("/lazy.png", "image", "Lazy"), ("/big.jpg", "image", None), ("/p-wide.avif", "image", "P"),
        ("/clip.webm", "video", None), ("/talk.mp3", "audio", None), ("/slides.pdf", "file", "slides"),
        ("/cover.jpg", "image", None)]


def test_page_images_include_the_og_image() -> None:
    root = html.fromstring('<html><head><meta property="og:image" content="/share.png"></head>'
                           '<body><img src="/logo.png"></body></html>')
    assert page_images(root, "http://blog.test/") == {"http://blog.test/share.png", "http://blog.test/logo.png"}


def test_ledger_caps_per_post_and_per_source() -> None:
    ledger = MediaLedger("all", theme=set(), source_bytes=0, max_file=10, max_post=100, max_source=150)
    assert ledger.admit(["p1"], 60) is None
    assert ledger.admit(["p1"], 60) == "post-cap"
    assert ledger.admit(["p2", "p1"], 60) is None
    assert ledger.admit(["p3"], 60) == "source-cap"


def test_ledger_finds_the_theme_by_pages_not_names() -> None:
    ledger = MediaLedger("all", theme=set(), source_bytes=0, max_file=10, max_post=10, max_source=10)
    for n in range(6):
        ledger.note_page({"http://b/logo.png"} | ({"http://b/shared.png"} if n < 2 else set()))
    ledger.keep("http://b/p/1/", [{"url": "http://b/logo.png", "kind": "image"}, {"url": "http://b/shared.png", "kind": "image"}])
    assert ledger.settle() == ["http://b/logo.png"]
    assert list(ledger.take()) == ["http://b/shared.png"]


def test_post_images_are_archived_with_what_their_bytes_say(crawled) -> None:
    db, _, _ = crawled
    got = {r["url"].removeprefix(BASE): (r["content_type"], r["width"], r["height"])
           for r in rows(db, "select * from media where status = 'ok'")}
    assert got == {
        "/img/diagram.png": ("image/png", 64, 48),
        "/img/photo-large.jpg": ("image/jpeg", 1280, 960),  # the srcset's widest, not src
        "/img/cover.webp": ("image/webp", 600, 315),  # og:image
        "/img/lazy.gif": ("image/gif", 40, 30),  # data-src, not the inline placeholder
        "/img/pic.webp": ("image/webp", 800, 600),  # the <picture>'s source
        "/img/drawing.svg": ("image/svg+xml", None, None),
        "/img/shared.png": ("image/png", 100, 100),
        f"http://{CDN}/c/remote.png": ("image/png", 300, 200),  # another host, for media only
    }


def test_what_is_not_archived_says_why_and_is_recorded(crawled) -> None:
    db, _, _ = crawled
    assert {k: v for k, v in statuses(db).items() if v not in ("ok",)} == {
        "/theme/avatar.png": "theme", "/img/missing.png": "http 404", "/img/huge.png": "too-large",
        "/img/fake.jpg": "not-an-image", "/v/clip.mp4": "listed", "/files/paper.pdf": "listed"}
    errors = {r["url"].removeprefix(BASE): r["message"] for r in rows(db, "select * from crawl_errors where kind = 'media'")}
    assert set(errors) == {"/img/missing.png", "/img/huge.png", "/img/fake.jpg"}
    assert "larger than the cap of 1 MB" in errors["/img/huge.png"]
    assert "not an image: served as image/jpeg" in errors["/img/fake.jpg"]


def test_refused_bodies_are_never_stored(crawled) -> None:
    db, _, _ = crawled
    fake = media_blog()["/img/fake.jpg"][1]
    bodies = {r["size"] for r in rows(db, "select size from capture_bodies")}
    assert len(fake) not in bodies
    assert not rows(db, "select * from media where status != 'ok' and sha256 is not null")


def test_the_post_cap_skips_what_would_pass_it(servers, tmp_path: Path) -> None:
    blog, cdn = servers
    db = tmp_path / "archive.db"
    hosts = json.dumps({HOST: blog.base, CDN: cdn.base})
    subprocess.run([sys.executable, "-m", "scrapy", "crawl", "blog", "-a", f"url={BASE}/", "-s", f"ARCHIVE_PATH={db}",
                    "-s", f"ARCHIVE_MAP_HOSTS={hosts}", "-s", "DOWNLOAD_DELAY=0", "-s", "LOG_LEVEL=WARNING",
                    "-s", "ARCHIVE_MEDIA_POST_MB=0.01"], cwd=ROOT, check=True, capture_output=True, timeout=300)
    got = statuses(db)
    assert got["/img/photo-large.jpg"] == "post-cap"  # 19.8 kB, over the post's 10 kB alone
    assert got["/img/diagram.png"] == got["/img/cover.webp"] == "ok"
    assert got["/img/huge.png"] == "post-cap"  # under the file cap of 10 MB, over the post's
    errors = rows(db, "select message from crawl_errors where kind = 'media' and url = ?", (f"{BASE}/img/photo-large.jpg",))
    assert "would pass the post-cap of 0.01 MB" in errors[0]["message"]
    assert not rows(db, "select * from capture_bodies where size = ?", (len(media_blog()["/img/photo-large.jpg"][1]),))


def test_one_image_in_three_posts_is_stored_once(crawled) -> None:
    db, _, _ = crawled
    shared = rows(db, "select m.id, m.sha256, count(*) posts from media m join post_media pm on pm.media_id = m.id "
                      "where m.url = ? group by m.id", (f"{BASE}/img/shared.png",))
    assert [r["posts"] for r in shared] == [3]
    assert rows(db, "select count(*) n from capture_bodies where sha256 = ?", (shared[0]["sha256"],)) == [{"n": 1}]


def test_the_theme_images_are_no_post_media_and_never_fetched(crawled) -> None:
    db, hits, _ = crawled
    linked = {r["url"].removeprefix(BASE) for r in rows(db, "select url from media join post_media on media_id = media.id")}
    assert not linked & {"/theme/logo.png", "/theme/avatar.png", "/px.gif"}
    fetched = {h.path for h in hits}
    assert not fetched & {"/theme/logo.png", "/theme/avatar.png", "/px.gif", "/v/clip.mp4", "/files/paper.pdf"}
    assert "/img/photo-small.jpg" not in fetched


def test_post_media_keep_order_and_alt_text(crawled) -> None:
    db, _, _ = crawled
    got = rows(db, "select pm.position, m.url, pm.alt from post_media pm join media m on m.id = pm.media_id "
                   "join posts p on p.id = pm.post_id where p.url = ? order by pm.position", (f"{BASE}/p/1/",))
    assert [(r["url"].removeprefix(BASE), r["alt"]) for r in got] == [
        ("/img/diagram.png", "A diagram"), ("/img/photo-large.jpg", "A photo"), ("/img/cover.webp", None)]


def test_a_recrawl_with_no_change_fetches_no_image_again(crawled, servers, tmp_path: Path) -> None:
    db, _, _ = crawled
    blog, cdn = servers
    again = tmp_path / "again.db"
    again.write_bytes(db.read_bytes())
    blog.take_hits(), cdn.take_hits()
    media_crawl(again, blog, cdn)
    asked = [h.path for h in blog.take_hits() + cdn.take_hits()]
    assert asked and not [p for p in asked if p.startswith(("/img/", "/c/", "/theme/"))]
    assert statuses(again) == statuses(db)


def test_a_recheck_revalidates_each_archived_image_with_a_conditional_request(crawled, servers, tmp_path: Path) -> None:
    db, _, _ = crawled
    blog, cdn = servers
    again = tmp_path / "again.db"
    again.write_bytes(db.read_bytes())
    blog.take_hits(), cdn.take_hits()
    media_crawl(again, blog, cdn, "--recheck")
    images = [h for h in blog.take_hits() + cdn.take_hits() if h.path.startswith(("/img/", "/c/"))]
    archived = [u for u, s in statuses(db).items() if s == "ok"]
    assert sorted(h.path for h in images if h.status == 304) == sorted(u.removeprefix(f"http://{CDN}") for u in archived)
    assert all(h.conditional for h in images if h.status == 304)
    assert statuses(again) == statuses(db)
    assert rows(again, "select count(*) n from capture_bodies") == rows(db, "select count(*) n from capture_bodies")


def test_reextract_keeps_the_links_between_posts_and_their_media(crawled, tmp_path: Path) -> None:
    db, _, _ = crawled
    again = tmp_path / "again.db"
    again.write_bytes(db.read_bytes())
    links = "select p.url, pm.position, pm.media_id, pm.alt from post_media pm join posts p on p.id = pm.post_id order by 1, 2"
    before = rows(again, links)
    conn = sqlite3.connect(again)
    register_functions(conn)  # the triggers that keep posts_grams call post_grams()
    with conn:
        conn.execute("update posts set text = 'stale', markdown = 'stale'")
    conn.close()
    out = run_cli("reextract", "--db", str(again)).stdout
    assert "changed" in out
    assert rows(again, links) == before


def test_markdown_export_writes_each_post_s_images_beside_it(crawled, tmp_path: Path) -> None:
    db, _, _ = crawled
    out = tmp_path / "md"
    run_cli("export", "markdown", "-o", str(out), "--db", str(db))
    post = next(p for p in out.rglob("*.md") if "Post-1-" in p.name)
    text = post.read_text(encoding="utf-8")
    folder = post.with_suffix("")
    assert sorted(f.name for f in folder.iterdir()) == ["01-diagram.png", "02-photo-large.jpg", "03-cover.webp"]
    assert f"![A diagram]({folder.name}/01-diagram.png)" in text and f"]({folder.name}/03-cover.webp)" in text
    assert (folder / "01-diagram.png").read_bytes() == media_blog()["/img/diagram.png"][1]
    assert "http://media.test/img/" not in text
    third = next(p for p in out.rglob("*.md") if "Post-3-" in p.name)
    assert [f.name for f in third.with_suffix("").iterdir()] == ["01-shared.png"]  # the 404 has no file


def test_the_warc_export_holds_the_image_records(crawled, tmp_path: Path) -> None:
    db, _, _ = crawled
    warc = tmp_path / "media.warc.gz"
    run_cli("export", "warc", "-o", str(warc), "--source", HOST, "--db", str(db))
    with warc.open("rb") as f:
        records = {r.rec_headers.get_header("WARC-Target-URI"): (r.http_headers.get_header("Content-Type"), r.content_stream().read())
                   for r in ArchiveIterator(f) if r.rec_type == "response"}
    assert records[f"{BASE}/img/diagram.png"] == ("image/png", media_blog()["/img/diagram.png"][1])
    assert records[f"http://{CDN}/c/remote.png"][0] == "image/png"
    assert f"{BASE}/img/fake.jpg" not in records and f"{BASE}/img/huge.png" not in records


def test_a_cluster_job_s_plan_knows_the_images_but_holds_no_image_body(crawled, tmp_path: Path) -> None:
    db, _, _ = crawled
    archive_db = open_archive(db)
    try:
        plan = save_plan(export_plan(archive_db, [1], run_id=1), str(tmp_path))
    finally:
        archive_db.close()
    assert statuses(Path(plan)) == statuses(db)
    assert rows(Path(plan), "select count(*) n from post_media") == rows(db, "select count(*) n from post_media")
    assert not rows(Path(plan), "select * from capture_bodies where sha256 in (select sha256 from media)")
    assert rows(Path(plan), "select count(*) n from capture_bodies")[0]["n"] > 0  # the pages' are there


def test_media_metadata_records_the_urls_and_the_next_crawl_fetches_them(servers, tmp_path: Path) -> None:
    blog, cdn = servers
    blog.take_hits(), cdn.take_hits()
    db = tmp_path / "archive.db"
    media_crawl(db, blog, cdn, "--media", "metadata")
    assert not [h for h in blog.take_hits() + cdn.take_hits() if h.path.startswith(("/img/", "/c/"))]
    assert set(statuses(db).values()) == {"listed", "theme"}
    assert rows(db, "select count(*) n from post_media") == [{"n": 15}]
    assert rows(db, "select media from sources") == [{"media": "metadata"}]  # kept by the source
    run_cli("source", "set", HOST, "media=default", "--db", str(db))
    media_crawl(db, blog, cdn)  # no post changed: the images listed are fetched now
    assert sorted(h.path for h in blog.take_hits() + cdn.take_hits() if h.path.startswith(("/img/", "/c/"))) == [
        "/c/remote.png", "/img/cover.webp", "/img/diagram.png", "/img/drawing.svg", "/img/fake.jpg", "/img/huge.png",
        "/img/lazy.gif", "/img/missing.png", "/img/photo-large.jpg", "/img/pic.webp", "/img/shared.png"]
    assert list(statuses(db).values()).count("ok") == 8


def test_the_image_cap_given_with_a_url_is_the_source_s_own_and_a_run_s_cap_wins(servers, tmp_path: Path) -> None:
    blog, cdn = servers
    db = tmp_path / "archive.db"
    media_crawl(db, blog, cdn)  # --media-max-mb 1, with the blog's URL
    assert rows(db, "select media_max_mb from sources") == [{"media_max_mb": 1.0}]
    assert "media_max_mb=1" in run_cli("sources", "--db", str(db)).stdout

    def crawl_every_source(db: Path, *args: str) -> dict[str, str]:
        run_cli("add", f"{BASE}/", "--db", str(db))
        for host, base in ((HOST, blog.base), (CDN, cdn.base)):
            run_cli("source", "set", HOST, f"map_host={host}={base}", "--db", str(db))
        run_cli("source", "set", HOST, "media_max_mb=1", "--db", str(db))
        run_cli("crawl", "--db", str(db), "--delay", "0", *args)  # no URL: the source's own settings
        return statuses(db)

    assert crawl_every_source(tmp_path / "own.db")["/img/huge.png"] == "too-large"  # over the source's 1 MB
    assert crawl_every_source(tmp_path / "run.db", "--media-max-mb", "10")["/img/huge.png"] == "ok"  # the run's


def test_media_off_per_source_keeps_no_media(servers, tmp_path: Path) -> None:
    blog, cdn = servers
    db = tmp_path / "archive.db"
    run_cli("add", f"{BASE}/", "--db", str(db))
    run_cli("source", "set", HOST, "media=off", "--db", str(db))
    blog.take_hits(), cdn.take_hits()
    media_crawl(db, blog, cdn)
    assert rows(db, "select media from sources") == [{"media": "off"}]
    assert rows(db, "select count(*) n from posts") == [{"n": 8}]
    assert not rows(db, "select * from media") and not rows(db, "select * from post_media")
    assert not [h for h in blog.take_hits() + cdn.take_hits() if h.path.startswith(("/img/", "/c/"))]


def test_a_new_post_s_cover_shown_by_the_listings_too_is_not_the_theme_s(tmp_path: Path) -> None:
    """The next run reads the home page, two tag pages and the one new post, all four showing the
    post's cover: listings show their posts' covers, so only post pages are the theme's evidence."""
    files = media_blog()
    with SiteServer(files) as blog, SiteServer(media_cdn()) as cdn:
        db = tmp_path / "archive.db"
        media_crawl(db, blog, cdn)
        cover = '<img src="/img/new-cover.png" alt="The new cover">'
        files["/img/new-cover.png"] = ("image/png", image("PNG", (120, 80), 12))
        files["/p/9/"] = ("text/html; charset=utf-8", post_page(9).replace(
            b"<h1>Post 9 with pictures</h1>", b"<h1>Post 9 with pictures</h1>" + cover.encode()))
        teaser = f'{cover}<a href="/p/9/">Post 9 with pictures</a>'
        for tag in ("new", "pictures"):
            files[f"/t/{tag}/"] = ("text/html; charset=utf-8", site_page(f"Tag {tag}", f"<ul><li>{teaser}</li></ul>"))
        kind, home = files["/"]
        files["/"] = (kind, home.replace(b"<ul>", f'<a href="/t/new/">new</a><a href="/t/pictures/">pictures</a>'
                                                  f"<ul><li>{teaser}</li>".encode(), 1))
        media_crawl(db, blog, cdn)
        asked = {h.path for h in blog.take_hits()}
    assert {"/t/new/", "/t/pictures/", "/p/9/"} <= asked
    assert statuses(db)["/img/new-cover.png"] == "ok"
    linked = rows(db, "select p.url from post_media pm join posts p on p.id = pm.post_id join media m on m.id = pm.media_id "
                      "where m.url like '%/img/new-cover.png'")
    assert [r["url"] for r in linked] == [f"{BASE}/p/9/"]


def test_full_asks_again_for_an_image_that_failed_and_is_there_now(crawled, servers, tmp_path: Path) -> None:
    """docs/media.md, Limits: the 404 of post 3, added to the blog since, is not asked for by an incremental
    run, in which post 3 is the same; a --full run asks for it, as a first crawl would."""
    db, _, _ = crawled
    blog, cdn = servers
    again = tmp_path / "again.db"
    again.write_bytes(db.read_bytes())
    blog.files["/img/missing.png"] = ("image/png", image("PNG", (40, 30), 11))
    try:
        blog.take_hits(), cdn.take_hits()
        media_crawl(again, blog, cdn)
        assert "/img/missing.png" not in [h.path for h in blog.take_hits()]
        media_crawl(again, blog, cdn, "--full")
        asked = [h.path for h in blog.take_hits() + cdn.take_hits() if h.path.startswith(("/img/", "/c/"))]
        assert sorted(asked) == ["/img/fake.jpg", "/img/huge.png", "/img/missing.png"]  # the archived ones: not again
        assert statuses(again) == {**statuses(db), "/img/missing.png": "ok"}
    finally:
        del blog.files["/img/missing.png"]

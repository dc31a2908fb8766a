"""An author is a person's name, never a map or a list a template printed whole (issue 48).

A Hugo theme that writes ``{{ .Site.Author }}`` where the author is a map in the site's config prints
Go's ``map[email:... github:... name:子舒]`` into ``<meta name="author">`` and JSON-LD; a real blog
had 306 of its 316 posts by that string, its RSS feed (the 10 newest only) saying ``子舒``.
"""

import json
from pathlib import Path

import pytest
from conftest import StaticServer, rows, run_cli

from crawler.extract.post import extract_post
from crawler.judge.metadata import person_name

HOST = "zishu.example"
HOME = f"https://{HOST}/"
MAP = "map[email:zishu@example.com github:zishu name:子舒]"


@pytest.mark.parametrize(("value", "name"), [
    (MAP, "子舒"),
    ("map[avatar:/img/a.png name:Jane Q. Doe twitter:jqd website:https://jqd.example/]", "Jane Q. Doe"),
    ("map[email:roman@example.com]", None),  # no name in it: the feed's or the byline's is chosen
    ("map[]", None),
    ('{"@type": "Person", "name": "Ann Lee", "url": "https://ann.example/"}', "Ann Lee"),
    ("{'name': 'Bob', 'email': 'bob@example.com'}", "Bob"),
    ('{"displayName": "Cleo"}', "Cleo"),
    ('["Ann Lee", "Bob"]', "Ann Lee, Bob"),
    ('[{"name": "Ann"}, {"name": "Bob"}]', "Ann, Bob"),
    ("[map[name:Ann] map[name:Bob]]", "Ann, Bob"),
    ('["map[email:a@b.c name:Q]"]', "Q"),
    ("[email protected]", None),  # Cloudflare's hidden address, no name
    ("[]", None),
    ("{}", None),
    ("Jane Doe", "Jane Doe"),
    ("子舒", "子舒"),
])
def test_a_serialised_author_is_read_for_its_name(value: str, name: str | None) -> None:
    assert person_name(value) == name


def post_page(n: int) -> str:
    ld = {"@context": "https://schema.org", "@type": "BlogPosting", "headline": f"第{n}篇笔记",
          "datePublished": f"2024-03-{n:02d}T10:00:00+08:00", "author": {"@type": "Person", "name": MAP}}
    return f"""<!DOCTYPE html><html lang="zh-cn"><head><meta charset="utf-8">
<title>第{n}篇笔记 - 子舒的博客</title>
<meta name="author" content="{MAP}">
<meta property="og:title" content="第{n}篇笔记"><meta property="og:type" content="article">
<meta property="article:published_time" content="2024-03-{n:02d}T10:00:00+08:00">
<link rel="alternate" type="application/rss+xml" href="{HOME}index.xml" title="子舒的博客">
<script type="application/ld+json">{json.dumps(ld, ensure_ascii=False)}</script>
</head><body><header><a href="/">子舒的博客</a><nav><a href="/">首页</a> <a href="/posts/">归档</a></nav></header>
<main><article><h1>第{n}篇笔记</h1><time datetime="2024-03-{n:02d}T10:00:00+08:00">2024-03-{n:02d}</time>
<p>这是第{n}篇笔记的正文。今天读了一本关于操作系统的书，记下内存管理、进程调度和文件系统的要点。</p>
<p>页表把虚拟地址映射到物理地址；调度器在进程之间分配时间片；文件系统用索引节点记录文件的位置。</p>
<p>Notes number {n}: paging, scheduling and inodes, written down so that they are not forgotten.</p>
</article></main><footer>© 2024 子舒</footer></body></html>"""


def hugo_blog(root: Path, posts: int = 8, in_feed: int = 3) -> None:
    """A Hugo blog whose theme prints its author map, its RSS feed holding only the newest few."""
    links = "".join(f'<li><a href="/posts/note-{n}/">第{n}篇笔记</a> <time>2024-03-{n:02d}</time></li>'
                    for n in range(posts, 0, -1))
    (root / "index.html").write_text(
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>子舒的博客</title><meta name="author" content="{MAP}">'
        f'<link rel="alternate" type="application/rss+xml" href="{HOME}index.xml"></head>'
        f"<body><main><ul>{links}</ul></main></body></html>")
    (root / "posts").mkdir()
    (root / "posts" / "index.html").write_text((root / "index.html").read_text())
    items = "".join(
        f"<item><title>第{n}篇笔记</title><link>{HOME}posts/note-{n}/</link><guid>{HOME}posts/note-{n}/</guid>"
        f"<pubDate>{n:02d} Mar 2024 10:00:00 +0800</pubDate><author>zishu@example.com (子舒)</author></item>"
        for n in range(posts, posts - in_feed, -1))
    (root / "index.xml").write_text(
        f'<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>子舒的博客</title>'
        f"<link>{HOME}</link>{items}</channel></rss>")
    for n in range(1, posts + 1):
        (root / "posts" / f"note-{n}").mkdir()
        (root / "posts" / f"note-{n}" / "index.html").write_text(post_page(n))


def test_a_page_alone_gives_the_name_in_its_authors_map() -> None:
    post = extract_post(f"{HOME}posts/note-1/", post_page(1))
    assert post is not None and post.author == "子舒"
    assert all("map[" not in str(c["value"]) for c in post.provenance if c["field"] == "author")


def test_a_crawl_names_every_post_by_its_author_not_the_map(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    hugo_blog(site)
    db = tmp_path / "archive.db"
    with StaticServer(site) as server:  # the default politeness: no --delay
        run_cli("crawl", HOME, "--db", str(db), "--map-host", f"{HOST}={server.base}", timeout=600)
    authors = {r["url"]: r["author"] for r in rows(db, "select url, author from posts")}
    assert len(authors) == 8
    assert set(authors.values()) == {"子舒"}, authors

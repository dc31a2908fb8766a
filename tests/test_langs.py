"""A post's language is what the posts.lang column says: ISO 639-1 (issue 35).

py3langid names Cantonese ``yue`` and Wu ``wuu``; a page may declare ``cmn-Hans-CN`` or
``zsm``. Each is folded to the ISO 639-1 code of its language or macrolanguage (``zh``,
``ms``), so that filtering on ``zh`` finds every Chinese post. The posts below are real text:
a Cantonese and a Shanghainese post mostly of code (the text py3langid reads), a Mandarin,
a Japanese and a Korean post, and a Malay note too short to guess (the page's ``lang`` says).
An archive's posts labelled so before are folded when it is opened.
"""

import html
import sqlite3
from dataclasses import dataclass

import pytest
from blogsite import RouteServer, html_page, xml_page
from conftest import crawl_args, rows, run_cli
from sqlite_utils import Database

from archive import open_archive
from archive.core.langs import iso639_1
from archive.core.schema import migrations
from archive.search.index import register_functions

from crawler.extract.post import extract_post

HOST = "langs.test"

FETCH = """import asyncio
import aiohttp

async def fetch(session, url):
    async with session.get(url) as response:
        return await response.text()

async def main(urls):
    async with aiohttp.ClientSession() as session:
        pages = await asyncio.gather(*(fetch(session, u) for u in urls))
        for url, page in zip(urls, pages):
            print(url, len(page))

urls = [line.strip() for line in open("urls.txt") if line.strip()]
asyncio.run(main(urls))
"""

BACKUP = """#!/bin/sh
set -eu
if ! mountpoint --quiet /backup; then
    echo "/backup is not mounted" >&2
    exit 1
fi
stamp=$(date +%Y%m%d)
tar --create --gzip --file "/backup/home-$stamp.tar.gz" --exclude "*.cache" /home
find /backup -name "home-*.tar.gz" -mtime +30 -delete
rsync --archive --delete /backup/ nas:/volume1/backup/
echo "backup of /home finished at $(date --iso-8601=seconds)" >> /var/log/home-backup.log
du --summarize --human-readable /backup >> /var/log/home-backup.log
"""

TIMER = """# /etc/systemd/system/backup.service
[Unit]
Description=Back up /home to the NAS

[Service]
Type=oneshot
ExecStart=/usr/local/bin/home-backup.sh

# /etc/systemd/system/backup.timer
[Unit]
Description=Back up /home every night

[Timer]
OnCalendar=*-*-* 03:00:00
Persistent=true

[Install]
WantedBy=timers.target
"""


@dataclass
class Post:
    path: str
    page_lang: str  # the page's <html lang>
    title: str
    before: str  # a paragraph before the code
    code: str
    after: str  # and after it
    lang: str  # what posts.lang must hold

    def page(self) -> str:
        code = f"<pre><code>{html.escape(self.code)}</code></pre>" if self.code else ""
        after = f"<p>{self.after}</p>" if self.after else ""
        return (f'<!DOCTYPE html><html lang="{self.page_lang}"><head><meta charset="utf-8"><title>{self.title}</title>'
                '<meta property="og:type" content="article"></head><body><main><article>'
                f"<h1>{self.title}</h1><p>{self.before}</p>{code}{after}</article></main></body></html>")


POSTS = [
    Post("/posts/asyncio/", "yue-Hant-HK", "用 asyncio 一次過攞幾百個網頁",
         "呢排公司要我寫個爬蟲，一次過攞幾百個網頁。我試咗用 requests 一個一個咁攞，慢到死。"
         "後來轉用 asyncio 同 aiohttp，快咗好多。以下係我嘅做法：",
         FETCH, "記住唔好一次過開太多連線，唔係人哋個伺服器會封你。", "zh"),
    Post("/posts/backup/", "wuu-Hans", "屋里向个备份脚本",
         "阿拉屋里向有一只 NAS，老早就想每日自家备份一趟。迭只脚本是我上个礼拜写个，侬要用个言话拿路径改一改就可以了：",
         BACKUP, "每日夜里三点钟 cron 跑一趟，三十日之前个备份会自家删脱。", "zh"),
    Post("/posts/static-site/", "cmn-Hans-CN", "博客搬家记",
         "上周末终于把博客从 WordPress 搬到了静态网站生成器上。以前每次更新插件都提心吊胆，"
         "现在写完文章直接推送到仓库，几秒钟就能发布。唯一的遗憾是评论功能需要另外找办法解决。",
         "", "", "zh"),
    Post("/posts/systemd-timer/", "ja-JP", "バックアップを systemd のタイマーで回す",
         "自宅サーバーのバックアップを cron から systemd のタイマーに移しました。"
         "状態が見やすく、失敗したときのログも残ります。設定は次の二つのファイルだけです。",
         TIMER, "最後に systemctl enable --now backup.timer で有効にすれば完了です。", "ja"),
    Post("/posts/home-server/", "ko-KR", "오래된 노트북을 서버로",
         "지난주에 집에 있는 오래된 노트북을 작은 서버로 바꿨습니다. 리눅스를 새로 설치하고 파일 공유와 사진 백업을 "
         "돌리고 있는데, 전기도 적게 먹고 소음도 거의 없어서 만족스럽습니다. 다음에는 이 서버에 블로그를 직접 올려 볼 생각입니다.",
         "", "", "ko"),
    Post("/posts/pelayan/", "zsm-MY", "Pelayan kecil",
         "Hari ini saya memasang pelayan kecil di rumah. Ringkas dan senyap.", "", "", "ms"),
]


@pytest.mark.parametrize(("code", "lang"), [
    ("wuu", "zh"), ("yue-HK", "zh"), ("cmn-Hans-CN", "zh"), ("zh-Hans", "zh"), ("zh_TW", "zh"), ("ZH-cn", "zh"),
    ("jpn", "ja"), ("kor", "ko"), ("arz", "ar"), ("zsm", "ms"), ("nob", "nb"), ("kik", "ki"),
    # a language's own two-letter code, never its macrolanguage's: Indonesian and Croatian are not Malay
    # nor Serbo-Croatian
    ("id", "id"), ("ind", "id"), ("hrv", "hr"), ("en-us", "en"),
    # no two-letter code for the language nor its macrolanguage: its ISO 639-3 code
    ("gom", "gom"), ("", None), (None, None),
])
def test_codes_fold_to_iso_639_1(code: str | None, lang: str | None) -> None:
    assert iso639_1(code) == lang


@pytest.mark.parametrize("post", POSTS, ids=lambda p: p.path.strip("/").split("/")[-1])
def test_extracted_post_has_an_iso_639_1_code(post: Post) -> None:
    got = extract_post(f"http://{HOST}{post.path}", post.page())
    assert got is not None and got.text
    assert got.lang == post.lang


def test_crawled_chinese_posts_are_zh(tmp_path) -> None:
    items = "".join(f"<item><title>{p.title}</title><link>http://{HOST}{p.path}</link>"
                    "<pubDate>Mon, 01 Dec 2025 08:00:00 +0000</pubDate></item>" for p in POSTS)
    feed = f'<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>Langs</title>' \
           f"<link>http://{HOST}/</link><description>Posts</description>{items}</channel></rss>"
    routes = {"/feed.xml": xml_page(feed, "application/rss+xml"), **{p.path: html_page(p.page()) for p in POSTS}}
    db = tmp_path / "archive.db"
    with RouteServer(routes) as server:
        run_cli(*crawl_args(f"http://{HOST}/feed.xml", db, {HOST: server.base}))
    got = {r["url"]: r["lang"] for r in rows(db, "select url, lang from posts")}
    assert got == {f"http://{HOST}{p.path}": p.lang for p in POSTS}
    chinese = rows(db, "select url from posts where lang = 'zh'")
    assert len(chinese) == 3


def test_an_archive_from_before_is_folded(db_path) -> None:
    old = Database(sqlite3.connect(db_path))
    register_functions(old.conn)  # the posts' triggers index their words
    migrations.apply(old, stop_before="fold_post_languages")
    old["sources"].insert({"id": 1, "name": "blog", "url": "https://blog.test/", "scope": "https://blog.test/", "enabled": 1})
    before = {1: "wuu", 2: "yue", 3: "zh", 4: "cmn", 5: "en", 6: "zsm", 7: None, 8: "gom"}
    old["posts"].insert_all({"id": i, "source_id": 1, "url": f"https://blog.test/p/{i}", "title": f"post {i}",
                             "text": "内存", "lang": lang} for i, lang in before.items())
    old.close()
    db = open_archive(db_path)
    assert migrations.pending(db) == []
    assert dict(db.execute("select id, lang from posts order by id").fetchall()) == {
        1: "zh", 2: "zh", 3: "zh", 4: "zh", 5: "en", 6: "ms", 7: None, 8: "gom"}

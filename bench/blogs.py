"""Realistic synthetic blogs for the benchmark, written as a static site.

One bilingual blog (every other post in Chinese) shaped like a Hugo site:
home page and ``/page/N/`` listings of ten posts, ``/posts/YYYY/MM/slug/``
pages of 30 to 45 kB (theme CSS, JSON-LD, nav, sidebar with recent posts and
a tag cloud, related posts, three comments: about 55 links each), ``/tags/``
and one page per tag, ``/about/``, an RSS feed of the newest 20 posts,
``sitemap.xml`` (with each post's ``lastmod``) and ``robots.txt``.
Deterministic: the same size and base give the same bytes. ``change_site``
changes it as a blog does: new posts, old ones edited (their ``lastmod``
moves), some deleted; only the files whose bytes change are written again.
"""

import html
import json
import random
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

PER_PAGE = 10
FEED_SIZE = 20
TAGS = ("python", "sqlite", "linux", "networking", "databases", "compilers", "rust", "memory", "search",
        "crawling", "performance", "testing", "security", "unicode", "http", "caching", "concurrency",
        "algorithms", "tools", "notes")
EN_WORDS = (
    "the of and to in a is that for it as was with be by on not he this are or his from at which but have an "
    "they you were their one all we can her has there been if more when will would who so no system data "
    "memory database query index latency throughput cache server request response thread process kernel "
    "buffer file disk page table column row network packet socket protocol compiler parser token grammar "
    "function variable type value object class method module package library version release build test "
    "benchmark profile result measure time second minute hour day week month year people work way problem "
    "question answer example reason idea point case fact part place number group program code design change "
    "small large fast slow simple hard easy good better best first last long short new old early late "
    "because although while before after since until during between without within against through"
).split()
ZH_CHARS = (
    "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后"
    "多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合"
    "还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只"
    "没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边"
    "流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造"
    "百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例"
    "真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且"
)
ZH_TERMS = ("数据库", "内存", "算法", "服务器", "缓存", "编译器", "性能", "并发", "索引", "网络")
STYLE = "\n".join(
    f".c{i} {{ margin: {i % 7}px {i % 5}px; padding: {i % 3}px; color: #{i * 2654435761 % 0xFFFFFF:06x}; }}"
    for i in range(120)
)
ICON = ('<svg class="icon" viewBox="0 0 24 24" width="16" height="16" aria-hidden="true"><path d="M12 2C6.48 2 2 6.48 '
        '2 12s4.48 10 10 10 10-4.48 10-10S17.52 2 12 2zm1 15h-2v-6h2v6zm0-8h-2V7h2v2z M4 4h16v16H4z M8 8h8v8H8z"/></svg>')
SHARE = "".join(f'<a class="share share-{n}" href="#share-{n}">{ICON}<span>{n}</span></a>'
                for n in ("twitter", "weibo", "mastodon", "telegram", "email", "copy"))


@dataclass
class Post:
    number: int
    lang: str
    title: str
    slug: str
    published: datetime
    tags: list[str]
    paragraphs: list[str]
    updated: datetime | None = None

    @property
    def path(self) -> str:
        return f"/posts/{self.published:%Y/%m}/{self.slug}/"


def _english(rng: random.Random, words: int) -> str:
    sentences = []
    while words > 0:
        n = rng.randint(8, 20)
        sentences.append(" ".join(rng.choices(EN_WORDS, k=n)).capitalize() + ".")
        words -= n
    return " ".join(sentences)


def _chinese(rng: random.Random, chars: int) -> str:
    sentences = []
    while chars > 0:
        parts = []
        for _ in range(rng.randint(2, 4)):
            part = "".join(rng.choices(ZH_CHARS, k=rng.randint(5, 12)))
            if rng.random() < 0.3:
                part += rng.choice(ZH_TERMS)
            parts.append(part)
        sentence = "，".join(parts) + "。"
        sentences.append(sentence)
        chars -= len(sentence)
    return "".join(sentences)


def make_posts(count: int) -> list[Post]:
    """``count`` posts, newest last, evenly over the ten years from 2015 on (never in the future)."""
    start = datetime(2015, 1, 1, 8, tzinfo=timezone.utc)
    step = timedelta(days=3650) / count
    posts = []
    for i in range(count):
        rng = random.Random(f"post-{i}")
        lang = "zh" if i % 2 else "en"
        if lang == "en":
            title = _english(rng, 6).rstrip(".")[:70]
            paragraphs = [_english(rng, rng.randint(80, 140)) for _ in range(rng.randint(10, 16))]
        else:
            title = _chinese(rng, 14).rstrip("。")[:24]
            paragraphs = [_chinese(rng, rng.randint(150, 260)) for _ in range(rng.randint(10, 16))]
        posts.append(Post(i, lang, title, f"post-{i}", (start + step * i).replace(microsecond=0),
                          sorted(rng.sample(TAGS, 3)), paragraphs))
    return posts


class Site:
    def __init__(self, posts: list[Post], base: str):
        self.posts = posts
        self.newest = posts[::-1]
        self.base = base.rstrip("/")
        self.by_tag = {t: [p for p in self.newest if t in p.tags] for t in TAGS}

    def write(self, root: Path) -> list[str]:
        """Write the site under ``root``; return every page's URL (what the sitemap lists)."""
        pages = {"/": self._listing(1), "/about/": self._about(), "/tags/": self._tags()}
        for number in range(2, (len(self.posts) - 1) // PER_PAGE + 2):
            pages[f"/page/{number}/"] = self._listing(number)
        for tag in TAGS:
            pages[f"/tags/{tag}/"] = self._tag(tag)
        for i, post in enumerate(self.posts):
            pages[post.path] = self._post(post, i)
        for path, text in pages.items():
            _write(root / path.strip("/") / "index.html", text)
        _write(root / "index.xml", self._feed())
        _write(root / "sitemap.xml", self._sitemap(list(pages)))
        _write(root / "robots.txt", f"User-agent: *\nAllow: /\nSitemap: {self.base}/sitemap.xml\n")
        return [self.base + path for path in pages]

    def _head(self, title: str, path: str, lang: str = "en", extra: str = "") -> str:
        return (
            f'<!DOCTYPE html>\n<html lang="{lang}"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html.escape(title)} | Field Notes</title>"
            f'<link rel="canonical" href="{self.base}{path}">'
            f'<link rel="alternate" type="application/rss+xml" title="Field Notes" href="{self.base}/index.xml">'
            f'<link rel="stylesheet" href="/css/main.css"><style>{STYLE}</style>{extra}</head>\n'
        )

    def _header(self) -> str:
        return ('<header class="site"><a class="brand" href="/">Field Notes</a><nav><a href="/">Home</a> '
                '<a href="/tags/">Tags</a> <a href="/about/">About</a> <a href="/index.xml">RSS</a></nav></header>\n')

    def _sidebar(self) -> str:
        recent = "".join(f'<li><a href="{p.path}">{html.escape(p.title)}</a></li>' for p in self.newest[:10])
        cloud = " ".join(f'<a class="tag" href="/tags/{t}/">{t}</a>' for t in TAGS)
        return (f'<aside class="sidebar"><section><h3>Recent posts</h3><ul>{recent}</ul></section>'
                f'<section><h3>Tags</h3><div class="cloud">{cloud}</div></section></aside>\n')

    def _footer(self) -> str:
        return ('<footer><p>© 2015–2025 Field Notes · <a href="/about/">About</a> · '
                '<a href="/index.xml">RSS</a></p><script>document.body.classList.add("js")</script></footer>'
                "</body></html>\n")

    def _summary(self, post: Post) -> str:
        return post.paragraphs[0][:160]

    def _listing(self, number: int) -> str:
        chunk = self.newest[(number - 1) * PER_PAGE : number * PER_PAGE]
        items = "".join(
            f'<article class="summary"><h2><a href="{p.path}">{html.escape(p.title)}</a></h2>'
            f'<time datetime="{p.published:%Y-%m-%dT%H:%M:%SZ}">{p.published:%Y-%m-%d}</time>'
            f"<p>{html.escape(self._summary(p))}</p></article>"
            for p in chunk
        )
        pager = ""
        if number > 1:
            pager += f'<a rel="prev" href="{"/" if number == 2 else f"/page/{number - 1}/"}">Newer</a> '
        if number * PER_PAGE < len(self.posts):
            pager += f'<a rel="next" href="/page/{number + 1}/">Older</a>'
        path = "/" if number == 1 else f"/page/{number}/"
        return (self._head("Field Notes" if number == 1 else f"Page {number}", path, extra='<meta property="og:type" content="website">')
                + "<body>" + self._header() + f'<main class="list">{items}<nav class="pager">{pager}</nav></main>'
                + self._sidebar() + self._footer())

    def _tags(self) -> str:
        items = "".join(f'<li><a href="/tags/{t}/">{t}</a> ({len(self.by_tag[t])})</li>' for t in TAGS)
        return self._head("Tags", "/tags/") + "<body>" + self._header() + f"<main><h1>Tags</h1><ul>{items}</ul></main>" + self._footer()

    def _tag(self, tag: str) -> str:
        items = "".join(f'<li><a href="{p.path}">{html.escape(p.title)}</a> {p.published:%Y-%m-%d}</li>'
                        for p in self.by_tag[tag][:20])
        return (self._head(f"Tag: {tag}", f"/tags/{tag}/") + "<body>" + self._header()
                + f"<main><h1>Posts tagged {tag}</h1><ul>{items}</ul></main>" + self._sidebar() + self._footer())

    def _about(self) -> str:
        return (self._head("About", "/about/", extra='<meta property="og:type" content="website">') + "<body>"
                + self._header() + "<main><h1>About</h1><p>Notes on systems, databases and tools, in English "
                "and in Chinese, written since 2015.</p></main>" + self._footer())

    def _post(self, post: Post, index: int) -> str:
        when = f"{post.published:%Y-%m-%dT%H:%M:%SZ}"
        ld = json.dumps({"@context": "https://schema.org", "@type": "BlogPosting", "headline": post.title,
                         "datePublished": when, "author": {"@type": "Person", "name": "Lin Wei"},
                         "keywords": post.tags}, ensure_ascii=False)
        meta = (f'<meta property="og:type" content="article"><meta property="og:title" content="{html.escape(post.title)}">'
                f'<meta name="description" content="{html.escape(self._summary(post))}">'
                f'<meta property="article:published_time" content="{when}">'
                + "".join(f'<meta property="article:tag" content="{t}">' for t in post.tags)
                + f'<script type="application/ld+json">{ld}</script>')
        body = []
        for n, paragraph in enumerate(post.paragraphs):
            if n == 3:
                body.append("<h2>" + ("Details" if post.lang == "en" else "细节") + "</h2>")
            if n == 5:
                body.append(f"<pre><code>for i in range({n + index % 7}):\n    cache[i] = query(i)\n</code></pre>")
            if n == 6:
                body.append("<ul>" + "".join(f"<li>{html.escape(paragraph[k * 30:k * 30 + 30])}</li>" for k in range(3)) + "</ul>")
            if n == 8:
                cells = "".join(f"<tr><td>{k}</td><td>{(index * 7 + k * 13) % 1000} ms</td><td>{html.escape(paragraph[k * 9:k * 9 + 9])}</td></tr>"
                                for k in range(6))
                body.append(f'<table class="c{index % 120}"><thead><tr><th>run</th><th>time</th><th>note</th></tr></thead>'
                            f"<tbody>{cells}</tbody></table>")
            body.append(f"<p>{html.escape(paragraph)}</p>")
        tags = " ".join(f'<a rel="tag" href="/tags/{t}/">{t}</a>' for t in post.tags)
        around = [self.posts[j] for j in (index - 1, index + 1) if 0 <= j < len(self.posts)]
        prev_next = " ".join(f'<a href="{p.path}">{html.escape(p.title)}</a>' for p in around)
        related = "".join(f'<li><a href="{p.path}">{html.escape(p.title)}</a></li>'
                          for p in self.by_tag[post.tags[0]][index % 7 : index % 7 + 5])
        comments = "".join(
            f'<div class="comment"><p class="who">reader{(index + k) % 97} · {post.published:%Y-%m-%d}</p>'
            f"<p>{'Thanks, this helped a lot.' if post.lang == 'en' else '谢谢分享，很有帮助。'} #{k}</p></div>"
            for k in range(6)
        )
        return (
            self._head(post.title, post.path, post.lang, meta) + "<body>" + self._header()
            + '<div class="wrap"><div class="container"><div class="row"><div class="col col-main">'
            + f'<main><article class="post"><h1>{html.escape(post.title)}</h1>'
            f'<p class="meta"><time datetime="{when}">{post.published:%Y-%m-%d}</time> · Lin Wei · {tags}</p>'
            f'<div class="share-bar">{SHARE}</div><div class="content">{"".join(body)}</div>'
            f'<div class="share-bar">{SHARE}</div></article>'
            f'<nav class="prev-next">{prev_next}</nav><section class="related"><h3>Related</h3><ul>{related}</ul></section>'
            f'<section id="comments"><h3>Comments</h3>{comments}</section></main></div>'
            + '<div class="col col-side">' + self._sidebar() + "</div></div></div></div>" + self._footer()
        )

    def _feed(self) -> str:
        items = "".join(
            f"<item><title>{html.escape(p.title)}</title><link>{self.base}{p.path}</link>"
            f"<guid>{self.base}{p.path}</guid><pubDate>{p.published:%a, %d %b %Y %H:%M:%S +0000}</pubDate>"
            f"<description>{html.escape(self._summary(p))}</description></item>"
            for p in self.newest[:FEED_SIZE]
        )
        return (f'<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Field Notes</title>'
                f"<link>{self.base}/</link><description>Field Notes</description>{items}</channel></rss>")

    def _sitemap(self, paths: list[str]) -> str:
        dates = {p.path: p.updated or p.published for p in self.posts}
        urls = "".join(f"<url><loc>{self.base}{p}</loc>" + (f"<lastmod>{dates[p]:%Y-%m-%dT%H:%M:%SZ}</lastmod>" if p in dates else "")
                       + "</url>" for p in paths)
        return f'<?xml version="1.0" encoding="utf-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'


def write_site(root: Path, count: int, base: str) -> tuple[list[str], list[Post]]:
    """Write a blog of ``count`` posts served at ``base`` under ``root``; its page URLs and posts."""
    posts = make_posts(count)
    return Site(posts, base).write(root), posts


def change_site(root: Path, posts: list[Post], base: str, *, added: int, edited: int, deleted: int) -> dict[str, list[str]]:
    """Change the blog written by ``write_site`` as a blog does: ``added`` new posts, ``edited`` old ones
    given a paragraph (half of them in the feed, their ``lastmod`` moved), ``deleted`` removed (one in the
    feed, the rest older). Rewrites the files that changed; returns the paths of the posts of each kind."""
    newest = posts[::-1]
    window, older = newest[:FEED_SIZE], newest[FEED_SIZE:]
    inside, outside = edited // 2, edited - edited // 2
    step = max(1, len(older) // (outside + 1))
    edits = window[1 : 1 + inside] + older[step::step][:outside]
    gone = [window[-1], *older[len(older) - (deleted - 1) :]] if deleted else []
    now = datetime.now(timezone.utc).replace(microsecond=0)
    for post in edits:
        post.paragraphs = [*post.paragraphs, f"Edited on {now:%Y-%m-%d}: {EDIT_MARK} {post.number}."]
        post.updated = now
    for post in gone:
        posts.remove(post)
        folder = root / post.path.strip("/")
        (folder / "index.html").unlink()
        folder.rmdir()  # a static server would list an empty folder
    rng = random.Random("added")
    first = max(p.number for p in posts) + 1
    for number in range(first, first + added):
        posts.append(Post(number, "en", f"Added post {number}", f"added-{number}", posts[-1].published + timedelta(days=1),
                          sorted(rng.sample(TAGS, 3)), [_english(rng, 120) for _ in range(10)]))
    Site(posts, base).write(root)
    return {"added": [p.path for p in posts[-added:]] if added else [], "edited": [p.path for p in edits],
            "deleted": [p.path for p in gone]}


EDIT_MARK = "a paragraph the benchmark added to this post"


def _write(path: Path, text: str) -> None:
    """Write ``text`` unless the file holds it already (a static server's Last-Modified stays)."""
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")

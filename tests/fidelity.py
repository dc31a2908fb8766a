"""The fidelity scorer: how faithfully a crawl archives real blogs, field by field (``make fidelity``).

``python tests/fidelity.py [NAME ...] [--out docs/fidelity.md] [--json FILE] [--jobs 1] [--verbose] [--no-feeds]
[--sets DIR | --sets-json FILE | --no-sets | --sets-only]``

Each blog of the corpus (``tests/corpus/NAME/``, see its README; a folder
without ``truth.json`` is still being written and is skipped) and each of the
three real blogs in ../shared (their truth is ``tests/truth.py``'s) is served
from its ``site/`` on 127.0.0.1, crawled through the ``blogarchive`` command
line with every internal host mapped to the server, and its ``posts`` table is
compared with the truth:

- posts: a row is a truth post when its URL path (decoded, ``index.html``
  dropped) or one of its ``post_aliases`` is the post's path; rows marked gone
  are left out. Recall is the share of truth posts found, precision the share
  of rows that are truth posts, duplicates the rows beyond the first of a post.
- title: equal after undoing what generators do when they render a title (NFKC,
  typographic quotes and dashes, YAML escapes, runs of white space); case counts.
- date day: a truth time in UTC against the archived time in UTC. A date-only
  truth is a day in the blog's zone, so the archived time is converted to that
  zone (the most common offset of the blog's other truth dates; when none has
  one, the offset its pages and feeds print most; else UTC) before its day is
  read: a post stored at midnight of its day in the blog's zone (what
  ``archive.core.dates.parse_date`` makes of a date-only value given the blog's zone)
  matches, and so does any time within that day.
- date time: to the minute in UTC, only where the truth has a time.
- author: equal after folding case and white space; only where the pages show one.
- tags: F1 of the case-folded sets, averaged over posts; only where pages show tags.
- text: F1 of the bags of words of the archived ``text`` and of the source with
  its markup removed (``source_words``); protected posts are left out, and only
  checked for being marked ``protected`` (where the archive has that column) and
  for ciphertext kept as text (``is_ciphertext``).
- trafilatura text F1: the same measure for ``trafilatura.bare_extraction(page,
  include_comments=False)`` alone on each scored post's page in ``site/``.

With the public single-page sets of ``tests/page_sets.py`` checked out (see its
docstring; ``--sets DIR``), their table (blogarchive beside trafilatura) follows.
"""

from __future__ import annotations

import argparse
import html
import json
import math
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import unicodedata
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone, tzinfo
from pathlib import Path
from urllib.parse import unquote, urlsplit

import markdown
from dateutil import parser as dateutil_parser
from lxml import html as lxml_html
from trafilatura import bare_extraction

from archive.core.copies import COPY

from crawler.discover.feeds import looks_like_feed

if str(Path(__file__).resolve().parent) not in sys.path:  # run as a command
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import ROOT, QuietHandler, StaticServer, crawl_args, run_cli  # noqa: E402
from truth import (  # noqa: E402
    REAL_BLOGS,
    TAGS_SHOWN,
    as_list,
    blog_info,
    front_matter,
    norm_title,
    truth_posts,
    truth_published,
    unescape_yaml,
)
from truth import blog_names as shared_names  # noqa: E402

CORPUS = ROOT / "tests" / "corpus"
CI_SUBSET = CORPUS / "ci-subset.txt"
CRAWL_TIMEOUT = 240  # seconds; the largest blog takes under 30
# The Done-when thresholds of the corpus (issue 11); tests/test_fidelity.py asserts them.
THRESHOLDS = {"recall": 1.0, "precision": 1.0, "title": 0.99, "date_day": 0.99,
              "author": 0.95, "tags": 0.95, "text": 0.95}

CJK = "\u1100-\u11ff\u2e80-\u2fdf\u3040-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
# A CJK character is a word by itself; other words are runs of letters and digits.
WORD = re.compile(f"[{CJK}]|[^\\W_{CJK}]+")
FRONT_MATTER = re.compile(r"\A\ufeff?(-{3}|\+{3})[ \t]*\r?\n.*?^(?:\1|\.\.\.)[ \t]*$\n?", re.S | re.M)
# Hexo allows front matter closed by "---" with no opening line.
BARE_FRONT_MATTER = re.compile(r"\A(?:[\w-]+:.*\n(?:[ \t]+.*\n|-[ \t].*\n)*)+-{3}[ \t]*$\n?", re.M)
# Pelican's (and MultiMarkdown's) metadata: "Title: ..." lines up to the first blank line.
KEY_LINES = re.compile(r"\A\ufeff?(?:title|date)[ \t]*:.*\n(?:.+\n)*?(?:[ \t]*\n|\Z)", re.I)
# reStructuredText: the title and its underline, docinfo fields (":date: ..."), and explicit markup
# lines: directives (their indented content stays), link targets, comments (Nikola's ".. title: ...").
RST_MARKUP = re.compile(r"\A\s*.+\n[=#*~^\-]{3,}\n|^:[\w-]+:.*$|^\.\. .*$", re.M)
MDX_LINES = re.compile(r"^(?:import|export)\s.*$", re.M)
HTML_COMMENT = re.compile(r"<!--.*?-->|\{/\*.*?\*/\}", re.S)
# Hexo/Jekyll tags ({% note %}, {% endnote %}) and Hugo shortcodes ({{< x >}}, {{% /x %}}):
# the delimiters go, the text between a paired opening and closing stays.
GENERATOR_TAG = re.compile(r"\{%-?.*?-?%\}|\{\{<.*?>\}\}|\{\{%.*?%\}\}", re.S)
ORG_KEYWORD = re.compile(r"^#\+\w+:.*$", re.M)
FENCE = re.compile(r"^([ \t]*(?:`{3,}|~{3,})).*?^\1[ \t]*$", re.M | re.S)
# A Quarto or R Markdown chunk's option lines (#| echo: false), which the page never shows.
CHUNK_OPTION = re.compile(r"^[ \t]*(?:#|//)\|[ \t]*([\w.-]+):[ \t]*(.*?)[ \t]*$", re.M)
# Pandoc's fenced divs (::: {.panel-tabset}, :::), markup that Quarto's pages never show.
DIV_FENCE = re.compile(r"^[ \t]*:{3,}.*$", re.M)
# Goldmark's fence attributes (```js {linenos=table}) that Python-Markdown would print as text.
FENCE_ATTRIBUTES = re.compile(r"^([ \t]*(?:`{3,}|~{3,})[ \t]*[\w+#.-]*)[ \t]*\{[^}\n]*\}[ \t]*$", re.M)
# A time with its offset as pages and feeds print it: 2013-10-18 00:00:00 +0200, ...T10:20:00+08:00.
PRINTED_OFFSET = re.compile(r"\d\d:\d\d(?::\d\d)?(?:\.\d+)?\s?([+-])(\d\d):?(\d\d)\b")
CIPHERTEXT = re.compile(r"[A-Za-z0-9+/=]{200,}")
# A client-side route (docsify's #/post, #!/post), without what follows its "?" (a place in the page).
HASH_ROUTE = re.compile(r"^(!?/[^?/][^?]*)")
# The stat a crawl's log dumps when it started a browser (crawler/fetch/render.py).
BROWSER_STARTED = re.compile(r"'render/started': (\d+)")
DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
MARKDOWN_EXTENSIONS = ["extra", "sane_lists"]
BLOCKS = ("p", "div", "li", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "table", "tr",
          "td", "th", "br", "hr", "ul", "ol", "dl", "figure", "figcaption")
FIELDS = ["recall", "precision", "duplicates", "title", "date_day", "date_time", "author", "tags", "text",
          "trafilatura_text"]
# Mismatches read first: whole posts, then fields by how much a reader notices them.
SEVERITY = ["missing", "extra", "duplicate", "ciphertext", "protected", "title", "date_day", "date_time",
            "author", "tags", "text"]


@dataclass
class TruthPost:
    """One post as its author wrote it."""

    path: str  # URL path, decoded, without index.html
    title: str | None
    published: str | None  # ISO 8601, or YYYY-MM-DD for a date without time
    author: str | None = None
    tags: list[str] = field(default_factory=list)
    protected: bool = False
    shows_tags: bool | None = None  # this post's page, where it differs from the blog's (another layout)
    shows_text: bool = True  # False: the generator built the page without the post's body
    linked: bool = True  # False: no page, feed or sitemap of the served site leads to it
    source: Path | None = None  # the source file, for the text


@dataclass
class Blog:
    """A blog to crawl and the truth to score it against."""

    name: str
    origin: str  # "corpus" or "shared"
    site: Path
    start: str
    hosts: list[str]
    posts: list[TruthPost]
    shows_author: bool
    shows_tags: bool
    tags_shown: int | None = None  # the pages show at most this many tags of a post
    generator: str = ""
    client_rendered: bool = False  # its pages are shells its scripts fill: it needs a browser, a static blog never does


# ---------------------------------------------------------------- the blogs


def corpus_names() -> list[str]:
    """The corpus blogs that are complete (their ``blog.json`` and ``truth.json`` are written)."""
    return sorted(p.parent.name for p in CORPUS.glob("*/truth.json") if (p.parent / "blog.json").is_file())


def all_names() -> list[str]:
    """Every blog there is to score: the corpus, then the three shared blogs."""
    return corpus_names() + (shared_names() if REAL_BLOGS.is_dir() else [])


def ci_subset() -> list[str]:
    """The corpus blogs CI crawls (``tests/corpus/ci-subset.txt``, one name a line, ``#`` comments)."""
    if not CI_SUBSET.is_file():
        return []
    lines = (line.split("#", 1)[0].strip() for line in CI_SUBSET.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line]


def load_blog(name: str) -> Blog:
    """The corpus blog ``name``, or else the shared real blog of that name.

    Raises:
        ValueError: when there is no such blog, or its truth is not written yet.
    """
    folder = CORPUS / name
    if (folder / "truth.json").is_file() and (folder / "blog.json").is_file():
        return corpus_blog(folder)
    if REAL_BLOGS.is_dir() and name in shared_names():
        return shared_blog(name)
    raise ValueError(f"no blog {name!r} with a blog.json and a truth.json in {CORPUS} or {REAL_BLOGS}")


def corpus_blog(folder: Path) -> Blog:
    """A corpus blog from its ``blog.json`` and ``truth.json``."""
    info = json.loads((folder / "blog.json").read_text(encoding="utf-8"))
    truth = json.loads((folder / "truth.json").read_text(encoding="utf-8"))
    posts = [
        TruthPost(
            path=path_key(p["path"]), title=p.get("title"), published=p.get("published"),
            author=p.get("author"), tags=as_list(p.get("tags")), protected=bool(p.get("protected")),
            shows_tags=p.get("shows_tags"), shows_text=p.get("shows_text", True),
            linked=p.get("linked", True),
            source=_source_file(folder, p.get("source")),
        )
        for p in truth["posts"]
    ]
    return Blog(
        name=folder.name, origin="corpus", site=folder / "site", start=info["start"],
        hosts=list(info["internal_hosts"]), posts=posts, shows_author=bool(truth.get("shows_author")),
        shows_tags=bool(truth.get("shows_tags")), generator=info.get("generator", ""),
        client_rendered=bool(info.get("client_rendered")),
    )


def _source_file(folder: Path, source: str | None) -> Path | None:
    if not source:
        return None
    for candidate in (folder / source, folder / "source" / source):
        if candidate.is_file():
            return candidate
    return None


def shared_blog(name: str) -> Blog:
    """One of the three real blogs in ../shared, its truth read by ``tests/truth.py``.

    Their post pages show no author byline that the truth records, so authors are
    not scored there; andyibanez's pages show at most six tags of a post.
    """
    info = blog_info(name)
    posts = []
    for path, row in truth_posts(name).items():
        published = truth_published(name, row)
        matter = front_matter(name, row["source_path"])
        posts.append(TruthPost(
            path=path_key(path), title=unescape_yaml(row["title"]),
            published=published.isoformat() if published else None,
            tags=as_list(matter.get("tags")), source=REAL_BLOGS / name / "source" / row["source_path"],
        ))
    return Blog(
        name=name, origin="shared", site=REAL_BLOGS / name / "site", start=info["original_site"],
        hosts=list(info["internal_hosts"]), posts=posts, shows_author=False, shows_tags=True,
        tags_shown=TAGS_SHOWN.get(name), generator=info.get("generator", ""),
    )


# ---------------------------------------------------------------- normalisation and measures


def path_key(url_or_path: str) -> str:
    """A URL's path as the truth writes it: decoded, ``index.html`` removed; with its hash route
    (``/#/post``, decoded, its ``?id=`` anchor dropped) where it has one, which is a page of its own."""
    parts = urlsplit(url_or_path)
    path = (unquote(parts.path) or "/").removesuffix("index.html") or "/"
    route = HASH_ROUTE.match(unquote(parts.fragment))
    return path + "#" + route[1] if route else path


def title_key(title: str | None) -> str:
    """A title without what generators change when rendering it (case is kept)."""
    return norm_title(unescape_yaml(html.unescape(title or "")))


def author_key(author: str | None) -> str:
    return " ".join(unicodedata.normalize("NFKC", author or "").casefold().split())


def words(text: str | None) -> Counter[str]:
    """The bag of words of a text: lower-cased runs of letters and digits, and CJK characters one by one."""
    return Counter(WORD.findall(unicodedata.normalize("NFKC", text or "").casefold()))


def strip_front_matter(text: str) -> str:
    """A source file without its front matter: YAML (``---``), TOML (``+++``), Hexo's without an
    opening line, or Pelican's ``Title:`` lines."""
    text = text.replace("\r\n", "\n")
    match = FRONT_MATTER.match(text) or BARE_FRONT_MATTER.match(text) or KEY_LINES.match(text)
    return text[match.end():] if match else text


def source_text(source: str, suffix: str = ".md", *, tags_in_code: bool = False) -> str:
    """What a reader sees of a source file: markup, front matter, generator tags and comments removed.

    Markdown is rendered with the ``markdown`` package and the text of its HTML
    taken: images dropped, link text kept (not URLs), code kept. HTML sources
    are read as HTML; reStructuredText loses its title, fields and explicit markup lines,
    Org its ``#+KEYWORD:`` lines, and both keep the rest as written.

    Args:
        source: the file's text.
        suffix: the file's extension, which tells its format.
        tags_in_code: whether generator tags inside fenced code blocks are shown as written
            (Hexo renders code blocks first; Jekyll's Liquid and Hugo's shortcodes run inside them).
    """
    body = FENCE_ATTRIBUTES.sub(r"\1", strip_front_matter(source))
    if tags_in_code:
        parts, end = [], 0
        for fence in FENCE.finditer(body):
            parts += [_without_tags(body[end:fence.start()]), fence[0]]
            end = fence.end()
        body = "".join([*parts, _without_tags(body[end:])])
    else:
        body = _without_tags(body)
    suffix = suffix.lower()
    if suffix in {".md", ".markdown", ".mdown", ".mkd", ".mdx", ".qmd", ".rmd", ""}:
        if suffix == ".mdx":
            body = MDX_LINES.sub(" ", body)
        if suffix in {".qmd", ".rmd"}:
            body = DIV_FENCE.sub("", FENCE.sub(_chunk_as_shown, body))
        return html_text(markdown.markdown(body, extensions=MARKDOWN_EXTENSIONS))
    if suffix in {".html", ".htm"}:
        return html_text(body)
    if suffix in {".rst", ".rest"}:
        return RST_MARKUP.sub(" ", body)
    return ORG_KEYWORD.sub(" ", body)


def _chunk_as_shown(fence: re.Match) -> str:
    """A Quarto or R Markdown code chunk as its page shows it: without its option lines, its code
    left out when ``echo: false`` hides it, and its captions (``fig-cap``, ``tbl-cap``) as text."""
    options = dict(CHUNK_OPTION.findall(fence[0]))
    if not options:
        return fence[0]
    captions = "\n\n".join(v.strip("'\"") for k, v in options.items() if k.endswith("-cap"))
    code = "" if options.get("echo") == "false" else CHUNK_OPTION.sub("", fence[0])
    return f"{code}\n\n{captions}\n"


def _without_tags(text: str) -> str:
    return GENERATOR_TAG.sub(" ", HTML_COMMENT.sub(" ", text))


def html_text(fragment: str) -> str:
    """The text of an HTML fragment, without images, scripts and styles."""
    if not fragment.strip():
        return ""
    root = lxml_html.fragment_fromstring(fragment, create_parent="div")
    for node in root.xpath("//img | //script | //style | //svg"):
        node.drop_tree()
    for node in root.iter(*BLOCKS):  # the end of a block ends a word
        node.tail = " " + (node.tail or "")
    return root.text_content()


def source_words(path: Path, *, generator: str = "") -> Counter[str]:
    """The bag of words of a source file built by ``generator`` (as ``blog.json`` names it)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    return words(source_text(text, path.suffix, tags_in_code="hexo" in generator.lower()))


def bag_f1(truth: Counter[str], got: Counter[str]) -> float:
    """F1 of two bags of words (1.0 when both are empty)."""
    if not truth and not got:
        return 1.0
    overlap = sum((truth & got).values())
    if not overlap:
        return 0.0
    precision, recall = overlap / sum(got.values()), overlap / sum(truth.values())
    return 2 * precision * recall / (precision + recall)


def set_f1(truth: Iterable[str], got: Iterable[str], *, shown: int | None = None) -> float:
    """F1 of two sets of terms, case-folded; with ``shown``, the pages show at most that many of the truth's."""
    truth_set = {t.casefold().strip() for t in truth}
    got_set = {t.casefold().strip() for t in got}
    if not truth_set and not got_set:
        return 1.0
    overlap = len(truth_set & got_set)
    if not overlap:
        return 0.0
    expected = min(len(truth_set), shown) if shown else len(truth_set)
    precision, recall = overlap / len(got_set), min(1.0, overlap / expected)
    return 2 * precision * recall / (precision + recall)


def is_ciphertext(text: str | None) -> bool:
    """Whether a text holds a run of 200 or more base64 (or hex) characters: an encrypted body kept as text."""
    return bool(CIPHERTEXT.search(text or ""))


def parse_instant(value: str) -> datetime:
    """An ISO 8601 (or any dateutil-readable) date and time."""
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return dateutil_parser.parse(value)


def blog_zone(posts: Iterable[TruthPost], site: Path | None = None) -> tzinfo:
    """The blog's zone: the most common offset of its truth dates with a time; when none has
    one, the most common offset its pages and feeds print (``site_zone``); else UTC."""
    offsets = Counter(
        dt.utcoffset() for p in posts
        if p.published and not DATE_ONLY.match(p.published) and (dt := parse_instant(p.published)).tzinfo
    )
    if offsets:
        return timezone(offsets.most_common(1)[0][0])
    return (site_zone(site) if site else None) or timezone.utc


def site_zone(site: Path) -> tzinfo | None:
    """The most common UTC offset printed after a time in a site's pages and feeds, if any."""
    offsets: Counter[timedelta] = Counter()
    for path in site.rglob("*"):
        if path.is_file() and path.suffix.lower() in {"", ".html", ".htm", ".xml", ".atom", ".rss", ".json"}:
            text = path.read_text(encoding="utf-8", errors="replace")
            offsets.update(timedelta(hours=int(h), minutes=int(m)) * (-1 if sign == "-" else 1)
                           for sign, h, m in PRINTED_OFFSET.findall(text) if int(h) <= 14)
    return timezone(offsets.most_common(1)[0][0]) if offsets else None


def truth_instant(published: str, zone: tzinfo) -> datetime:
    dt = parse_instant(published)
    return dt if dt.tzinfo else dt.replace(tzinfo=zone)


def day_matches(truth: str, archived: str | None, zone: tzinfo) -> bool:
    """Whether the archived date is the truth's day (see the module's docstring)."""
    if not archived:
        return False
    got = parse_instant(archived)
    got = got if got.tzinfo else got.replace(tzinfo=timezone.utc)
    if DATE_ONLY.match(truth):
        return got.astimezone(zone).strftime("%Y-%m-%d") == truth
    return got.astimezone(timezone.utc).date() == truth_instant(truth, zone).astimezone(timezone.utc).date()


def minute_matches(truth: str, archived: str | None, zone: tzinfo) -> bool:
    """Whether the archived time is the truth's, to the minute."""
    if not archived:
        return False
    got = parse_instant(archived)
    got = got if got.tzinfo else got.replace(tzinfo=timezone.utc)
    want = truth_instant(truth, zone)
    return got.astimezone(timezone.utc).replace(second=0, microsecond=0) == \
        want.astimezone(timezone.utc).replace(second=0, microsecond=0)


# ---------------------------------------------------------------- crawling and reading the archive


class FeedlessHandler(QuietHandler):
    """A static site whose feeds (RSS, Atom, RDF, JSON Feed) answer 404, as if they could not be read."""

    def send_head(self):  # type: ignore[no-untyped-def]
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        if path.is_file():
            with path.open("rb") as f:
                head = f.read(4096)
            if looks_like_feed(head, "json" if path.suffix == ".json" else ""):
                self.send_error(404)
                return None
        return super().send_head()


def crawl(blog: Blog, db: Path, *, feeds: bool = True) -> subprocess.CompletedProcess:
    """Serve the blog's site on 127.0.0.1 and crawl it into ``db`` with the command line
    (``feeds=False``: with its feeds answering 404)."""
    with StaticServer(blog.site, handler=QuietHandler if feeds else FeedlessHandler) as server:
        # their images' URLs only: many are on other hosts, which a test never asks the internet for
        return run_cli(*crawl_args(blog.start, db, {h: server.base for h in blog.hosts}), "--media", "metadata",
                       "--log-file", str(log_file(db)), check=False, timeout=CRAWL_TIMEOUT)


def log_file(db: Path) -> Path:
    """The crawl's log beside its archive (``NAME.db.log``: a leftover ``NAME.db*`` goes with the archive)."""
    return db.with_name(db.name + ".log")


def browser_use(db: Path) -> tuple[int, int]:
    """How many browsers the crawl into ``db`` started (``render/started`` in the stats its log ends
    with) and how many of its pages the archive says came from one (``pages.fetched_via``)."""
    log = log_file(db)
    started = BROWSER_STARTED.search(log.read_text(encoding="utf-8", errors="replace")) if log.is_file() else None
    if not db.is_file():
        return (int(started[1]) if started else 0), 0
    conn = sqlite3.connect(db)
    try:
        rendered = conn.execute("select count(*) from pages where fetched_via like 'browser%'").fetchone()[0]
    finally:
        conn.close()
    return (int(started[1]) if started else 0), rendered


def archived_posts(db: Path) -> list[dict]:
    """The archive's live posts (not marked gone), each with ``aliases``: the paths of its other URLs."""
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        posts = [dict(r) for r in conn.execute("select * from posts where gone_at is null order by id")]
        aliases: dict[int, list[str]] = {}
        copies: dict[int, list[str]] = {}
        for alias, post_id, why in conn.execute("select alias, post_id, why from post_aliases"):
            aliases.setdefault(post_id, []).append(path_key(alias))
            if why == COPY:
                copies.setdefault(post_id, []).append(path_key(alias))
    finally:
        conn.close()
    for post in posts:
        post["aliases"] = aliases.get(post["id"], [])
        post["copies"] = copies.get(post["id"], [])
        post["tags"] = json.loads(post.get("tags") or "[]")
        post["categories"] = json.loads(post.get("categories") or "[]")
    return posts


# ---------------------------------------------------------------- scoring


def score(blog: Blog, rows: list[dict]) -> dict:
    """Every measure of one blog's archive against its truth, with the list of mismatches."""
    truth = {p.path: p for p in blog.posts}
    matched: dict[str, list[dict]] = {}
    mismatches: list[dict] = []
    for row in rows:
        own = path_key(row["url"])
        key = own if own in truth else next((a for a in row["aliases"] if a in truth), None)
        if key is None:
            mismatches.append(_mismatch(own, "extra", None, row["title"]))
        else:
            matched.setdefault(key, []).append(row)
            # a blog that published one text twice: the archive's one post is both truth posts
            for copy in row.get("copies", []):
                if copy in truth and copy != key:
                    matched.setdefault(copy, []).append(row)
    duplicates = 0
    for key, found in matched.items():
        found.sort(key=lambda r: path_key(r["url"]) != key)  # the row at the post's own URL first
        duplicates += len(found) - 1
        for extra in found[1:]:
            mismatches.append(_mismatch(key, "duplicate", key, path_key(extra["url"])))
    reachable = {k for k, p in truth.items() if p.linked}
    for key in sorted(reachable - set(matched)):
        mismatches.append(_mismatch(key, "missing", truth[key].title, None))
    marks: dict[str, list[float]] = {
        f: [] for f in ("title", "date_day", "date_time", "author", "tags", "text", "trafilatura_text")}
    zone = blog_zone(blog.posts, blog.site)
    protected = ciphertext = marked = 0
    has_column = bool(rows) and "protected" in rows[0]
    for key in sorted(matched):
        post, row = truth[key], matched[key][0]
        _score_post(blog, post, row, zone, marks, mismatches)
        if has_column and bool(row["protected"]) != post.protected:
            mismatches.append(_mismatch(key, "protected", post.protected, row["protected"]))
        if post.protected:
            protected += 1
            marked += bool(has_column and row["protected"])
            if is_ciphertext(row["text"]):
                ciphertext += 1
                run = CIPHERTEXT.search(row["text"])[0]
                mismatches.append(_mismatch(key, "ciphertext", "no ciphertext", f"{run[:60]}… ({len(run)} characters)"))
    result = {
        "blog": blog.name, "origin": blog.origin, "client_rendered": blog.client_rendered,
        "posts": len(truth), "archived": len(rows),
        "found": len(matched), "recall": len(reachable & set(matched)) / len(reachable) if reachable else 1.0,
        "precision": (len(rows) - sum(m["field"] == "extra" for m in mismatches)) / len(rows) if rows else 0.0,
        "duplicates": duplicates, "protected": protected, "ciphertext": ciphertext,
        "protected_marked": marked if has_column else None,
        "zone": str(zone), "scored": {f: len(v) for f, v in marks.items()},
    }
    result.update({f: (sum(v) / len(v) if v else None) for f, v in marks.items()})
    mismatches.sort(key=lambda m: (SEVERITY.index(m["field"]), m.get("f1", 0), m["path"]))
    result["mismatches"] = mismatches
    return result


def _score_post(blog: Blog, post: TruthPost, row: dict, zone: tzinfo,
                marks: dict[str, list[float]], mismatches: list[dict]) -> None:
    def mark(name: str, ok: float, truth: object, got: object) -> None:
        marks[name].append(float(ok))
        if ok < 1:
            mismatches.append(_mismatch(post.path, name, truth, got))

    if post.title is not None:
        mark("title", title_key(post.title) == title_key(row["title"]), post.title, row["title"])
    if post.published:
        mark("date_day", day_matches(post.published, row["published"], zone), post.published, row["published"])
        if not DATE_ONLY.match(post.published):
            mark("date_time", minute_matches(post.published, row["published"], zone), post.published, row["published"])
    if blog.shows_author and post.author:
        mark("author", author_key(post.author) == author_key(row["author"]), post.author, row["author"])
    if blog.shows_tags if post.shows_tags is None else post.shows_tags:
        f1 = set_f1(post.tags, row["tags"], shown=blog.tags_shown)
        mark("tags", f1, sorted(post.tags), row["tags"])
    if post.source and post.shows_text and not post.protected:
        want, got = source_words(post.source, generator=blog.generator), words(row["text"])
        f1 = bag_f1(want, got)
        marks["text"].append(f1)
        page = page_file(blog.site, post.path)
        if page is not None:
            marks["trafilatura_text"].append(bag_f1(want, words(trafilatura_text(page, row["url"]))))
        if f1 < 1:
            start = " ".join((row["text"] or "").split())[:100]
            mismatches.append({**_mismatch(post.path, "text", "missing: " + _top(want - got),
                                           f"extra: {_top(got - want)}; text starts: {start!r}"),
                               "f1": round(f1, 3)})


def page_file(site: Path, path: str) -> Path | None:
    """The file of ``site`` that a post's URL path is served from, if there is one."""
    base = site / path.strip("/")
    for candidate in (base / "index.html", base, base.with_name(base.name + ".html")):
        if candidate.is_file():
            return candidate
    return None


def trafilatura_text(page: Path, url: str) -> str:
    """trafilatura's text of a saved page, alone, comments left out."""
    doc = bare_extraction(page.read_text(encoding="utf-8", errors="replace"), url=url, include_comments=False)
    return (doc.text or "") if doc is not None else ""


def _top(bag: Counter[str], n: int = 12) -> str:
    return ", ".join(f"{w}×{c}" if c > 1 else w for w, c in bag.most_common(n)) or "-"


def _mismatch(path: str, name: str, truth: object, got: object) -> dict:
    return {"path": path, "field": name, "truth": truth, "archived": got}


def score_blog(blog: Blog, workdir: Path, *, feeds: bool = True) -> dict:
    """Crawl one blog into a fresh archive under ``workdir`` and score it (``feeds=False``: its feeds answer 404)."""
    db = workdir / f"{blog.name}.db"
    for leftover in workdir.glob(f"{blog.name}.db*"):
        leftover.unlink()
    proc = crawl(blog, db, feeds=feeds)
    rows = archived_posts(db) if db.is_file() else []
    result = score(blog, rows)
    result["browser"], result["rendered"] = browser_use(db)
    if proc.returncode != 0:
        result["crawl_error"] = f"exit {proc.returncode}: " + proc.stderr.strip()[-2000:]
    return result


# ---------------------------------------------------------------- the report


COLUMNS = [  # (key, heading)
    ("posts", "posts"), ("archived", "archived"), ("recall", "recall"), ("precision", "precision"),
    ("duplicates", "duplicates"), ("title", "title exact"), ("date_day", "date day"),
    ("date_time", "date time"), ("author", "author"), ("tags", "tags F1"), ("text", "text F1"),
    ("trafilatura_text", "trafilatura text F1"),
    ("protected", "protected (marked / ciphertext)"), ("browser", "browsers started (pages rendered)"),
]


def _two(value: float) -> str:
    """Two decimals, rounded down, so that 0.946 does not read as a passing 0.95."""
    return f"{math.floor(value * 100 + 1e-9) / 100:.2f}"


def _cell(result: dict, key: str) -> str:
    value = result.get(key)
    if key == "protected":
        if result["protected"] is None:
            return f"— (— / {result['ciphertext']})"
        marked = "—" if result.get("protected_marked") is None else result["protected_marked"]
        return f"{result['protected']} ({marked} / {result['ciphertext']})" if result["protected"] else "0"
    if key == "browser":
        if value is None:
            return "—"
        cell = f"{value} ({result['rendered']})" if "rendered" in result else str(value)  # the minimum row: no pages
        return f"**{cell}**" if value and not result.get("client_rendered") else cell
    if value is None:
        return "—"
    if isinstance(value, float):
        met = key not in THRESHOLDS or value >= THRESHOLDS[key]
        return _two(value) if met else f"**{_two(value)}**"
    return f"**{value}**" if key == "duplicates" and value else str(value)


def worst_row(results: list[dict]) -> dict:
    """The worst of each column: the minimum of every measure, the most duplicates and ciphertexts."""
    row: dict = {"blog": "minimum"}
    for key, _ in COLUMNS:
        values = [r[key] for r in results if r.get(key) is not None]
        if key == "protected":
            row[key] = None
        elif key == "browser":  # the most browsers a static blog's crawl started
            row[key] = max((r[key] for r in results if r.get(key) is not None and not r.get("client_rendered")),
                           default=None)
        elif key == "duplicates":
            row[key] = max(values, default=0)
        else:
            row[key] = min(values, default=None)
    row["ciphertext"] = max((r["ciphertext"] for r in results), default=0)
    return row


def commit() -> str:
    """The checked-out commit, with a ``+`` when crawler/ or archive/ differ from it (git is only read)."""
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, env=env, check=True).stdout.strip()
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "crawler", "archive"], cwd=ROOT,
                               env=env, check=False).returncode != 0
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+" if dirty else "")


NOTES = """\
How each column is measured (`tests/fidelity.py`):

- **posts**: posts in the truth; **archived**: rows of `posts` (not marked gone). A row is a truth post
  when its URL path (decoded, `index.html` dropped) or one of its `post_aliases` is the post's path;
  a row is also each truth post at an alias it has as a copy (why `the same text`: a blog that
  published one title and text at two URLs, which the archive keeps as one post).
- **recall**: truth posts found, of those the served site leads to (a post only client-side scripts
  link, which the corpus does not keep, is `"linked": false` in its truth); **precision**: rows that are truth posts; **duplicates**: rows beyond
  the first that are the same truth post.
- **title exact**: equal after NFKC, typographic quotes made straight, `--`, en and em dashes folded,
  YAML escapes undone and white space collapsed; case counts.
- **date day**: the truth's date in UTC against the archived date in UTC. A date-only truth is that day
  in the blog's zone (the most common offset of the blog's other truth dates; when none has one, the
  offset its pages and feeds print most; else UTC), and is compared with the day of the archived date
  in that zone. **date time**: the same, to the minute, only
  where the truth has a time.
- **author**: equal after folding case and white space, where the pages show an author and the truth
  has one. **tags F1**: F1 of the case-folded sets, averaged over posts, where the pages show tags.
- **text F1**: F1 of the bags of words of the archived `text` and of the source: front matter, HTML
  comments, Hexo/Jekyll `{% %}` tags and Hugo `{{< >}}` shortcodes removed (the text between a paired
  tag's ends is kept; Hexo shows the tags inside fenced code as written), Quarto and R Markdown chunks
  as their pages show them (no `#|` option lines, no code under `echo: false`, captions kept, no `:::`
  divs), Markdown rendered with the
  `markdown` package and its text taken (no images, link text without URLs, code kept). A word is a
  lower-cased run of letters and digits, or one CJK character. Averaged over the posts found;
  protected posts are left out.
- **trafilatura text F1**: the same measure for `trafilatura.bare_extraction(page, include_comments=False)`
  alone, on the page in `site/` of each post the text F1 scores: the library blogarchive wraps, on the
  same posts.
- **protected (marked / ciphertext)**: protected posts found, how many of them the archive marks
  `protected` ("—" when it has no such column), and how many keep a run of 200 or more
  base64/hex characters in their text.
- **browsers started (pages rendered)**: how many browsers the crawl started (`render/started` in the stats of its
  log) and how many of its pages the archive says a browser gave (`pages.fetched_via`). A static blog starts none:
  bold where one did; a client-rendered blog (`"client_rendered": true` in its `blog.json`) may. The last row
  says the most a static blog's crawl started.
- Every measure averages over the posts found only and is rounded down; "—": not measured on that blog.
  Bold: below the threshold of issue 11 (recall and precision 1.00, no duplicates, title and date day
  0.99, author, tags and text 0.95). The last row is the worst of each column. The mismatches behind
  each number: `python tests/fidelity.py NAME --json FILE --verbose`.
"""


# The single-page sets as they were measured at commit 0676088, before the guard (issue 32).
SETS_BEFORE = [
    "| article-extraction-benchmark (scrapinghub, 181 articles) | 181 | 0.889 | 0.959 | 5 (5) / 0 | — / — |",
    "| WCXB dev split (1,497 pages, 7 types) | 1497 | 0.743 | 0.823 | 67 (55) / 10 | 0.747 / 0.496 |",
]

SETS_NOTES = """\
Each page of a public single-page set is given to `crawler.extract.post.extract_post` (the crawl's own extraction,
with no feed and no site to learn from) and to `trafilatura.bare_extraction(html, include_comments=False)` in
the same run (`tests/page_sets.py`, which `make fidelity` runs when the sets are checked out under
`$BLOGARCHIVE_PAGE_SETS`, by default `~/.cache/blogarchive/page-sets`; their pages are not in the repository).
**text F1**: the bag-of-words F1 of the extracted text against the set's gold text (the corpus's words), averaged
over the pages, an empty page scoring 0; **pages left empty**: no text at all, and in brackets those of them
where the other extractor keeps 200 characters or more; **title exact**: equal to the gold title after the
corpus's folding, where the gold has one (the scrapinghub set has none).
"""


def report(results: list[dict], *, when: datetime | None = None, sets: list[str] | None = None) -> str:
    """docs/fidelity.md: one row per blog, the worst of each column, the date, the commit and the notes;
    then the single-page sets' table (``sets``: its lines, from ``page_sets.table``), if measured."""
    when, head = when or datetime.now(timezone.utc), commit()
    lines = [
        "# Fidelity on real blogs", "",
        (f"Measured on {when:%Y-%m-%d %H:%M} UTC at commit {head} (`+`: with uncommitted changes to crawler/ "
         "or archive/), with `make fidelity` (`python tests/fidelity.py --out docs/fidelity.md`): each blog is "
         "served from its `site/` on 127.0.0.1 and crawled with `blogarchive crawl --delay 0 --concurrency 8 "
         "--map-host ...`."), "",
        "| blog | " + " | ".join(h for _, h in COLUMNS) + " |",
        "|---|" + "---:|" * len(COLUMNS),
    ]
    for r in results:
        name = r["blog"] + (" (shared)" if r["origin"] == "shared" else "")
        name += " (crawl failed)" if r.get("crawl_error") else ""
        lines.append(f"| {name} | " + " | ".join(_cell(r, k) for k, _ in COLUMNS) + " |")
    if results:
        worst = worst_row(results)
        lines.append(f"| **minimum** ({when:%Y-%m-%d}, {head}) | " + " | ".join(
            "" if k in ("posts", "archived") else _cell(worst, k) for k, _ in COLUMNS) + " |")
    lines += ["", NOTES]
    if sets:
        lines += ["## Public single-page sets", "", f"Measured at the same commit ({when:%Y-%m-%d}, {head}):", "",
                  *sets, "", "Before the guard of issue 32 (commit 0676088, same measures):", "", *sets[:2],
                  *SETS_BEFORE, "", SETS_NOTES]
    return "\n".join(lines)


def print_mismatches(result: dict, limit: int) -> None:
    """The worst mismatches of one blog, one a line."""
    mismatches = result["mismatches"]
    error = f" (crawl failed: {result['crawl_error'][:200]})" if result.get("crawl_error") else ""
    print(f"\n{result['blog']}: {len(mismatches)} mismatches{error}")
    for m in mismatches[:limit]:
        f1 = f" f1={m['f1']}" if "f1" in m else ""
        print(f"  {m['field']:<10} {m['path']}{f1}\n      truth:    {m['truth']}\n      archived: {m['archived']}")


def summary_line(result: dict) -> str:
    """One blog's measures on one line, and why its crawl failed if it did."""
    line = f"{result['blog']}: " + ", ".join(
        f"{k}={_two(result[k])}" if isinstance(result[k], float) else f"{k}={result[k]}"
        for k in FIELDS if result.get(k) is not None)
    if result.get("browser") is not None:
        line += f", browsers={result['browser']} ({result['rendered']} pages rendered)"
    if result.get("crawl_error"):
        line += " (crawl failed: " + result["crawl_error"].strip().splitlines()[-1][:200] + ")"
    return line


def main(argv: list[str] | None = None) -> int:
    """Score the named blogs (all by default); with ``--check``, exit 1 when one misses a threshold."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help="blogs to score (default: every blog)")
    parser.add_argument("--out", type=Path, help="write the Markdown table here (docs/fidelity.md)")
    parser.add_argument("--json", type=Path, help="write the numbers and every mismatch here")
    parser.add_argument("--jobs", type=int, default=1, help="crawls at a time (default 1)")
    parser.add_argument("--verbose", "-v", action="store_true", help="print the worst mismatches of each blog")
    parser.add_argument("--limit", type=int, default=20, help="mismatches printed per blog with --verbose")
    parser.add_argument("--check", action="store_true", help="exit 1 when a blog misses a threshold of issue 11")
    parser.add_argument("--no-feeds", action="store_true", help="serve the blogs with their feeds answering 404")
    parser.add_argument("--sets", type=Path, help="the single-page sets' checkouts (tests/page_sets.py; default "
                        "$BLOGARCHIVE_PAGE_SETS or ~/.cache/blogarchive/page-sets)")
    parser.add_argument("--no-sets", action="store_true", help="do not score the single-page sets (a run of "
                        "NAMEs never does)")
    parser.add_argument("--sets-only", action="store_true", help="score the single-page sets alone, no blog")
    parser.add_argument("--sets-json", type=Path, help="the sets' measures from `tests/page_sets.py --json FILE` "
                        "instead of scoring them again")
    args = parser.parse_args(argv)
    sets = None
    if args.sets_json or args.sets_only or not (args.no_sets or args.names):  # with a whole run, not one blog
        import page_sets  # it imports this module's measures

        measured = json.loads(args.sets_json.read_text(encoding="utf-8")) if args.sets_json else \
            page_sets.score_sets(page_sets.sets_dir(args.sets))
        sets = page_sets.table(measured)
    if args.sets_only:
        print("\n".join(sets or []))
        return 0
    if not args.names:
        for folder in sorted(p for p in CORPUS.iterdir() if p.is_dir() and p.name not in corpus_names()):
            print(f"{folder.name}: skipped, its truth.json or blog.json is not written yet")
    try:
        blogs = [load_blog(n) for n in (args.names or all_names())]
    except ValueError as exc:
        parser.error(str(exc))
    results: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="fidelity-") as tmp, ThreadPoolExecutor(max(1, args.jobs)) as pool:
        for result in pool.map(lambda b: _score_or_fail(b, Path(tmp), feeds=not args.no_feeds), blogs):
            print(summary_line(result), flush=True)
            results.append(result)
            if args.json:  # written after every blog, so that a stopped run keeps what it measured
                _write_json(args.json, results)
    if args.verbose:
        for result in results:
            print_mismatches(result, args.limit)
    if args.out:
        args.out.write_text(report(results, sets=sets), encoding="utf-8")
    missed = {r["blog"]: failures(r) for r in results if failures(r)}
    for name, why in missed.items():
        print(f"{name} misses: {'; '.join(why)}")
    return 1 if args.check and missed else 0


def _score_or_fail(blog: Blog, workdir: Path, *, feeds: bool = True) -> dict:
    """``score_blog``, or, when it raises, the blog scored on an empty archive with the error."""
    try:
        return score_blog(blog, workdir, feeds=feeds)
    except Exception as exc:  # one broken blog or crawl must not stop the others
        return {**score(blog, []), "crawl_error": f"{type(exc).__name__}: {exc}"}


def _write_json(path: Path, results: list[dict]) -> None:
    path.write_text(json.dumps(results, ensure_ascii=False, indent=1, default=str), encoding="utf-8")


def failures(result: dict) -> list[str]:
    """The thresholds of issue 11 one blog's result misses."""
    missed = [f"{k} {result[k]:.3f} < {t}" for k, t in THRESHOLDS.items()
              if result.get(k) is not None and result[k] < t]
    if result["duplicates"]:
        missed.append(f"{result['duplicates']} duplicates")
    if result.get("browser") and not result.get("client_rendered"):
        missed.append(f"a static blog whose crawl started {result['browser']} browser(s)")
    return missed


if __name__ == "__main__":
    sys.exit(main())

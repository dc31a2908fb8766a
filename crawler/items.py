"""Items: plain dataclasses, no Scrapy objects, one per thing a crawl yields."""

from dataclasses import dataclass, field


@dataclass
class BlogPost:
    url: str  # canonical URL of the post
    source_id: int = 0  # the source it belongs to (0 when extracted offline)
    guid: str | None = None  # the feed's id for it, when a feed lists it
    title: str | None = None
    author: str | None = None
    published: str | None = None  # ISO 8601 UTC
    updated: str | None = None  # ISO 8601 UTC
    summary: str | None = None  # feed summary or meta description
    text: str | None = None  # main text, plain
    markdown: str | None = None  # main text with Markdown structure
    lang: str | None = None  # ISO 639-1 code (archive.core.langs)
    tags: list[str] = field(default_factory=list)
    word_count: int | None = None  # words, or CJK characters, of the text
    categories: list[str] = field(default_factory=list)  # where the blog keeps them apart from tags
    conflicts: list[str] = field(default_factory=list)  # sources of metadata that disagree
    protected: str | None = None  # why the body is not archived: encrypted, behind a password
    provenance: list[dict] = field(default_factory=list)  # every candidate: field, value, origin, chosen
    aliases: list[dict] = field(default_factory=list)  # other URLs that led here: alias, why
    media: list[dict] | None = None  # what the article shows, in order: url, kind, alt (None: not read)


@dataclass
class PageRecord:
    url: str  # a fetched HTML page
    source_id: int
    kind: str  # post, listing, page or alias
    reason: str  # the evidence the decision rests on
    fetched_via: str = "http"  # or "browser: WHY" (crawler.judge.render); "http: not rendered: WHY" when that failed


@dataclass
class PostAlias:
    source_id: int
    alias: str  # another URL that leads to the post
    url: str  # the post's canonical URL
    why: str  # redirect 301, meta refresh, rel=canonical, feed link


@dataclass
class CrawlError:
    source_id: int | None
    url: str | None
    kind: str  # http, network, feed, robots, extract ...
    message: str
    fails_source: bool = False  # the source's own URL failed: the source is marked failed, whatever the kind


@dataclass
class SourceUpdate:
    source_id: int
    kind: str | None = None  # home, feed or sitemap
    feeds: list[str] | None = None
    sitemaps: list[str] | None = None
    hosts: list[str] | None = None  # other hosts taken as the blog's own (--map-host sends them to its server)
    rendered: str | None = None  # what the crawl learned of its pages: "browser" (they need one) or "http"


@dataclass
class MediaFile:
    url: str  # an image a post shows
    source_id: int
    status: str  # ok, or why it is not archived (not-an-image, http 404, too-large, post-cap, source-cap)
    sha256: str | None = None  # of its body (kept in capture_bodies), when ok
    content_type: str | None = None  # as its bytes say
    size: int | None = None
    width: int | None = None
    height: int | None = None


@dataclass
class PostGone:
    url: str  # a known post that answered 404 or 410
    source_id: int


@dataclass
class Processed:
    url: str  # a fetched URL whose items have all been yielded
    sha256: str  # of the body they came from

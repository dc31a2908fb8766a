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
    lang: str | None = None  # ISO 639-1 code
    tags: list[str] = field(default_factory=list)
    word_count: int | None = None  # words, or CJK characters, of the text


@dataclass
class PageRecord:
    url: str  # a fetched HTML page
    source_id: int
    kind: str  # post, listing, page or alias
    reason: str  # the evidence the decision rests on


@dataclass
class CrawlError:
    source_id: int | None
    url: str | None
    kind: str  # http, network, feed, robots, extract ...
    message: str


@dataclass
class SourceUpdate:
    source_id: int
    kind: str | None = None  # home, feed or sitemap
    feeds: list[str] | None = None
    sitemaps: list[str] | None = None


@dataclass
class PostGone:
    url: str  # a known post that answered 404 or 410
    source_id: int


@dataclass
class Processed:
    url: str  # a fetched URL whose items have all been yielded
    sha256: str  # of the body they came from

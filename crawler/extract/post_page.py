"""What the spider hands the extraction: a page it judged a post, and what the crawl knows of it.

One object goes from the crawl's process to an extraction worker (``crawler.extract.pool``) and
``crawler.extract.post.extract_page`` makes the finished post of it: the page's bytes, its feed
entry, the blog's repeated parts and zone, the post's source and the other URLs that led to it.
Plain data, no Scrapy: the worker unpickles it.
"""

from dataclasses import dataclass, field
from datetime import tzinfo
from typing import Any

from crawler.judge.site import SiteParts


@dataclass
class PostPage:
    url: str  # the post's URL, in the blog's own form
    body: bytes  # the page as it came, in ``encoding``: decoded in the worker, never in the crawl's process
    encoding: str = "utf-8"
    feed_entry: dict[str, Any] | None = None  # the feed's entry for it (``crawler.discover.feeds``), if any
    # the page did not change and its full-content feed entry did: the feed's text is the post's
    feed_edit: bool = False
    site: SiteParts | None = None  # what the blog repeats on its pages (``crawler.judge.site``)
    default_tz: tzinfo | None = None  # the blog's zone, for dates that name none
    link_text: str | None = None  # the text of a listing's link to the page, a title candidate
    source_id: int = 0  # the source it belongs to (0 when extracted offline)
    aliases: list[dict[str, str]] = field(default_factory=list)  # other URLs that led to it: alias, why


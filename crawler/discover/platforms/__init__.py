"""Blog platforms that list their own posts: one small interface (``listing``), one module per platform.

A platform is recognised from the home page the crawl fetched anyway, its headers and HTML: a
blog on no platform known here costs no request more. ``listing_for`` gives the run's
``Listing`` of the platform found, or None.
"""

from collections.abc import Mapping
from typing import TYPE_CHECKING

from parsel import Selector

from crawler.discover.platforms import blogger, ghost, wordpress
from crawler.discover.platforms.listing import Known, Listing, Normalise, known_posts

if TYPE_CHECKING:
    from sqlite_utils import Database

# the origin of what each platform's listing says of a post (``provenance.origin``)
PLATFORM_ORIGINS = (wordpress.EVIDENCE, ghost.EVIDENCE, blogger.EVIDENCE)


def api_resource(url: str) -> bool:
    """A platform's API resource, which a page may declare as an alternate: no feed of the blog."""
    return wordpress.api_resource(url)


def listing_for(db: "Database", source_id: int, headers: Mapping[str, str], sel: Selector, base: str,
                own: Normalise, *, whole: bool) -> Listing | None:
    """The listing of the platform the home page (``headers``, ``sel`` read at ``base``) shows, if any:
    of every post when ``whole`` (a complete crawl), else of what changed since the archive's latest."""
    def known(evidence: str) -> Known:
        return Known() if whole else known_posts(db, source_id, evidence)

    if root := wordpress.api_root(headers, sel, base):
        return wordpress.WordPressListing(root, own, known(wordpress.EVIDENCE))
    if api := ghost.content_api(sel, base):
        return ghost.GhostListing(*api, own, known(ghost.EVIDENCE))
    if feed := blogger.feed_url(sel, base):
        return blogger.BloggerListing(feed, own, known(blogger.EVIDENCE))
    return None

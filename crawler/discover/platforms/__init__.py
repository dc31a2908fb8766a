"""Blog platforms that list their own posts: one small interface (``listing``), one module per platform.

A platform is recognised from the home page the crawl fetched anyway, its headers and HTML: a
blog on no platform known here costs no request more. ``listing_for`` gives the run's
``Listing`` of the platform found, or None.
"""

from collections.abc import Mapping
from typing import TYPE_CHECKING

from parsel import Selector

from crawler.discover.platforms import wordpress
from crawler.discover.platforms.listing import Known, Listing, Normalise, known_posts

if TYPE_CHECKING:
    from sqlite_utils import Database


def api_resource(url: str) -> bool:
    """A platform's API resource, which a page may declare as an alternate: no feed of the blog."""
    return wordpress.api_resource(url)


def listing_for(db: "Database", source_id: int, headers: Mapping[str, str], sel: Selector, base: str,
                own: Normalise, *, whole: bool) -> Listing | None:
    """The listing of the platform the home page (``headers``, ``sel`` read at ``base``) shows, if any:
    of every post when ``whole`` (a complete crawl), else of what changed since the archive's latest."""
    root = wordpress.api_root(headers, sel, base)
    if root is None:
        return None
    return wordpress.WordPressListing(root, own, Known() if whole else known_posts(db, source_id, wordpress.EVIDENCE))

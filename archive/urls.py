"""URL identity: one post, one URL, whatever form a link used."""

import re
from functools import lru_cache
from urllib.parse import quote, urlsplit, urlunsplit

from w3lib.url import canonicalize_url, url_query_cleaner

TRACKING_PARAMS = (
    "utm_source",
    "utm_medium",
    "utm_campaign",
    "utm_term",
    "utm_content",
    "utm_id",
    "fbclid",
    "gclid",
    "mc_cid",
    "mc_eid",
    # session ids and comment-reply links: endless variants of one page
    "sid",
    "sessionid",
    "session_id",
    "phpsessid",
    "jsessionid",
    "replytocom",
    "replyto",
)
DROPPED_PARAMS = TRACKING_PARAMS + tuple(p.upper() for p in TRACKING_PARAMS) + ("replyTo", "PHPSESSID")
PATH_SESSION = re.compile(r";jsessionid=[^/?#]*", re.I)
DEFAULT_PORTS = {"http": 80, "https": 443}
INDEX_FILE = re.compile(r"/index\.(html?|php)$")
FRAGMENT_SAFE = "/?:@!$&'()*+,;="  # what a fragment holds as it is (RFC 3986), the rest percent-encoded
# A blog's pages repeat their navigation, sidebar and tag-cloud links: each
# form is normalised once. Bounded, so memory does not grow with the blog.
CACHED_URLS = 65_536


@lru_cache(maxsize=CACHED_URLS)
def normalize_url(url: str) -> str:
    """The canonical form of ``url`` used as a post's identity.

    Lower-case scheme and host, no default port, no fragment, no tracking
    or session parameters, sorted query, ``/index.html`` dropped, non-ASCII
    paths percent-encoded as UTF-8, credentials removed.
    """
    url = PATH_SESSION.sub("", url)
    url = url_query_cleaner(url, DROPPED_PARAMS, remove=True, keep_fragments=False)
    url = canonicalize_url(url)
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if parts.port and parts.port != DEFAULT_PORTS.get(parts.scheme):
        host = f"{host}:{parts.port}"
    path = INDEX_FILE.sub("/", parts.path) or "/"
    return urlunsplit((parts.scheme, host, path, parts.query, ""))


def feed_item_url(feed_url: str, guid: str) -> str:
    """Where a post that lives only in a feed is kept (an item with no link, whose content is the
    post): the feed's URL with the item's guid as its fragment, one URL an item, stable between crawls."""
    return f"{normalize_url(feed_url)}#{quote(guid, safe=FRAGMENT_SAFE)}"


def post_url(url: str, guid: str | None = None) -> str:
    """A post's identity: ``normalize_url``; a feed item's own URL (``feed_item_url`` of the post's
    ``guid``) keeps its fragment, which is all that sets it apart from the feed and its other items."""
    if guid and "#" in url and url == feed_item_url(url.split("#", 1)[0], guid):
        return url
    return normalize_url(url)


@lru_cache(maxsize=CACHED_URLS)
def url_key(url: str) -> str:
    """What two URLs of one page share: the normal form without a trailing slash."""
    url = normalize_url(url)
    parts = urlsplit(url)
    if parts.path != "/" and parts.path.endswith("/"):
        return urlunsplit(parts._replace(path=parts.path.rstrip("/")))
    return url


def host_of(url: str) -> str:
    """``host[:port]`` of ``url``, lower-case, default port omitted."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if parts.port and parts.port != DEFAULT_PORTS.get(parts.scheme):
        host = f"{host}:{parts.port}"
    return host


def is_http_url(url: str) -> bool:
    """True for an absolute http(s) URL with a host."""
    parts = urlsplit(url)
    return parts.scheme in DEFAULT_PORTS and bool(parts.hostname)


def parse_host_map(pairs: list[str]) -> dict[str, str]:
    """Read ``HOST=BASE`` pairs (HOST may carry a port; BASE is an http(s) URL).

    Raises:
        ValueError: a pair that is not of that form.
    """
    mapping = {}
    for pair in pairs:
        host, sep, base = pair.partition("=")
        host = host.strip().lower()
        parts = urlsplit(base.strip())
        if not sep or not host or "/" in host or parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"--map-host wants HOST=BASE, as in example.com=http://127.0.0.1:8000, not {pair!r}")
        mapping[host] = base.strip().rstrip("/")
    return mapping

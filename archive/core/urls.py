"""URL identity: one post, one URL, whatever form a link used."""

import ipaddress
import logging
import re
from collections.abc import Callable
from functools import lru_cache
from urllib.parse import quote, unquote, urljoin, urlsplit, urlunsplit

from w3lib.url import canonicalize_url, safe_url_string, url_query_cleaner

logger = logging.getLogger(__name__)

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
# A client-side route (docsify, an SPA): #/post or #!/post, never #/ alone; what follows a ? in it
# (docsify's ?id=heading) is a place in the page, not a page
HASH_ROUTE = re.compile(r"#(!?/[^/?#][^#?]*)(?:\?[^#]*)?$")
# The URL Standard's forbidden domain code points (less ":", a port's): a host holding one is
# no host, and a browser follows no link to it.
FORBIDDEN_HOST = re.compile(r"[\x00-\x20\x7f#%/<>?@\[\\\]^|]")
# A blog's pages repeat their navigation, sidebar and tag-cloud links: each
# form is normalised once. Bounded, so memory does not grow with the blog.
CACHED_URLS = 65_536


def parse_url(url: str, base: str = "", *, encoding: str | None = None,
              on_bad: Callable[[str], None] | None = None) -> str | None:
    """The absolute http(s) URL that ``url`` names, read against ``base``; None when it names none.

    A string that is no URL (a port that is no number or past 65535, a broken IPv6 literal, a
    host with a character no host has) is no link, as it is to a browser: it is logged at debug
    level and handed to ``on_bad`` (to be counted), never raised. A URL of another scheme
    (``mailto:``, ``javascript:``) is None too, silently. Every URL returned is one that
    ``normalize_url``, ``url_key`` and ``host_of`` read, and Scrapy fetches. With ``encoding``
    (a page's), non-ASCII in the path and query is percent-encoded in it, as a browser does.
    """
    try:
        encoded = safe_url_string(url, encoding) if encoding else url
        absolute = urljoin(base, encoded) if base else encoded
        parts = urlsplit(absolute)
        if parts.scheme not in DEFAULT_PORTS:
            return None
        if _valid_host(parts.hostname or "", parts.netloc) and _valid_port(parts.netloc):
            normal = urlsplit(normalize_url(absolute))  # IDNA may make a host no host ("˘" is " ̆")
            if _valid_host(normal.hostname or "", normal.netloc):
                return absolute
    except ValueError:  # UnicodeError too: a host IDNA cannot encode
        pass
    logger.debug("not a URL, taken as no link: %r", url)
    if on_bad is not None:
        on_bad(url)
    return None


def _valid_host(host: str, netloc: str) -> bool:
    """A name or an address: no IPv6 literal but a valid one, no space, control or forbidden character."""
    if netloc.rpartition("@")[2].startswith("[") or ":" in host:  # an IPv6 literal, its brackets taken off
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            return False
        return True
    return bool(host) and host.isprintable() and not FORBIDDEN_HOST.search(host)


def _valid_port(netloc: str) -> bool:
    """No port, or digits alone (urllib reads ``+80`` and `` 80`` as 80, which no browser does)."""
    port = netloc.rpartition("@")[2].rpartition("]")[2].partition(":")[2]
    return port.isascii() and (port == "" or port.isdigit())


@lru_cache(maxsize=CACHED_URLS)
def normalize_url(url: str) -> str:
    """The canonical form of ``url`` used as a post's identity.

    Lower-case scheme and host, no default port, no fragment (but a hash route, ``#/post`` or
    ``#!/post``, which a client-rendered blog names its pages by), no tracking or session
    parameters, sorted query, ``/index.html`` dropped, non-ASCII paths percent-encoded as UTF-8,
    credentials removed. Its own result is its own canonical form.

    Raises:
        ValueError: ``url`` cannot be parsed (``parse_url`` says None for it first).
    """
    route = HASH_ROUTE.search(url)
    url = PATH_SESSION.sub("", url[:route.start()] if route else url)
    url = url_query_cleaner(url, DROPPED_PARAMS, remove=True, keep_fragments=False)
    url = canonicalize_url(url)
    parts = urlsplit(url)
    host = _netloc(parts.hostname or "", parts.port, parts.scheme)
    path = INDEX_FILE.sub("/", parts.path) or "/"
    fragment = _route(route.group(1)) if route else ""
    return urlunsplit((parts.scheme, host, path, parts.query, fragment))


def _route(route: str) -> str:
    """A hash route percent-encoded, its dot segments resolved (docsify links ``./a.md`` as ``#/./a``,
    the page ``#/a`` shows); "" when it resolves to the root."""
    bang = "!" if route.startswith("!") else ""
    path = urljoin("/", quote(unquote(route.removeprefix(bang)), safe=FRAGMENT_SAFE))
    return bang + path if path != "/" else ""


def _netloc(host: str, port: int | None, scheme: str) -> str:
    """``host[:port]``, lower-case, an IPv6 literal in its brackets, the default port omitted."""
    host = f"[{host.lower()}]" if ":" in host else host.lower()
    return f"{host}:{port}" if port and port != DEFAULT_PORTS.get(scheme) else host


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
    """``host[:port]`` of ``url``, lower-case, default port omitted ("" when it has none or is no URL)."""
    try:
        parts = urlsplit(url)
        return _netloc(parts.hostname or "", parts.port, parts.scheme)
    except ValueError:
        return ""


def is_http_url(url: str) -> bool:
    """True for an absolute http(s) URL with a host that can be parsed."""
    return parse_url(url) is not None


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

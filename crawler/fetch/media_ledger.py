"""Fetching a blog's post images: which, when, and within what caps.

Each source has a ``MediaLedger``. Every post page the spider reads notes the
images it shows (listings are left out: they show the covers of the posts they
list, the newest on several of them); every post extracted gives its media,
less the theme's. When the crawl has nothing else to do (its pages all read,
so the evidence is whole), an image on at least ``THEME_SHARE`` of the post
pages read (and on ``THEME_MIN_PAGES`` of them) is the theme's: its links to
posts are removed and it is never fetched. An incremental run that reads one
or two new posts judges no image the theme's, and keeps what earlier runs judged. The other images are asked for then, through the same
downloader as pages (robots.txt, delays, Retry-After, the internal-address
policy, conditional requests), with those an earlier run left listed (an
interrupted crawl, ``--media metadata``, ``import warc``). One archived already
is never asked for again, but in a ``--recheck`` run, which revalidates every
archived image with a conditional request (a 304 costs no body).

``MediaCheckMiddleware`` reads each image's answer before it is captured: bytes
that are not an image (an HTML error page served as ``image/png``), or that
would pass the post's or the source's cap, are refused and never stored. The
per-file cap is Scrapy's ``download_maxsize``: a larger body is never read whole.
"""

from collections import Counter
from typing import TYPE_CHECKING, Any

from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response

from archive.tables.media import sniff_image

from crawler.meta import MEDIA

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

POSTS = "archive_media_posts"  # meta: the posts that show it, first the one it counts against
THEME_SHARE = 0.5  # of a blog's post pages read that show an image, at least, for it to be the theme's
THEME_MIN_PAGES = 3
MEDIA_PRIORITY = -10  # after pages: asked for when the crawl is otherwise done anyway
MB = 1024 * 1024


class MediaRefused(IgnoreRequest):
    """An image's answer that is not archived; ``status`` says why (``media.status``)."""

    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status = status


class MediaLedger:
    """One source's media in one crawl: the evidence of its pages, what its posts want, the bytes fetched."""

    def __init__(self, mode: str, *, theme: set[str], source_bytes: int, max_file: int, max_post: int, max_source: int):
        self.mode = mode  # all, metadata or off
        self.theme = set(theme)
        self.seen: Counter[str] = Counter()  # image URL -> pages read that show it
        self.pages = 0
        self.wanted: dict[str, list[str]] = {}  # image URL -> the posts that show it, not asked for yet
        self.max_file, self.max_post, self.max_source = max_file, max_post, max_source
        self.source_bytes = source_bytes
        self.post_bytes: Counter[str] = Counter()
        self.caught_up = False  # the images earlier runs left listed (and, in --recheck, the archived) asked for

    def note_page(self, images: set[str]) -> None:
        self.pages += 1
        self.seen.update(images)

    def keep(self, post_url: str, media: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
        """The post's media less the theme's (None when the source keeps none); its images are wanted."""
        if self.mode == "off":
            return None
        kept = [m for m in media if m["url"] not in self.theme]
        for m in kept:
            if m["kind"] == "image":
                self.wanted.setdefault(m["url"], []).append(post_url)
        return kept

    def settle(self) -> list[str]:
        """The images the evidence now says are the theme's, not known as such before."""
        enough = max(THEME_MIN_PAGES, THEME_SHARE * self.pages)
        found = sorted(url for url, pages in self.seen.items() if pages >= enough and url not in self.theme)
        self.theme.update(found)
        for url in found:
            self.wanted.pop(url, None)
        return found

    def take(self) -> dict[str, list[str]]:
        """The images to ask for now, with their posts (none in ``metadata`` mode)."""
        wanted, self.wanted = self.wanted, {}
        return wanted if self.mode == "all" else {}

    def admit(self, posts: list[str], size: int) -> str | None:
        """None when an image of ``size`` bytes fits the post's and the source's caps (and counts it), else the cap."""
        if self.source_bytes + size > self.max_source:
            return "source-cap"
        if posts and self.post_bytes[posts[0]] + size > self.max_post:
            return "post-cap"
        self.source_bytes += size
        for post in posts:
            self.post_bytes[post] += size
        return None

    def request(self, url: str, posts: list[str], source_id: int, **kwargs: Any) -> Request:
        """A request for the image at ``url`` that ``posts`` of the source show (its capture is the source's)."""
        return Request(url, priority=MEDIA_PRIORITY, dont_filter=True, **kwargs,
                       meta={MEDIA: self, POSTS: posts, "source_id": source_id, "download_maxsize": self.max_file})


def ledger_for(settings: Any, mode: str | None, *, theme: set[str], source_bytes: int,
               max_file_mb: float | None = None) -> MediaLedger:
    """A source's ledger: the run's mode (``crawl --media``), its own (``source set NAME media=...``) or the
    crawl's ``ARCHIVE_MEDIA``; its file cap likewise (``max_file_mb``: the run's ``--media-max-mb`` or the
    source's ``media_max_mb``), else the crawl's ``ARCHIVE_MEDIA_MAX_MB``."""
    mode = mode or settings.get("ARCHIVE_MEDIA")
    if mode not in ("all", "metadata", "off"):
        raise ValueError(f"ARCHIVE_MEDIA is all, metadata or off, not {mode!r}")
    return MediaLedger(mode, theme=theme, source_bytes=source_bytes,
                       max_file=int((max_file_mb or settings.getfloat("ARCHIVE_MEDIA_MAX_MB")) * MB),
                       max_post=int(settings.getfloat("ARCHIVE_MEDIA_POST_MB") * MB),
                       max_source=int(settings.getfloat("ARCHIVE_MEDIA_SOURCE_MB") * MB))


class MediaCheckMiddleware:
    """Downloader middleware, before the capture: an image's answer is an image, within its caps."""

    @classmethod
    def from_crawler(cls, crawler: "Crawler") -> "MediaCheckMiddleware":
        return cls()

    def process_response(self, request: Request, response: Response) -> Response:
        ledger: MediaLedger | None = request.meta.get(MEDIA)
        if ledger is None or response.status != 200 or "cached" in response.flags:
            return response
        if sniff_image(response.body)[0] is None:
            declared = (response.headers.get("Content-Type") or b"").decode("latin-1")
            raise MediaRefused("not-an-image", f"not an image: served as {declared or 'no type'}, its bytes are not one")
        cap = ledger.admit(request.meta.get(POSTS) or [], len(response.body))
        if cap:
            limit = ledger.max_post if cap == "post-cap" else ledger.max_source
            raise MediaRefused(cap, f"not archived: {len(response.body)} bytes would pass the {cap} of {round(limit / MB, 2):g} MB")
        return response

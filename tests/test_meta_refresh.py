"""The meta refresh is read from a page's first bytes: a huge page is not decoded for it."""

import tracemalloc

from scrapy import Request
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from crawler.fetch.middlewares import MetaRefreshMiddleware

HEAD = '<html><head><meta charset="utf-8"><title>Moved</title>{}</head><body>'
REFRESH = '<meta http-equiv="refresh" content="0; url=/p/new/">'


def page(refresh: str, size: int) -> HtmlResponse:
    body = (HEAD.format(refresh) + "<p>数据库的内存与读写。</p>" * (size // 40) + "</body></html>").encode()
    return HtmlResponse("https://blog.test/p/old/", body=body, request=Request("https://blog.test/p/old/"))


def middleware() -> MetaRefreshMiddleware:
    return MetaRefreshMiddleware.from_crawler(get_crawler())


def test_a_huge_pages_refresh_is_followed_without_decoding_the_page():
    response, refresh = page(REFRESH, 15_000_000), middleware()
    tracemalloc.start()
    try:
        answer = refresh.process_response(response.request, response)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert isinstance(answer, Request)
    assert answer.url == "https://blog.test/p/new/"
    assert answer.meta["redirect_reasons"] == ["meta refresh"]
    assert peak < 1_000_000  # Scrapy's decodes the whole body: 15 MB of UTF-8, 30 MB of text


def test_a_page_without_a_refresh_is_passed_on_undecoded():
    response, refresh = page("", 15_000_000), middleware()
    tracemalloc.start()
    try:
        answer = refresh.process_response(response.request, response)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert answer is response
    assert peak < 1_000_000


def test_a_small_page_is_read_as_scrapy_reads_it():
    response = page(REFRESH, 1_000)
    answer = middleware().process_response(response.request, response)
    assert isinstance(answer, Request) and answer.url == "https://blog.test/p/new/"
    assert middleware().process_response(response.request, page("", 1_000)) is not None

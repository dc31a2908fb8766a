"""A spider middleware that raises where a test says, to show what a bug in one source does.

Enabled only by the tests, added to the project's ``SPIDER_MIDDLEWARES`` at 1000 (next to
the spider) and ``-s FAULTINJECT_HOST=HOST``: every page from HOST then raises as its
callback's output is read, as a bug in the spider would.
"""

from collections.abc import AsyncIterator, Iterable
from typing import Any
from urllib.parse import urlsplit

from scrapy.http import Response


class RaiseForHost:
    def __init__(self, host: str):
        self.host = host

    @classmethod
    def from_crawler(cls, crawler: Any) -> "RaiseForHost":
        return cls(crawler.settings.get("FAULTINJECT_HOST"))

    def process_spider_output(self, response: Response, result: Iterable[Any]) -> Iterable[Any]:
        if urlsplit(response.url).netloc == self.host:
            raise RuntimeError(f"injected fault for {self.host}")
        yield from result

    async def process_spider_output_async(self, response: Response, result: AsyncIterator[Any]) -> AsyncIterator[Any]:
        if urlsplit(response.url).netloc == self.host:
            raise RuntimeError(f"injected fault for {self.host}")
        async for item in result:
            yield item

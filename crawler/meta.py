"""The keys of ``request.meta`` that the crawl's stages hand each other, beside ``crawler.items``.

A key is set by one stage and read by others: the fetch stage's middlewares say what a response is
(unchanged, its body's hash, the previous fetch of its URL, the host it was mapped from), and
discovery and the spider read it.
"""

UNCHANGED = "archive_unchanged"  # why the body is known already (304, fresh, same body)
SHA = "archive_sha"  # sha256 of the response's body
STATE = "archive_state"  # what the previous fetch of the URL said
REVALIDATE = "dont_revalidate"  # send no validators (the spider doubts a 304)
MAPPED = "archive_mapped"  # (original URL, its host's base) of a request sent to another base URL
RENDER = "archive_render"  # why the page goes to the browser (crawler.fetch.render, crawler.judge.render)
RENDER_MAY = "archive_render_may"  # a blog's page: as it leaves, its blog's render mode may send it to the browser
HTTP_ANSWER = "archive_http_answer"  # (status, headers, body) of the page's HTTP answer, while it is rendered
RENDER_FAILED = "archive_render_failed"  # why the page was not rendered: its response is its HTTP answer
MEDIA = "archive_media"  # the ledger of the source whose posts show the image asked for (crawler.fetch.media_ledger)

"""Store: the items of a crawl into the archive, through its single writer (pipelines, the crawl's archive access, a cluster job's writer)."""

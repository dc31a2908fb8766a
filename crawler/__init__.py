"""blogarchive's crawler: Scrapy spiders, extraction and the pipeline into the archive."""

"""Formats: the archive out (SQL, CSV, JSON, Markdown, WARC, WACZ, OPML, EPUB, backups, a cluster job's plan) and in (WARC, OPML)."""

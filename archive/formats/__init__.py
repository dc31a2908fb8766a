"""Formats: the archive out (SQL, CSV, JSON, Markdown, WARC, WACZ, OPML, backups) and in (WARC, OPML)."""

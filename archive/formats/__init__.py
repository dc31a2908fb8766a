"""Formats: the archive out (SQL, CSV, JSON, Markdown, WARC, WACZ, OPML, backups, a cluster job's plan) and in (WARC, OPML)."""

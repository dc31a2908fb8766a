"""Core: the archive file itself (schema and migrations, opening it, the crawl lock), URL and date identity, and plain reads."""

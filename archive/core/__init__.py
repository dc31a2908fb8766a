"""Core: the archive file itself (schema and migrations, opening it, the crawl lock), URL, date and language identity, and plain reads."""

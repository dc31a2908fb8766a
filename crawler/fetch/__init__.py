"""Fetch: downloader middlewares and handlers between a request and its response (host mapping, safety, politeness, conditional requests, dead hosts, encodings, captures replayed)."""

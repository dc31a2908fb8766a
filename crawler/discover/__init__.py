"""Discover: which URLs a blog has and which of them a run requests (feeds, sitemaps, listings, the run's plan)."""

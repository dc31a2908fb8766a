"""Run: launching a crawl and keeping it within bounds (processes, cluster coordination, the memory budget, progress)."""

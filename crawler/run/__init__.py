"""Run: launching a crawl (one process, several, or a cluster of Scrapyd nodes) and telling how far it is."""

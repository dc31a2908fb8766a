"""Tables: the rows a crawl writes, one module per group of tables (posts and runs, history, captures, media, fetches, sources), and the single writer that runs those writes."""

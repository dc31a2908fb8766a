"""Search: which posts match a search (FTS5 trigram and word indexes), and the matches Datasette pages share."""

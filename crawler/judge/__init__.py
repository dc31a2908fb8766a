"""Judge: what a page is and says of itself, from the page alone: its encoding, post or not, its article body, title, dates, authors and tags, and what the site repeats on every page."""

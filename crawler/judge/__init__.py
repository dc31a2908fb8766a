"""Judge: what a page is and says of itself (post or not, its title, dates, authors and tags, what the site repeats), read from the page alone."""

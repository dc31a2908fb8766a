"""The reading room: Datasette's metadata, templates, static files and plugins for a browsable archive."""

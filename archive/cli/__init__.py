"""The ``blogarchive`` command line: one module per group of commands, each thin around a library call.

A crawl runs in a process of its own (``crawler.run.launch``: Scrapy's reactor cannot restart, and
the archive never imports Scrapy); everything else runs here, importing what it needs when asked.
"""

import click

from archive.cli import crawl, export, extract, notify, posts, serve, sources


@click.group()
@click.version_option(package_name="blogarchive")
def cli() -> None:
    """Keep a faithful, searchable copy of blogs in one SQLite file."""


for command in (crawl.crawl, crawl.import_, sources.add, sources.sources, sources.source, sources.runs,
                posts.search, posts.history, extract.extract, extract.reextract, serve.serve,
                export.export, export.backup, notify.notify_):
    cli.add_command(command)

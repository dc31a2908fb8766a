"""``blogarchive serve``: the archive in Datasette, with the reading room's metadata, templates and plugins."""

import errno
import json
import os
import socket
import tempfile
from pathlib import Path

import click

from archive.cli.common import ConfigError, db_option, open_db

DATASETTE_DIR = Path(__file__).parents[1] / "datasette"


METADATA = DATASETTE_DIR / "metadata.yml"


def datasette_args(db_path: str, host: str, port: int, public: bool, metadata_path: str) -> list[str]:
    """``datasette serve`` arguments for the archive: the project's metadata, templates,
    plugins and static files; read-only SQL within a time limit, none at all when public."""
    settings = {
        "sql_time_limit_ms": "2000",
        # The posts' facets are chosen (metadata.yml); suggesting others reads every row a search
        # matches, once or twice per column of the table (half of the posts, for a common word).
        "suggest_facets": "off",
        "truncate_cells_html": "120",
        "default_allow_sql": "off" if public else "on",
    }
    args = [
        "serve", db_path, "--host", host, "--port", str(port), "--metadata", metadata_path,
        "--template-dir", str(DATASETTE_DIR / "templates"),
        "--plugins-dir", str(DATASETTE_DIR / "plugins"),
        "--static", f"-/blogarchive:{DATASETTE_DIR / 'static'}",
    ]
    for name, value in settings.items():
        args += ["--setting", name, value]
    return args


def check_port(host: str, port: int) -> None:
    """Fail with ``ConfigError`` (exit 2) when ``host:port`` cannot be bound: another server has it,
    or the address is not this machine's. Bound as uvicorn binds it (``SO_REUSEADDR``), then freed."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                raise ConfigError(f"port {port} on {host} is in use: stop what serves there or choose another --port") from None
            raise ConfigError(f"cannot serve on {host}:{port}: {e.strerror or e}") from None


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind; 0.0.0.0 exposes the archive.")
@click.option("--port", default=8001, show_default=True, type=click.IntRange(0, 65535))
@click.option("--public", is_flag=True, help="No arbitrary SQL: tables, facets, search and the canned queries only.")
@db_option
def serve(host: str, port: int, public: bool, db_path: str) -> None:
    """Browse the archive in Datasette."""
    import yaml  # only when serving: not on a crawl's way to its first request

    open_db(db_path).close()
    check_port(host, port)
    name = Path(db_path).stem
    metadata = yaml.safe_load(METADATA.read_text(encoding="utf-8"))
    metadata["databases"] = {name: metadata["databases"]["archive"]}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(metadata, f)
    click.echo(f"Serving {db_path} at http://{host}:{port}/", err=True)
    from datasette.cli import cli as datasette_cli  # slow to import: only when serving

    try:
        datasette_cli.main(datasette_args(db_path, host, port, public, f.name), prog_name="datasette")
    finally:
        os.unlink(f.name)

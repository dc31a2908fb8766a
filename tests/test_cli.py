"""The command line: clear one-line errors, never a traceback."""

import pytest
from click.testing import CliRunner
from conftest import run_cli

from archive.cli import cli


@pytest.fixture
def runner():
    return CliRunner()


@pytest.mark.parametrize(
    "args,message",
    [
        (["crawl", "https://blog.test/", "--db", "/no/such/dir/a.db"], "directory does not exist: /no/such/dir"),
        (["crawl", "blog.test", "--db", "{db}"], "not an http(s) URL: blog.test"),
        (["crawl", "--map-host", "blog.test", "--db", "{db}"], "--map-host wants HOST=BASE"),
        (["crawl", "--map-host", "blog.test=ftp://x", "--db", "{db}"], "--map-host wants HOST=BASE"),
        (["add", "javascript:alert(1)", "--db", "{db}"], "not an http(s) URL"),
        (["sources", "--db", "/no/such/dir/a.db"], "directory does not exist"),
        (["export", "csv", "--db", "{db}"], "give --table or --query"),
        (["export", "csv", "--table", "nope", "--db", "{existing}"], "no such table: nope"),
        (["export", "json", "--query", "delete from posts", "--db", "{existing}"], "query failed"),
        (["export", "sql", "--db", "{db}"], "no archive at"),
        (["extract", "/no/such/file.html"], "does not exist"),
    ],
)
def test_errors(runner, tmp_path, args, message):
    existing = tmp_path / "existing.db"
    runner.invoke(cli, ["add", "https://blog.test/", "--db", str(existing)])
    args = [a.format(db=tmp_path / "a.db", existing=existing) for a in args]
    result = runner.invoke(cli, args)
    assert result.exit_code in (1, 2)
    assert message in result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_db_from_environment(runner, tmp_path, monkeypatch):
    monkeypatch.setenv("BLOGARCHIVE_DB", str(tmp_path / "env.db"))
    result = runner.invoke(cli, ["add", "https://blog.test/", "--name", "test"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "env.db").exists()
    assert ("test\thttps://blog.test/\tfeeds: -\tposts: 0\tdue next run: 0 (7d:0,90d:1d,*:7d)\tchecked: never\t"
            "settings: -\tlast crawl: never") in runner.invoke(cli, ["sources"]).output


def test_every_command_has_help(runner):
    for name, command in cli.commands.items():
        assert command.help, name
        assert runner.invoke(cli, [name, "--help"]).exit_code == 0


def _state(path):
    """The archive's files as bytes (None where a file does not exist)."""
    return {suffix: (path.parent / (path.name + suffix)).read_bytes() if (path.parent / (path.name + suffix)).exists()
            else None for suffix in ("", "-wal", "-shm", ".lock")}


@pytest.mark.parametrize("exists", [True, False], ids=["archive", "no-archive"])
@pytest.mark.parametrize(
    "args",
    [
        ["crawl", "https://a.test/", "blog.test"],
        ["crawl", "https://a.test/", "--map-host", "a.test"],
        ["crawl", "https://a.test/", "--recheck", "--full"],
        ["add", "javascript:alert(1)"],
        ["add", "https://other.test/", "--name", "blog"],
        ["source", "set", "nope", "delay=1"],
        ["source", "set", "blog", "delay=soon"],
        ["source", "set", "blog", "colour=red"],
        ["source", "set", "blog", "delay"],
        ["backup", "-o", "{db}"],
        ["add", "--opml", "{db}"],
        ["add", "https://a.test/", "--opml", "{db}"],
        ["import", "warc", "{db}"],
        ["export", "warc", "-o", "{db}.warc.gz", "--source", "nope"],
        ["export", "opml", "--since", "2024-01-01"],
    ],
    ids=lambda a: " ".join(a),
)
def test_a_failing_command_leaves_the_archive_exactly_as_it_was(tmp_path, args, exists):
    db = tmp_path / "a.db"
    if exists:
        run_cli("add", "https://blog.test/", "--name", "blog", "--db", str(db))
    elif args[:2] == ["add", "https://other.test/"]:
        pytest.skip("with no archive, no name is taken: that command succeeds")
    before = _state(db)
    proc = run_cli(*[a.format(db=db) for a in args], "--db", str(db), check=False)
    assert proc.returncode in (1, 2), proc.stdout
    assert proc.stderr.strip().splitlines()[-1].startswith("Error: ") and "Traceback" not in proc.stderr, proc.stderr
    assert _state(db) == before

"""The command line: clear one-line errors, never a traceback."""

import pytest
from click.testing import CliRunner

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
    runner.invoke(cli, ["sources", "--db", str(existing)])
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
            "last crawl: never") in runner.invoke(cli, ["sources"]).output


def test_every_command_has_help(runner):
    for name, command in cli.commands.items():
        assert command.help, name
        assert runner.invoke(cli, [name, "--help"]).exit_code == 0

"""The README documents every command and every ARCHIVE_* setting."""

import re

from conftest import ROOT

from archive.cli import cli

README = (ROOT / "README.md").read_text(encoding="utf-8")
SETTINGS = (ROOT / "crawler" / "settings.py").read_text(encoding="utf-8")


def test_readme_starts_with_make_demo_and_make_test():
    first_block = README.split("```bash", 1)[1].split("```", 1)[0]
    assert [line.split()[:2] for line in first_block.strip().splitlines()] == [["make", "demo"], ["make", "test"]]


def test_every_command_is_in_the_readme():
    for name in cli.commands:
        assert f"`blogarchive {name}" in README, name


def test_every_archive_setting_is_in_the_readme():
    names = set(re.findall(r"^(ARCHIVE_[A-Z_]+)\b", SETTINGS, re.M))
    assert names
    for name in names:
        assert f"`{name}`" in README, name

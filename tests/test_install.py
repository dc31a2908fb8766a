"""``make install`` as ``make demo`` runs it: quiet, setuptools' notes included."""

import subprocess

from conftest import ROOT


def test_make_install_shows_no_editable_installation_box(tmp_path):
    venv = tmp_path / "venv"
    recipe = subprocess.run(["make", "-n", "install", f"VENV={venv}"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.splitlines()
    commands = [line for line in recipe if line.startswith(("/", "PYTHONWARNINGS=")) and " -m compileall " not in line]
    assert commands[-1].endswith("-e '.[test,render]'")
    commands[-1] += " --no-deps"  # the box is the package's own build's; the dependencies are not needed for it
    shown = ""
    for command in commands:
        proc = subprocess.run(command, shell=True, cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        shown += proc.stdout + proc.stderr
    assert "Editable installation" not in shown and "*****" not in shown, shown

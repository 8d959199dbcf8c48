"""``scripts/serve`` installs the runtime only, ``scripts/test`` the test tools too (issue 29:
a server's venv had Playwright, mypy and Schemathesis in it). ``scripts/python-env.sh`` is run
here with a stand-in interpreter that records what pip was asked to install."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: A stand-in for python3 and for the venv's python: `-m venv DIR` makes DIR/bin/python (this
#: same script), `-m pip ...` appends its arguments to $PIP_CALLS.
FAKE_PYTHON = """#!/usr/bin/env bash
if [ "$1 $2" = "-m venv" ]; then
    mkdir -p "$3/bin" && cp "$0" "$3/bin/python" && chmod +x "$3/bin/python"
elif [ "$1 $2" = "-m pip" ]; then
    shift 2; echo "$*" >> "$PIP_CALLS"
fi
"""


def _env_script(root: Path, extras: str) -> list[str]:
    """What pip was asked to do when scripts/serve ("") or scripts/test ("test") set up .venv."""
    calls = root / "pip-calls"
    calls.touch()
    before = calls.read_text().splitlines()
    script = (
        f'set -euo pipefail; ROOT="{root}"; VENV="$ROOT/.venv"; PY="$VENV/bin/python"; '
        'say() { :; }; die() { echo "$*" >&2; exit 1; }; '
        f'EXTRAS="{extras}"; . "{ROOT}/scripts/python-env.sh"'
    )
    env = {**os.environ, "PYTHON": str(root / "python3"), "PIP_CALLS": str(calls)}
    subprocess.run(["bash", "-c", script], check=True, env=env, timeout=60)
    return calls.read_text().splitlines()[len(before) :]


def test_serve_installs_the_runtime_only_and_test_adds_the_tools(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    fake = tmp_path / "python3"
    fake.write_text(FAKE_PYTHON)
    fake.chmod(0o755)

    serve = _env_script(tmp_path, "")
    assert len(serve) == 1 and serve[0].endswith("-e .") and "[test]" not in serve[0], serve
    assert _env_script(tmp_path, "") == []  # nothing changed: nothing to install
    test = _env_script(tmp_path, "test")  # the tools are missing: added
    assert len(test) == 1 and test[0].endswith("-e .[test]"), test
    assert _env_script(tmp_path, "test") == []
    assert _env_script(tmp_path, "") == []  # a venv with the test tools serves as it is
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'y'\n")
    assert _env_script(tmp_path, "")[0].endswith("-e .")  # changed dependencies: reinstalled
    assert _env_script(tmp_path, "test")[0].endswith("-e .[test]")


def test_the_scripts_ask_for_what_they_need() -> None:
    serve = (ROOT / "scripts" / "serve").read_text()
    test = (ROOT / "scripts" / "test").read_text()
    assert 'EXTRAS=""' in serve and "EXTRAS=test" in test

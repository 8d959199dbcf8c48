"""The settings table is generated, never copied (issue 38): docs/configuration.md's table is
``service.settingsdoc.markdown_table()`` — one row per entry of ``SPECS``, each with its meaning —
and every other table in docs/ or the README that gives a setting's default gives the one
``SPECS`` has."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from service import settings
from service.settings import SPECS
from service.settingsdoc import DEFAULT_WORDS, DOC, MEANINGS, documented, markdown_table

ROOT = Path(__file__).resolve().parents[2]
#: a table row naming a setting, then its default: | `NAME` | `default` | ...
ROW = re.compile(r"^\| `(?P<name>[A-Z][A-Z0-9_]+)`(?::[^|]*)? \| `(?P<default>[^`]*)` \|", re.M)


def test_configuration_page_holds_the_generated_table() -> None:
    text = DOC.read_text()
    assert documented(text) == text, (
        "docs/configuration.md's settings table differs from service/settings.py: "
        "run .venv/bin/python -m service.settingsdoc"
    )


def test_every_setting_has_one_meaning() -> None:
    names = [name for name, _, _ in SPECS.values()]
    assert sorted(MEANINGS) == sorted(names)
    assert set(DEFAULT_WORDS) <= set(names)
    assert markdown_table().count("\n| `") == len(names)


def test_a_new_setting_without_a_meaning_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(SPECS, "new_one", ("MANIFEST_NEW_ONE", "1", settings._bool))
    with pytest.raises(KeyError, match="MANIFEST_NEW_ONE"):
        markdown_table()


def _pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def test_other_tables_give_the_defaults_settings_has() -> None:
    defaults = {name: d for name, d, _ in SPECS.values() if name not in DEFAULT_WORDS}
    wrong = []
    for page in _pages():
        for row in ROW.finditer(page.read_text()):
            name, given = row["name"], row["default"]
            if name in defaults and given.replace(",", "") != defaults[name]:
                wrong.append(
                    f"{page.relative_to(ROOT)}: {name} default {given}, not {defaults[name]}"
                )
    assert not wrong, "\n".join(wrong)


def test_the_row_pattern_sees_a_wrong_default() -> None:
    assert ROW.search("| `MANIFEST_PG_POOL` | `21` | connections |")["default"] == "21"  # type: ignore[index]

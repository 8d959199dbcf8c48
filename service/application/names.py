"""Player names: what a name may be, and when two names are the same player (NFKC + case
folding). Used by the lobby; the rules are part of the API (``docs/api.md``, "Names")."""

from __future__ import annotations

import unicodedata

from service.problems import Problem

MAX_NAME = 64

_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def player_name(value: str) -> str:
    """The name as stored: NFC, trimmed; 400 ``lobby.bad_name`` unless 1–64 characters with no
    control, format (bidi overrides, zero-width joiners), surrogate, private-use or unassigned
    characters."""
    name = unicodedata.normalize("NFC", value).strip()
    if not 1 <= len(name) <= MAX_NAME:
        raise Problem(400, "lobby.bad_name", f"a name is 1 to {MAX_NAME} characters")
    for ch in name:
        if ch in _BIDI or unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn"):
            raise Problem(
                400,
                "lobby.bad_name",
                f"a name may not contain U+{ord(ch):04X} (control or formatting characters)",
            )
    return name


def name_key(name: str) -> str:
    """Two names clash when equal after NFKC and case folding ("Ann", "ann", "Ａｎｎ")."""
    return unicodedata.normalize("NFKC", name).casefold()

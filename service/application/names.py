"""Player names: what a name may be, and when two names are the same player. Used by the lobby;
the rules are part of the API (``docs/api.md``, "Player names").

A name must show something: at least one letter, digit, punctuation mark or symbol that is
not a known blank (U+3164 HANGUL FILLER, U+2800 BRAILLE PATTERN BLANK, ...) and not a
default-ignorable code point. Two names are *alike* — one player — when, default-ignorable code
points (variation selectors, fillers, ...) left out, they are equal after NFKC and case
folding, or have the same Unicode TR39 confusables skeleton (``аnn`` with a Cyrillic ``а`` and
``ann``), either as written or case-folded.

The confusables data is Unicode's ``confusables.txt`` as shipped by the ``confusable-homoglyphs``
package (``confusables.json``, 9,600 entries). That file keeps each line of Unicode's table as
a pair in both directions; :func:`_prototypes` reads the table's mapping back out of it (a
character mapped to exactly one other that has several is a source; a pair of two characters
with only each other is one class either way, and a skeleton only ever compares classes).
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import re
import unicodedata

from service.application.errors import BadRequest

MAX_NAME = 64

_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")

#: General categories a name may not hold: controls, format characters, surrogates, private
#: use, unassigned, and line and paragraph separators (U+2028, U+2029: a name is one line).
_REFUSED = frozenset(("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"))

#: Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt): shown as nothing. Left
#: out before two names are compared (``a`` and ``a\ufe0f`` are one name).
_IGNORABLE = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)

#: Letters and symbols that are drawn as blank space but are not default-ignorable.
_BLANK = frozenset("\u2800\U0001d159\U00016fe4")


#: The same, as one character class: a name's ignorables are dropped by one ``sub`` (testing
#: each character against the ranges in Python cost ~4 ms per 64-character name of ligatures
#: such as U+FDFA, whose NFKC is 18 characters: a join checked against 64 invited names took
#: half a second of the event loop).
_IGNORABLE_RE = re.compile(
    "[" + "".join(f"{re.escape(chr(lo))}-{re.escape(chr(hi))}" for lo, hi in _IGNORABLE) + "]"
)

#: Runs of white space (any Unicode space, as ``str.split`` reads them).
_SPACES = re.compile(r"\s+")


def is_ignorable(ch: str) -> bool:
    return _IGNORABLE_RE.fullmatch(ch) is not None


def is_visible(ch: str) -> bool:
    """A letter, digit, punctuation mark or symbol that shows: not a blank, not ignorable."""
    return unicodedata.category(ch)[0] in "LNPS" and ch not in _BLANK and not is_ignorable(ch)


def player_name(value: str) -> str:
    """The name as stored: NFC, trimmed; 400 ``lobby.bad_name`` unless 1–64 characters with no
    control, format (bidi overrides, zero-width joiners), surrogate, private-use, unassigned
    or line/paragraph-separator characters, and at least one visible character
    (:func:`is_visible`)."""
    name = unicodedata.normalize("NFC", value).strip()
    if not 1 <= len(name) <= MAX_NAME:
        raise BadRequest("lobby.bad_name", f"a name is 1 to {MAX_NAME} characters")
    for ch in name:
        if ch in _BIDI or unicodedata.category(ch) in _REFUSED:
            raise BadRequest(
                "lobby.bad_name",
                f"a name may not contain U+{ord(ch):04X} (control or formatting characters)",
            )
    if not any(is_visible(ch) for ch in name):
        raise BadRequest(
            "lobby.bad_name",
            "a name needs a visible character (a letter, digit, punctuation mark or symbol; "
            "fillers, blanks and combining marks alone show nothing)",
        )
    return name


def _strip(text: str) -> str:
    return _IGNORABLE_RE.sub("", text)


@functools.cache
def _prototypes() -> dict[str, str]:
    """TR39's mapping, source character -> prototype (NFD), closed so that a prototype maps to
    itself."""
    text = (
        importlib.resources.files("confusable_homoglyphs")
        .joinpath("confusables.json")
        .read_text(encoding="utf-8")
    )
    pairs: dict[str, set[str]] = {}
    for key, entries in json.loads(text).items():
        # the file takes its characters from confusables.txt's comments, where right-to-left
        # ones are wrapped in U+200E
        source = key.replace("\u200e", "")
        for entry in entries:
            pairs.setdefault(source, set()).add(entry["c"].replace("\u200e", ""))
    mapping: dict[str, str] = {}
    for x, ys in pairs.items():
        if len(x) != 1 or len(ys) != 1:
            continue  # a prototype (several sources map to it), or a string of several
        (y,) = ys
        if len(y) > 1 or len(pairs.get(y, ())) > 1:
            mapping[x] = y  # x's one confusable is a string, or a prototype of several
        elif _prototype_first(y, x):
            mapping[x] = y  # a pair: one class; the compatibility form maps to the other
    closed: dict[str, str] = {}
    for x, y in mapping.items():
        target = unicodedata.normalize("NFD", y)
        for _ in range(8):
            nxt = unicodedata.normalize("NFD", "".join(mapping.get(c, c) for c in target))
            if nxt == target:
                break
            target = nxt
        closed[x] = target
    return closed


def load_confusables() -> None:
    """Read the confusables table now (~0.1 s), not on the event loop at the first join."""
    _prototypes()


def _prototype_first(a: str, b: str) -> bool:
    """Of a pair that only name each other, is ``a`` the prototype? The one NFKC leaves alone
    (``日`` rather than the Kangxi radical ``⽇``), else the lower code point."""
    a_plain = unicodedata.normalize("NFKC", a) == a
    b_plain = unicodedata.normalize("NFKC", b) == b
    return a_plain > b_plain or (a_plain == b_plain and a < b)


def skeleton(text: str) -> str:
    """Unicode TR39 ``skeleton``: NFD, default-ignorable code points removed, each character
    replaced by its prototype, NFD again."""
    mapping = _prototypes()
    nfd = _strip(unicodedata.normalize("NFD", text))
    return unicodedata.normalize("NFD", "".join(mapping.get(ch, ch) for ch in nfd))


@functools.lru_cache(maxsize=4096)
def name_keys(name: str) -> frozenset[str]:
    """What a name is compared by: its skeleton as written (``Iris`` and ``lris``) and the
    skeleton of its NFKC case fold (``Ann``, ``ann``, ``Ａｎｎ`` and ``Аnn`` with a Cyrillic
    ``А``), a run of white space read as one space (a web page shows ``a  b`` as ``a b``). Two
    names are alike when they share a key (:func:`alike`). Kept for the last 4,096 names: a
    join compares its name with every invited and seated one, a game's names come again and
    again."""
    plain = _SPACES.sub(" ", _strip(name))
    folded = _SPACES.sub(" ", _strip(unicodedata.normalize("NFKC", plain).casefold()))
    return frozenset((f"s:{skeleton(plain)}", f"f:{skeleton(folded)}"))


def alike(a: str, b: str) -> bool:
    """``a`` and ``b`` would be taken for one player."""
    return not name_keys(a).isdisjoint(name_keys(b))


def all_distinct(names: list[str]) -> bool:
    """No two of ``names`` are alike."""
    seen: set[str] = set()
    for name in names:
        keys = name_keys(name)
        if not seen.isdisjoint(keys):
            return False
        seen |= keys
    return True

"""Every event told as a sentence: message templates with named arguments, per language, kept
as data beside each game (``domain/<game>/messages/<lang>.po``; the platform's events in
``domain/platform/messages/<lang>.po``), read by Babel, and formatted here, purely (no clock, no
environment: the language is an argument, the catalogues are package data read once).

A catalogue is a gettext ``.po`` file whose ``msgid`` is the template id, ``<game>.<event
type>`` (``platform.<event type>`` for the platform's), and whose ``msgstr`` is the sentence.
An event type may have variants, ``<id>#<name>``: the first template in the file's order whose
every argument is present (not null; for ``:if``, true) is the one told, the plain ``<id>`` last
(so a seat reads its own cards in its own sentence, a spectator the count its view holds). A
plural sentence is a gettext plural entry: its ``msgid_plural`` names the argument that counts
(``count`` or ``cards:count``), and Babel's plural rule of the language picks the form
(French says "0 carte", English "0 cards").

An argument is ``{path}`` or ``{path:kind}``; ``path`` is a field of the event *view* (dots go
into nested fields and list indices, ``*`` into every item of a list), never of the raw event:
the sentence is built from what the viewer's event view holds
(:func:`domain.platform.sentences.tell`), so it shows a viewer nothing its view hides.
Kinds: ``player`` (a seat, told by its player's name), ``players`` (a list of seats), ``list``
(a list, joined the language's way), ``count`` (a list's length), ``num`` (a number, grouped
the language's way), ``term`` (a word of the game, translated by the catalogue's ``<game>.term.
<value>`` entry), ``if`` (nothing: the template needs the value true). ``{path=value}`` is a
condition: nothing, and the template needs the value to be ``value``. No kind: the value as it
is.
"""

from __future__ import annotations

import gettext
import re
from collections.abc import Mapping, Sequence
from functools import cache, lru_cache
from importlib import resources
from io import BytesIO
from typing import Any

import msgspec
from babel import Locale
from babel.lists import format_list
from babel.messages.pofile import read_po
from babel.numbers import format_decimal

#: The languages every catalogue has; the first is the default.
LANGUAGES = ("en", "fr")
DEFAULT = LANGUAGES[0]
PLATFORM = "platform"
KINDS = frozenset({"player", "players", "list", "count", "num", "term", "if"})
_PLACEHOLDER = re.compile(r"\{([A-Za-z0-9_.*]+)(?::([a-z]+)|(=[A-Za-z0-9_-]+))?\}")


class Template(msgspec.Struct, frozen=True):
    """One template of a catalogue: its forms (one, or the language's plural forms) and the
    argument that counts for a plural."""

    id: str
    forms: tuple[str, ...]
    counts: str | None = None


class Catalogue(msgspec.Struct, frozen=True):
    """One language's templates of one game (or of the platform), in the file's order."""

    lang: str
    templates: tuple[Template, ...]
    plural_expr: str
    #: how many plural forms the language has (Babel's CLDR data: en 2, fr 3)
    plurals: int = 2

    def by_id(self) -> dict[str, Template]:
        return {t.id: t for t in self.templates}


class Sentence(msgspec.Struct, frozen=True):
    """An event told in ``lang``: the template's id, its arguments (the event view's values,
    by path) and the text."""

    id: str
    lang: str
    text: str
    args: dict[str, Any]


def package_of(game_module: str) -> str:
    """The package of a game whose types live in ``game_module`` (``domain.jolly_cargo.state``
    → ``domain.jolly_cargo``)."""
    return game_module.rpartition(".")[0]


@cache
def catalogue(package: str, lang: str) -> Catalogue:
    """The ``lang`` catalogue of ``package`` (``domain.jolly_cargo``, ``domain.platform``):
    package data, read once."""
    raw = resources.files(package).joinpath(f"messages/{lang}.po").read_bytes()
    return parse_catalogue(raw, lang)


def parse_catalogue(raw: bytes, lang: str) -> Catalogue:
    po = read_po(BytesIO(raw), locale=lang)
    templates: list[Template] = []
    for message in po:
        if not message.id:
            continue  # the header
        ids, strings = message.id, message.string
        if isinstance(ids, (tuple, list)):
            forms = tuple(str(s) for s in (strings or ()))
            templates.append(Template(str(ids[0]), forms, str(ids[1])))
        else:
            templates.append(Template(str(ids), (str(strings or ""),)))
    return Catalogue(lang, tuple(templates), po.plural_expr, po.num_plurals)


def language(asked: str | None) -> str:
    """The catalogue language for ``asked`` (``fr``, ``fr-CA``, ``FR``); English otherwise."""
    if asked:
        base = asked.strip().replace("_", "-").split("-")[0].lower()
        if base in LANGUAGES:
            return base
    return DEFAULT


def negotiate(asked: str | None, accept_language: str | None) -> str:
    """The language of a request: ``asked`` (a ``lang=`` parameter) if given, else the
    ``Accept-Language`` header's most preferred language a catalogue has (its q-values
    honoured), else English."""
    if asked:
        return language(asked)
    best, best_q = DEFAULT, -1.0
    for i, part in enumerate((accept_language or "").split(",")):
        tag, _, params = part.strip().partition(";")
        q = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        base = tag.strip().split("-")[0].lower()
        if base in LANGUAGES and q > 0 and q - i * 1e-6 > best_q:
            best, best_q = base, q - i * 1e-6  # equal q: the first listed
    return best


@lru_cache(maxsize=2048)
def placeholders(text: str) -> tuple[tuple[str, str | None], ...]:
    """The (path, kind) of every argument of a template form."""
    return tuple((m.group(1), m.group(2) or m.group(3)) for m in _PLACEHOLDER.finditer(text))


_MISSING = object()


def value_at(view: Any, path: str) -> Any:
    """The value at ``path`` (dotted fields and list indices) of an event view's JSON, or
    ``_MISSING``."""
    value = view
    parts = path.split(".")
    for i, part in enumerate(parts):
        if part == "*" and isinstance(value, list):  # every item's rest of the path
            rest = ".".join(parts[i + 1 :])
            items = [value_at(item, rest) if rest else item for item in value]
            return _MISSING if any(item is _MISSING for item in items) else items
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return _MISSING
    return value


def _present(value: Any, kind: str | None) -> bool:
    if value is _MISSING or value is None:
        return False
    if kind == "if":
        return value is True
    if kind is not None and kind.startswith("="):
        return str(value) == kind[1:]
    if kind in ("list", "players"):
        return isinstance(value, list) and len(value) > 0  # an empty list: the next variant
    return not (kind == "count" and not isinstance(value, list))


def _arguments(template: Template, view: Any, strict: bool = True) -> dict[str, Any] | None:
    """The template's arguments from ``view``, or None when one is absent (``strict``; else
    the absent ones left out)."""
    args: dict[str, Any] = {}
    for form in template.forms:
        for path, kind in placeholders(form):
            value = value_at(view, path)
            if not _present(value, kind):
                if strict:
                    return None
                continue
            args[path] = value
    if template.counts is not None:
        path = template.counts.split(":")[0]
        value = value_at(view, path)
        if value is _MISSING or value is None:
            return None if strict else {**args, path: 0}
        args[path] = value
    return args


def _count(spec: str, args: Mapping[str, Any]) -> int:
    path, _, kind = spec.partition(":")
    value = args[path]
    return len(value) if kind == "count" or isinstance(value, list) else int(value)


class Speaker:
    """Formats sentences in one language for one game: its catalogue and the platform's."""

    def __init__(self, package: str, lang: str) -> None:
        self.lang = language(lang)
        self.locale = Locale.parse(self.lang)
        game = catalogue(package, self.lang)
        platform = catalogue("domain.platform", self.lang)
        self.templates = {**platform.by_id(), **game.by_id()}
        self.order = [*game.templates, *platform.templates]
        self.plural = gettext.c2py(game.plural_expr)
        self._variants: dict[str, list[Template]] = {}
        for template in self.order:
            self._variants.setdefault(template.id.split("#")[0], []).append(template)

    def variants(self, template_id: str) -> list[Template]:
        """The templates of an event type (``id`` and ``id#…``), in the catalogue's order."""
        return self._variants.get(template_id, [])

    def term(self, scope: str, value: Any) -> str:
        found = self.templates.get(f"{scope}.term.{value}")
        return str(value) if found is None else found.forms[0]

    def _format(
        self, path: str, kind: str | None, value: Any, names: Sequence[str | None], scope: str
    ) -> str:
        if kind == "player":
            return self.player(value, names)
        if kind == "players":
            return self.join([self.player(v, names) for v in value])
        if kind == "list":
            return self.join([self.term(scope, v) for v in value])
        if kind == "count":
            return _number(len(value), self.lang)
        if kind == "num":
            return _number(value, self.lang)
        if kind == "term":
            return self.term(scope, value)
        if kind == "if" or (kind is not None and kind.startswith("=")):
            return ""
        if isinstance(value, int) and not isinstance(value, bool):
            return _number(value, self.lang)
        return str(value)

    def join(self, items: list[str]) -> str:
        if not items:
            return self.term(PLATFORM, "nothing")
        return format_list(items, locale=self.locale)

    def player(self, seat: Any, names: Sequence[str | None]) -> str:
        if isinstance(seat, int) and 0 <= seat < len(names) and names[seat]:
            return str(names[seat])
        found = self.templates.get("platform.term.seat")
        return (found.forms[0] if found else "seat {n}").replace("{n}", str(seat))

    def sentence(
        self, scope: str, event_type: str, view: Any, names: Sequence[str | None]
    ) -> Sentence:
        """``view`` (an event view as JSON) told as a sentence; ``scope`` is the game's id
        (``platform`` for a platform event); ``names``: the players' names by seat."""
        template_id = f"{scope}.{event_type}"
        variants = self.variants(template_id)
        for i, template in enumerate(variants):
            # the plain template (the last) is always told: what its view lacks shows as "?"
            args = _arguments(template, view, strict=i < len(variants) - 1)
            if args is None:
                continue
            form = template.forms[0]
            if template.counts is not None and len(template.forms) > 1:
                index = int(self.plural(_count(template.counts, args)))
                form = template.forms[min(index, len(template.forms) - 1)]

            def fill(match: re.Match[str], args: dict[str, Any] = args) -> str:
                path, kind = match.group(1), match.group(2) or match.group(3)
                if path not in args:
                    return "?"
                return self._format(path, kind, args[path], names, scope)

            text = re.sub(r"[ \t\n]+", " ", _PLACEHOLDER.sub(fill, form)).strip()
            return Sentence(template.id, self.lang, text, args)
        return Sentence(template_id, self.lang, event_type, {})


@lru_cache(maxsize=4096)
def _number(value: int | float, lang: str) -> str:
    """``value`` the language's way (``1 000 000`` in French), once per value (Babel's
    formatting is costly next to the rest of a sentence)."""
    return format_decimal(value, locale=Locale.parse(lang))


@cache
def speaker(package: str, lang: str) -> Speaker:
    return Speaker(package, lang)

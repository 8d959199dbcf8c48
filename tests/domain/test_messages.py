"""Every event told as a sentence (``domain.kernel.messages``, ``domain.platform.sentences``):
every event type of every game and of the platform has a template in English and French whose
arguments all exist in its event view; a sentence holds only values of the viewer's event view,
and none it hides; plural forms are the language's (Babel's)."""

from __future__ import annotations

import typing
from datetime import UTC, datetime
from functools import cache
from typing import Any

import msgspec
import pytest
from babel.numbers import format_decimal

from domain.kernel import AUDITOR, SPECTATOR, Viewer, seat
from domain.kernel.bots import play_random_game
from domain.kernel.messages import (
    KINDS,
    LANGUAGES,
    PLATFORM,
    Template,
    catalogue,
    language,
    negotiate,
    package_of,
    parse_catalogue,
    placeholders,
    speaker,
    value_at,
)
from domain.platform.clocks import ClockBot, ClockExpired, ClockReturned, ClockSatIn, ClockSet
from domain.platform.events import (
    LobbyCreated,
    LobbyJoined,
    LobbyLeft,
    PlatformEvent,
    SeedRevealed,
    TableMessage,
)
from domain.platform.sentences import tell, view_of
from domain.registry import GAMES, AnyGame

NAMES = ["ann", "bob", "cyd", "dee", "eve"]


def _members(union: Any) -> dict[str, type[msgspec.Struct]]:
    """tag → Struct of a tagged union (or of one Struct)."""
    members = typing.get_args(union) or (union,)
    out: dict[str, type[msgspec.Struct]] = {}
    for member in members:
        info = msgspec.inspect.type_info(member)
        if isinstance(info, msgspec.inspect.StructType):
            out[str(info.tag)] = member
    return out


def _fields(struct: type[msgspec.Struct]) -> set[str]:
    return {f.encode_name for f in msgspec.inspect.type_info(struct).fields}  # type: ignore[attr-defined]


def _scopes() -> list[tuple[str, str, dict[str, type[msgspec.Struct]]]]:
    """(scope, package, event view types by tag) of every game and the platform."""
    out = [
        (rules.id, package_of(rules.state_type.__module__), _members(rules.event_view_type))
        for rules in GAMES.values()
    ]
    out.append((PLATFORM, "domain.platform", _members(PlatformEvent)))
    return out


def _event_templates(package: str, lang: str, scope: str) -> dict[str, list[Template]]:
    """The catalogue's event templates by event type (its terms left out)."""
    out: dict[str, list[Template]] = {}
    for template in catalogue(package, lang).templates:
        name = template.id.removeprefix(scope + ".")
        if name.startswith("term."):
            continue
        out.setdefault(name.split("#")[0], []).append(template)
    return out


@pytest.mark.parametrize(("scope", "package", "types"), _scopes(), ids=lambda v: str(v)[:20])
@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_event_type_has_a_template_whose_arguments_are_its_event_views(
    scope: str, package: str, types: dict[str, type[msgspec.Struct]], lang: str
) -> None:
    templates = _event_templates(package, lang, scope)
    assert set(templates) == set(types), f"{scope} {lang}: templates and event types differ"
    for event_type, variants in templates.items():
        # the plain template is the last, told when no variant's arguments are all there
        assert variants[-1].id == f"{scope}.{event_type}", f"{event_type}: plain one last"
        fields = _fields(types[event_type])
        for template in variants:
            assert all(form.strip() for form in template.forms), template.id
            for form in template.forms:
                for path, kind in placeholders(form):
                    assert path.split(".")[0] in fields, f"{template.id}: no {path} in the view"
                    assert kind is None or kind in KINDS or kind.startswith("="), template.id
            if template.counts is not None:
                assert template.counts.split(":")[0] in fields, template.id
                # the language's plural forms, every one written (Babel: fr has three)
                assert len(template.forms) == catalogue(package, lang).plurals


@pytest.mark.parametrize(("scope", "package", "types"), _scopes(), ids=lambda v: str(v)[:20])
def test_english_and_french_have_the_same_templates_and_arguments(
    scope: str, package: str, types: Any
) -> None:
    en, fr = (catalogue(package, lang).by_id() for lang in LANGUAGES)
    assert list(en) == list(fr), f"{scope}: the catalogues' ids (and order) differ"
    for template_id, english in en.items():
        french = fr[template_id]
        args = {p for form in english.forms for p in placeholders(form)}
        assert args == {p for form in french.forms for p in placeholders(form)}, template_id
        assert english.counts == french.counts, template_id


@cache
def _bot_game(rules: AnyGame, seats: int) -> list[Any]:
    table, _ = play_random_game(rules, bytes(range(32)), seats, max_commands=4000)
    return [r.event for r in table.records]


def _viewers(seats: int) -> list[Viewer]:
    return [SPECTATOR, AUDITOR, *(seat(s) for s in range(seats))]


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in _leaves(v, (*path, k))]
    if isinstance(value, list):
        return [leaf for i, v in enumerate(value) for leaf in _leaves(v, (*path, i))]
    return [(path, value)]


def _hidden_strings(full: Any, seen: Any) -> set[str]:
    """The values the auditor's event view holds where the viewer's does not, that the viewer's
    view holds nowhere (so a sentence naming one names a hidden value)."""
    theirs = dict(_leaves(seen))
    visible = {str(v) for v in theirs.values()}
    return {
        str(v)
        for path, v in _leaves(full)
        if theirs.get(path, object()) != v and v is not None and str(v) not in visible
    }


GAME_SEATS = [(rules, n) for rules in GAMES.values() for n in sorted({rules.min_seats, 2, 3})]


@pytest.mark.parametrize(
    ("rules", "seats"),
    [(r, n) for r, n in GAME_SEATS if r.min_seats <= n <= r.max_seats],
    ids=lambda v: getattr(v, "id", str(v)),
)
def test_no_sentence_holds_a_value_its_event_view_hides(rules: AnyGame, seats: int) -> None:
    """Over a bot game, for every viewer and language: each argument is the viewer's event
    view's value at its path, and no value the view hides (the auditor's view holds it, the
    viewer's not) is in the sentence; a seat reads its own hidden values in its sentences."""
    told_private = 0
    for event in _bot_game(rules, seats):
        data = msgspec.to_builtins(event)
        full = view_of(rules, data["type"], data, AUDITOR, None)
        for viewer in _viewers(seats):
            view = view_of(rules, data["type"], data, viewer, getattr(viewer, "seat", None))
            hidden = _hidden_strings(full, view)
            for lang in LANGUAGES:
                sentence = tell(rules, data["type"], data, viewer, NAMES[:seats], lang)
                assert sentence.id.split("#")[0] == f"{rules.id}.{data['type']}"
                assert sentence.text and sentence.text != data["type"], sentence
                for path, value in sentence.args.items():
                    assert value_at(view, path) == value, (sentence.id, path)
                leaked = {h for h in hidden if h in sentence.text}
                assert not leaked, f"{sentence.text!r} shows {leaked} to {viewer}"
                if getattr(viewer, "seat", None) is not None and "#seen" in sentence.id:
                    told_private += 1
    if rules.id in ("cargo-empire", "curious-cargo"):
        assert told_private, "a seat reads its own cards in its own sentences"


def test_a_seat_reads_its_own_cards_a_spectator_the_count() -> None:
    rules = GAMES["cargo-empire"]
    drawn = next(e for e in _bot_game(rules, 2) if type(e).__name__ == "CardsDrawn")
    data = msgspec.to_builtins(drawn)
    own = tell(rules, "cards_drawn", data, seat(data["seat"]), NAMES, "en")
    other = tell(rules, "cards_drawn", data, seat(1 - data["seat"]), NAMES, "en")
    watcher = tell(rules, "cards_drawn", data, SPECTATOR, NAMES, "fr")
    assert own.id == "cargo-empire.cards_drawn#seen" and "cards" in own.args
    assert other.id == "cargo-empire.cards_drawn" and "cards" not in other.args
    assert watcher.text.startswith(f"{NAMES[data['seat']]} pioche {len(data['cards'])} carte")


PLATFORM_EVENTS: list[PlatformEvent] = [
    LobbyCreated("jolly-cargo", 2, {}, "ab" * 32),
    LobbyCreated("cargo-empire", 3, {}, "ab" * 32, invited=["ann", "bob"]),
    LobbyJoined(0, "ann"),
    LobbyLeft(1, "bob"),
    TableMessage(0, "all", "hello"),
    TableMessage(0, [1], "the secret plan"),
    SeedRevealed("cd" * 32),
    ClockSet(datetime(2026, 1, 1, tzinfo=UTC), []),
    ClockExpired(1, datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 1, tzinfo=UTC)),
    ClockSatIn(1, "expiries"),
    ClockSatIn(1, "left"),
    ClockReturned(1),
    ClockBot(1),
]


@pytest.mark.parametrize("event", PLATFORM_EVENTS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("lang", LANGUAGES)
def test_platform_events_are_told(event: PlatformEvent, lang: str) -> None:
    rules = GAMES["jolly-cargo"]
    data = msgspec.to_builtins(event)
    readers: list[tuple[Viewer, int | None]] = [
        (SPECTATOR, None),
        (AUDITOR, None),
        (seat(0), 0),
        (seat(2), 2),
    ]
    for viewer, reader in readers:
        sentence = tell(rules, data["type"], data, viewer, NAMES[:2], lang, reader)
        assert sentence.id.startswith(f"platform.{data['type']}"), sentence
        assert sentence.text and "{" not in sentence.text
        if isinstance(event, TableMessage) and event.to != "all":
            # a private message's text: its sender's and addressees' only, even to an auditor
            assert ("secret plan" in sentence.text) == (reader == 0), (viewer, sentence)


def test_table_talk_and_endings_read_well() -> None:
    rules = GAMES["jolly-cargo"]
    said = msgspec.to_builtins(TableMessage(1, "all", "bonjour"))
    assert tell(rules, "table.message", said, SPECTATOR, NAMES, "fr").text == (
        "bob dit à tous : « bonjour »"
    )
    created = msgspec.to_builtins(PLATFORM_EVENTS[0])
    assert tell(rules, "lobby.created", created, SPECTATOR, NAMES, "en").text == (
        "A game of Tom Jolly’s CARGO was created for 2 players"
    )
    curious = GAMES["curious-cargo"]
    ended = {"type": "game_ended", "scores": [], "winners": [], "triggers": ["bag_empty"]}
    assert tell(curious, "game_ended", ended, SPECTATOR, NAMES, "en").text == (
        "The game is over (the tile bag is empty): no one won, because no player shipped two"
        " goods of every colour (points ?)"  # what the view lacks shows as "?"
    )


def test_plural_forms_are_the_languages() -> None:
    rules = GAMES["cargo-empire"]
    for n, en, fr in [
        (0, "0 cards", "0 carte"),
        (1, "1 card", "1 carte"),
        (2, "2 cards", "2 cartes"),
    ]:
        data = {"type": "cards_drawn", "seat": 0, "cards": ["truck"] * n}
        assert tell(rules, "cards_drawn", data, SPECTATOR, NAMES, "en").text == f"ann drew {en}"
        assert tell(rules, "cards_drawn", data, SPECTATOR, NAMES, "fr").text == f"ann pioche {fr}"
    # French's "many" (Babel's CLDR rules): a million is "de" cartes, grouped the French way
    french = speaker("domain.cargo_empire", "fr")
    view = {"type": "cities_dealt", "seat": 0, "count": 1_000_000}
    text = french.sentence("cargo-empire", "cities_dealt", view, NAMES).text
    million = format_decimal(1_000_000, locale="fr")
    assert " " not in million and text == f"ann reçoit {million} de cartes de ville privées"


def test_languages_and_unknown_seats() -> None:
    assert negotiate("fr", "en") == "fr" and negotiate(None, None) == "en"
    assert negotiate(None, "fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5") == "fr"
    assert negotiate(None, "de, en;q=0.5, fr;q=0.9") == "fr"
    assert negotiate(None, "de, fr;q=0") == "en" and negotiate(None, "fr;q=x, en") == "en"
    assert negotiate(None, "en, fr") == "en"
    assert language("fr-CA") == "fr" and language("FR") == "fr" and language("fr_FR") == "fr"
    assert language("de") == "en" and language(None) == "en" and language("") == "en"
    rules = GAMES["jolly-cargo"]
    ended = {"type": "turn_ended", "seat": 3}
    assert tell(rules, "turn_ended", ended, SPECTATOR, ["ann"], "fr").text == (
        "place 3 finit son tour"
    )


def test_a_catalogue_is_gettext_po_read_by_babel() -> None:
    po = b"""msgid ""
msgstr ""
"Language: fr\\n"

msgid "x.thing"
msgid_plural "count"
msgstr[0] "{count} chose"
msgstr[1] "{count} de choses"
msgstr[2] "{count} choses"
"""
    parsed = parse_catalogue(po, "fr")
    assert parsed.templates == (
        Template("x.thing", ("{count} chose", "{count} de choses", "{count} choses"), "count"),
    )

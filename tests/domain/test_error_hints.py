"""Errors that say what to do (issue 43): a command, options or query that does not decode is
refused with a detail listing the valid types, fields or values, the nearest suggested
(difflib), and a command's pointing at ``/legal``."""

from __future__ import annotations

import pytest

from domain.kernel import CommandError
from domain.registry import GAMES


def _detail(call: object, raw: object) -> str:
    with pytest.raises(CommandError) as caught:
        call(raw)  # type: ignore[operator]
    return caught.value.message


def test_an_unknown_command_type_lists_the_types_and_suggests_the_nearest() -> None:
    rules = GAMES["cargo-empire"]
    detail = _detail(rules.decode_command, b'{"type": "plase_post", "city": "Paris"}')
    assert detail.startswith("unknown command type 'plase_post' (did you mean 'place_post'?)")
    assert "the valid types: deliver, gather, place_post" in detail
    assert "/legal" in detail
    far = _detail(rules.decode_command, {"type": "teleport"})
    assert "did you mean" not in far and "the valid types: deliver, gather, place_post" in far
    untyped = _detail(rules.decode_command, {"city": "Paris"})
    assert untyped.startswith("a command needs a type; the valid types: deliver")


def test_every_games_typo_is_suggested() -> None:
    jolly = GAMES["jolly-cargo"]
    assert "(did you mean 'end_turn'?)" in _detail(jolly.decode_command, {"type": "end_trun"})
    empire = GAMES["empire-builder"]
    assert "(did you mean 'build'?)" in _detail(empire.decode_command, {"type": "biuld"})


def test_an_unknown_field_or_option_lists_the_known_ones() -> None:
    rules = GAMES["cargo-empire"]
    field = _detail(rules.decode_command, {"type": "place_post", "cty": "Paris"})
    assert field == (
        "unknown field 'cty' of a 'place_post' command (did you mean 'city'?);"
        " the valid fields: city"
    )
    option = _detail(rules.decode_options, b'{"starting_post": "random"}')
    assert option == (
        "unknown option 'starting_post' (did you mean 'starting_posts'?);"
        " the valid options: starting_posts"
    )
    jolly = _detail(GAMES["jolly-cargo"].decode_options, {"fast": True})
    assert "the valid options: colours, crate_placement, fast_variant" in jolly


def test_a_value_not_among_a_fields_few_lists_them() -> None:
    rules = GAMES["cargo-empire"]
    value = _detail(rules.decode_options, {"starting_posts": "chose"})
    assert value == (
        "'chose' is no value of 'starting_posts' (did you mean 'choose'?);"
        " the valid values: choose, random"
    )


def test_a_huge_unknown_type_is_quoted_short() -> None:
    detail = _detail(GAMES["jolly-cargo"].decode_command, {"type": "x" * 60_000})
    assert len(detail) < 600 and "did you mean" not in detail


def test_other_errors_keep_msgspecs_words() -> None:
    rules = GAMES["cargo-empire"]
    wrong_type = _detail(rules.decode_command, {"type": "place_post", "city": 7})
    assert wrong_type == "Expected `str`, got `int` - at `$.city`"


_HUGE = "q" * 100_000


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_a_hint_echoes_no_huge_value_back(game_id: str) -> None:
    """An attacker's 100 KB field name, type or value comes back cut, not whole (a refusal is
    logged and answered: an echo would multiply the attacker's bytes), in every decoder."""
    rules = GAMES[game_id]
    tag = next(iter(_tags_of(rules.command_type)))
    sent: list[tuple[object, object]] = [
        (rules.decode_command, {"type": _HUGE}),
        (rules.decode_command, {"type": tag, _HUGE: 1}),
        (rules.decode_options, {_HUGE: 1}),
        (rules.decode_position, {_HUGE: 1}),
    ]
    for call, raw in sent:
        detail = _detail(call, raw)
        assert len(detail) < 2_000, (game_id, raw if len(str(raw)) < 80 else "huge", detail[:80])


def _tags_of(target: object) -> list[str]:
    import typing

    import msgspec

    out = []
    for member in typing.get_args(target) or (target,):
        info = msgspec.inspect.type_info(member)
        if isinstance(info, msgspec.inspect.StructType) and info.tag is not None:
            out.append(str(info.tag))
    return out

"""``domain.kernel.typed``: the cached-decoder path accepts and refuses exactly what
``msgspec.convert`` does, with the same messages (they reach clients in problem details)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from domain.jolly_cargo import JOLLY_CARGO
from domain.kernel import CommandError, decoder, typed

COMMAND = JOLLY_CARGO.command_type

CASES: list[Any] = [
    {"type": "end_turn"},
    {"type": "move", "workers": ["red-M"], "steps": [{"dir": "N"}, {"dir": "E", "kind": "pull"}]},
    {"type": "move", "workers": "red-M", "steps": []},
    {"type": "move", "workers": ["red-M"], "steps": [{"dir": "up"}]},
    {"type": "place_crate"},
    {"type": "place_crate", "square": 4},
    {"type": "place_crate", "square": "c4", "extra": 1},
    {"type": "fly"},
    {"square": "c4"},
    [],
    None,
    1.5,
]


def _outcome(fn: Any) -> Any:
    try:
        return ("ok", msgspec.json.encode(fn()))
    except msgspec.ValidationError as error:
        return ("invalid", str(error))


@pytest.mark.parametrize("raw", CASES)
def test_builtins_are_judged_as_convert_judges_them(raw: Any) -> None:
    assert _outcome(lambda: typed(raw, COMMAND)) == _outcome(
        lambda: msgspec.convert(raw, type=COMMAND)
    )


def test_json_text_is_decoded_and_one_decoder_serves_each_type() -> None:
    assert typed(b'{"type": "end_turn"}', COMMAND) == typed({"type": "end_turn"}, COMMAND)
    assert decoder(COMMAND) is decoder(COMMAND)


def test_a_malformed_command_is_a_command_error() -> None:
    with pytest.raises(CommandError) as caught:
        JOLLY_CARGO.decode_command({"type": "place_crate", "square": 4})
    assert caught.value.code == "command.invalid"
    assert "Expected `str`, got `int` - at `$.square`" in caught.value.message

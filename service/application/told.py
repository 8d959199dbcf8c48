"""Events told as sentences for their caller (docs/api.md, "Sentences"): the event document
the caller reads, with the sentence of its event built from the caller's event view
(:func:`domain.platform.sentences.tell`), and the templates an export used."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from domain.kernel import Viewer
from domain.kernel.messages import LANGUAGES, PLATFORM, Template, catalogue, package_of
from domain.platform.sentences import tell
from domain.registry import AnyGame
from service.application.answers import EventDocument
from service.eventstore.records import StoredEvent


def told(
    doc: EventDocument,
    rules: AnyGame,
    event: StoredEvent,
    viewer: Viewer,
    seat: int | None,
    names: Sequence[str | None],
    lang: str,
) -> EventDocument:
    """``doc`` (``event`` as the caller reads it) with its sentence in ``lang``: the caller is
    ``viewer`` (an auditor once the game is over) holding ``seat``'s token (None: none)."""
    sentence = tell(rules, event.type, event.data, viewer, names, lang, seat)
    return msgspec.structs.replace(doc, sentence=sentence)


def templates_used(rules: AnyGame, types: Iterable[str]) -> dict[str, list[Template]]:
    """Per language, the templates of the event ``types`` (every variant) and the words they
    use (``<scope>.term.*``): what an export's reader needs to tell its events itself."""
    scopes = {f"{PLATFORM if '.' in t else rules.id}.{t}" for t in types}
    out: dict[str, list[Template]] = {}
    for lang in LANGUAGES:
        chosen: list[Template] = []
        for package in (package_of(rules.state_type.__module__), "domain.platform"):
            for template in catalogue(package, lang).templates:
                base = template.id.split("#")[0]
                if base in scopes or ".term." in template.id:
                    chosen.append(template)
        out[lang] = chosen
    return out

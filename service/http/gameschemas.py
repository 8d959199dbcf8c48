"""Each game's typed contract in the OpenAPI document (docs/api.md, "Typed documents").

Every registered game's commands, events, options, position, view, queries and their answers
(msgspec Structs of ``domain/<game>/``) become named component schemas, prefixed by the game
(``EmpireBuilder.Build``, ``CargoEmpire.Options``; the game's id in PascalCase, then a dot),
with one name per kind: ``<Game>.Command``, ``<Game>.Event``, ``<Game>.Options``,
``<Game>.Position``, ``<Game>.View``, ``<Game>.Query``, ``<Game>.Answer`` (the unions are
discriminated by ``type``). The platform's own events are ``Platform.<Name>`` and
``Platform.Event`` (every type of :data:`domain.platform.events.PlatformEvent`, so a new one
appears by itself).

The documents that carry game data get a variant per game (``<Game>.GameDocument``,
``<Game>.EventDocument``, ``<Game>.ReplayLine``, ...), and the envelope names the API always had
(``GameDocument``, ``EventsPage``, ``CommandBody``, ...) become unions of them: discriminated by
``game`` where the document has that field (the game document, the created game, the creation
request), else an ``anyOf`` whose variant is the game the path names (a client knows it from
``GET /v1/games/{id}``'s ``game``).

An event as a caller reads it is its public form: a value hidden from the caller is
``{"commitment": hex}`` (``Commitment``) where the event's type declares hidden values
(:data:`domain.kernel.hidden.HIDDEN_PATHS`), so those places admit a commitment too.

Views: every game's rules name their view type (``view_type``), published as ``<Game>.View``.
"""

from __future__ import annotations

import copy
import typing
from typing import Any

import msgspec

from domain.kernel.hidden import declared_paths
from domain.platform.events import PlatformEvent
from domain.registry import AnyGame, all_games

REF = "#/components/schemas/{name}"
PLATFORM = "Platform"
COMMITMENT = "Commitment"
COMMITMENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "A hidden value the caller may not read: its salted commitment "
    "(docs/receipts-and-audit.md)",
    "properties": {"commitment": {"type": "string", "pattern": "^[0-9a-f]{64}$"}},
    "required": ["commitment"],
    "additionalProperties": False,
}
#: The kinds each game names, and the rules' attribute holding each type.
KINDS = {
    "Command": "command_type",
    "Event": "event_type",
    "Options": "options_type",
    "Position": "position_type",
    "View": "view_type",
    "Query": "query_type",
}


def prefix(game_id: str) -> str:
    """``empire-builder`` -> ``EmpireBuilder``: the game's component names start with it."""
    return "".join(part[:1].upper() + part[1:] for part in game_id.split("-"))


def ref(name: str) -> dict[str, str]:
    return {"$ref": REF.format(name=name)}


def _name_of(reference: dict[str, Any]) -> str:
    return str(reference["$ref"]).rsplit("/", 1)[1]


def _tag_of(cls: type) -> str:
    tag = msgspec.inspect.type_info(cls)
    if not isinstance(tag, msgspec.inspect.StructType) or tag.tag is None:
        raise TypeError(f"{cls!r} is not a tagged msgspec Struct: a union member needs a tag")
    return str(tag.tag)


def _members(union: Any) -> list[type]:
    members = typing.get_args(union)
    return list(members) if members else [union]


def _answer_type(query_type: Any) -> Any:
    """The union of the answers of a game's queries (each query type's ``answer_type``)."""
    answers = tuple(typing.cast(Any, q).answer_type for q in _members(query_type))
    return answers[0] if len(answers) == 1 else typing.Union[answers]  # noqa: UP007


def _types(rules: AnyGame) -> dict[str, Any]:
    found = {kind: getattr(rules, attr, None) for kind, attr in KINDS.items()}
    if found["Query"] is not None:
        found["Answer"] = _answer_type(found["Query"])
    return {kind: t for kind, t in found.items() if t is not None}


def _plain(schema: Any) -> Any:
    """``schema`` without ``title`` anywhere (an inlined copy must not take a Struct's name:
    two games' inlined ``Position`` would then be one model to a generator)."""
    if isinstance(schema, dict):
        return {k: _plain(v) for k, v in schema.items() if k != "title"}
    if isinstance(schema, list):
        return [_plain(v) for v in schema]
    return schema


def _untitled(schema: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in schema.items() if k != "title"}


def _seal(schema: dict[str, Any], parts: list[str], components: dict[str, Any]) -> None:
    """Where ``parts`` leads in ``schema`` (a property name, or ``*`` for any list item),
    admit a :data:`COMMITMENT` as well (changed in place; a ``$ref`` on the way is inlined)."""
    if "$ref" in schema:
        target = _plain(copy.deepcopy(components[_name_of(schema)]))
        schema.clear()
        schema.update(target)
    if not parts:
        whole = dict(schema)
        schema.clear()
        schema["anyOf"] = [whole, ref(COMMITMENT)]
        return
    if "anyOf" in schema:  # an optional value: seal in each alternative that has the part
        for option in schema["anyOf"]:
            if option.get("type") != "null":
                _seal(option, parts, components)
        return
    head, rest = parts[0], parts[1:]
    if head == "*":
        _seal(schema["items"], rest, components)
    else:
        _seal(schema["properties"][head], rest, components)


def _typed_kinds(
    name: str, types: dict[str, Any], components: dict[str, Any]
) -> dict[str, dict[str, Any]]:
    """The components of one game's (or the platform's) types, named ``<name>.<Struct>``,
    and one name per kind; event types' hidden places admit a commitment."""
    kinds = list(types)
    schemas, found = msgspec.json.schema_components(
        [types[k] for k in kinds], ref_template=REF.format(name=name + ".{name}")
    )
    # no ``title``: generators name a model by it before the component's (prefixed) name, and
    # two games' ``Move`` would be one model
    own = {f"{name}.{key}": _untitled(value) for key, value in found.items()}
    for kind, schema in zip(kinds, schemas, strict=True):
        alias = f"{name}.{kind}"
        if schema.get("$ref") == REF.format(name=alias):
            continue
        if alias in own:
            raise RuntimeError(f"{alias}: a Struct has the name of a kind; rename it")
        if "$ref" not in schema:
            own[alias] = schema
            continue
        # One Struct (a view, options, a position): its component takes the kind's name instead
        # of being aliased (an ``allOf`` alias makes generators build its inline models twice,
        # under the same names: openapi-python-client then drops the view).
        target = _name_of(schema)
        own[alias] = own.pop(target)
        _retarget(own, REF.format(name=target), REF.format(name=alias))
    if "Event" in types:
        mapping = own[f"{name}.Event"].get("discriminator", {}).get("mapping", {})
        for cls in _members(types["Event"]):
            paths = declared_paths(cls)
            if not paths:
                continue
            event = (
                own[_name_of({"$ref": mapping[_tag_of(cls)]})]
                if mapping
                else own[f"{name}.{cls.__name__}"]
            )
            for path in paths:
                _seal(event, path.split("."), own)
    components.update(own)
    return own


def _retarget(value: Any, old: str, new: str) -> None:
    """Every ``$ref`` to ``old`` inside ``value`` (components, in place) made one to ``new``."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "$ref" and item == old:
                value[key] = new
            else:
                _retarget(item, old, new)
    elif isinstance(value, list):
        for item in value:
            _retarget(item, old, new)


def _variant(base: dict[str, Any], **properties: Any) -> dict[str, Any]:
    """A copy of the envelope ``base`` with ``properties`` replaced (``None``: removed)."""
    variant = copy.deepcopy(base)
    variant.pop("title", None)
    for key, value in properties.items():
        variant["properties"][key] = value
    return variant


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}]}


def _array(schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": schema}


def _union(names: list[str], discriminator: str | None, tags: list[str]) -> dict[str, Any]:
    if discriminator is None:
        return {"anyOf": [ref(n) for n in names]}
    return {
        "oneOf": [ref(n) for n in names],
        "discriminator": {
            "propertyName": discriminator,
            "mapping": {tag: REF.format(name=n) for tag, n in zip(tags, names, strict=True)},
        },
    }


#: Envelopes with a variant per game: name -> discriminating field (None: the path's game).
ENVELOPES: dict[str, str | None] = {
    "GameDocument": "game",
    "CreatedGame": "game",
    "CreateGame": "game",
    "DisputeFile": None,  # its ``game`` is the game's id, not its kind
    "LegalDocument": None,
    "CommandAnswer": None,
    "EventsPage": None,
    "ReplayView": None,
    "ReplayLine": None,
    "QueryAnswer": None,
    "CommandBody": None,
    "QueryBody": None,
}

#: One line of ``GET /v1/games/{id}/replay`` (NDJSON): the event, and on keyframes the view
#: (and, in a game with a turn clock, every seat's clock).
REPLAY_LINE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "version": {"type": "integer", "minimum": 1},
        "event": {},
        "view": {},
        "clock": {"$ref": "#/components/schemas/ClockDocument"},
    },
    "required": ["version", "event"],
}


def install(components: dict[str, Any]) -> dict[str, list[str]]:
    """Add every game's components to ``components`` (the document's schemas, holding the
    envelopes as msgspec wrote them) and make each envelope of :data:`ENVELOPES` the union
    of its games' variants. Returns each game's component names (for the tests)."""
    components[COMMITMENT] = COMMITMENT_SCHEMA
    platform = _typed_kinds(PLATFORM, {"Event": PlatformEvent}, components)
    platform_union = platform[f"{PLATFORM}.Event"]
    components["ReplayLine"] = REPLAY_LINE
    base = {name: components[name] for name in ENVELOPES}
    variants: dict[str, list[tuple[str, str]]] = {name: [] for name in ENVELOPES}
    names: dict[str, list[str]] = {}
    for rules in all_games():
        p = prefix(rules.id)
        own = _typed_kinds(p, _types(rules), components)
        game_union = own[f"{p}.Event"]
        components[f"{p}.EventData"] = {
            "anyOf": [*game_union["anyOf"], *platform_union["anyOf"]],
            "discriminator": {
                "propertyName": "type",
                "mapping": {
                    **game_union["discriminator"]["mapping"],
                    **platform_union["discriminator"]["mapping"],
                },
            },
        }
        components[f"{p}.EventDocument"] = _variant(
            components["EventDocument"], data=ref(f"{p}.EventData")
        )
        view, command = ref(f"{p}.View"), ref(f"{p}.Command")
        events = _array(ref(f"{p}.EventDocument"))
        game = {"const": rules.id}
        per_game: dict[str, dict[str, Any]] = {
            "GameDocument": _variant(
                base["GameDocument"],
                game=game,
                view=_nullable(view),
                messages=_array(ref(f"{PLATFORM}.TableMessage")),
            ),
            "CreatedGame": _variant(base["CreatedGame"], game=game, view=_nullable(view)),
            "CreateGame": _variant(
                base["CreateGame"],
                game=game,
                options=_nullable(ref(f"{p}.Options")),
                position=_nullable(ref(f"{p}.Position")),
            ),
            "DisputeFile": _variant(
                base["DisputeFile"],
                events=events,
                state_before=_variant(
                    components["StateBefore"],
                    as_seat_saw_it=_nullable(view),
                    as_you_see_it=_nullable(view),
                    full=_nullable(view),
                ),
            ),
            "LegalDocument": _variant(base["LegalDocument"], commands=_array(command)),
            "CommandAnswer": _variant(base["CommandAnswer"], events=events, legal=_array(command)),
            "EventsPage": _variant(base["EventsPage"], events=events),
            # null: after an event before the game's set-up (``lobby.created``, a join)
            "ReplayView": _variant(base["ReplayView"], view=_nullable(view)),
            "ReplayLine": _variant(
                base["ReplayLine"], event=ref(f"{p}.EventDocument"), view=_nullable(view)
            ),
            "CommandBody": _variant(base["CommandBody"], command=command),
        }
        if f"{p}.Query" in components:
            per_game["QueryAnswer"] = _variant(base["QueryAnswer"], answer=ref(f"{p}.Answer"))
            per_game["QueryBody"] = _variant(base["QueryBody"], query=ref(f"{p}.Query"))
        for envelope, schema in per_game.items():
            components[f"{p}.{envelope}"] = schema
            variants[envelope].append((f"{p}.{envelope}", rules.id))
        names[rules.id] = sorted(own) + [f"{p}.{e}" for e in per_game]
    for envelope, field in ENVELOPES.items():
        listed = variants[envelope]
        components[envelope] = {
            "description": base[envelope].get("description", "")
            + (
                f" One variant per game, told apart by `{field}`."
                if field
                else " One variant per game: the one of the game the path names."
            ),
            **_union([n for n, _ in listed], field, [g for _, g in listed]),
        }
    return names

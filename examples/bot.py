"""A bot that plays any game on a Manifest server: it creates a game with one bot per seat and
plays it to the end, printing its progress and the result.

    .venv/bin/python -m examples.bot http://127.0.0.1:8000 jolly-cargo --seats 3 [--delay 0.2]

(from the repository's root: ``examples/`` is not in the installed package). Whichever seat is
to act sends a command with ``expected_version``: for Empire Builder the scripted greedy player
of ``domain/empire_builder/greedy.py`` picks it from the seat's own view (random play there
runs thousands of turns without a winner), and the game gets a turn limit (``--turns``,
default 40) after which the richest wins; for Curious Cargo the greedy player of
``domain/curious_cargo/greedy.py`` from the seat's own view (the hidden opponent cards, deck and
bag filled with stand-ins it has not seen: it guesses, never peeks), so that games end by
shipping or a star; for the other games one of ``GET /legal``'s commands at random. A scripted
move the rules refuse is printed and replaced by a random legal command.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from typing import Any

import httpx

from .client import JSON, ApiError, Created, GameDoc, ManifestClient

#: (the seat's client, the game id, the seat) -> the command to send and the version it is for
Chooser = Callable[[ManifestClient, str, int], tuple[JSON | None, int]]


def random_chooser(rng: random.Random) -> Chooser:
    def choose(me: ManifestClient, game_id: str, seat: int) -> tuple[JSON | None, int]:
        legal = me.legal(game_id)
        return (rng.choice(legal.commands) if legal.commands else None), legal.version

    return choose


def empire_builder_chooser() -> Chooser:
    """The greedy player (one per seat, it keeps a plan), fed the state its seat's view shows."""
    import msgspec

    from domain.empire_builder.board import edge_key
    from domain.empire_builder.greedy import GreedyBot
    from domain.empire_builder.options import Options
    from domain.empire_builder.state import Effect, Player, State, Turn

    bots: dict[int, GreedyBot] = {}

    def state_of(view: Any) -> State:
        players = [
            Player(
                p["money"],
                [c["id"] if c else -1 for c in p["cards"]],
                list(p["loads"]),
                p["train"],
                p["speed"],
                p["capacity"],
                p["turns"],
                p["debt"],
                p["face"],
                p["skip"],
            )
            for p in view["players"]
        ]
        tracks = enumerate(view["tracks"])
        track = {edge_key(a, b): seat for seat, edges in tracks for a, b in edges}
        return State(
            seats=len(players),
            options=msgspec.convert(view["options"], Options),
            phase=view["phase"],
            order=list(view["order"]),
            players=players,
            track=track,
            deck=[],
            discard=list(view["discard"]),
            turn_number=view["turn_number"],
            turn=msgspec.convert(view["turn"], Turn),
            effects=[Effect(x["card"], x["drawer"], x["turns_left"]) for x in view["effects"]],
            pending=list(view["pending"]),
        )

    def choose(me: ManifestClient, game_id: str, seat: int) -> tuple[JSON | None, int]:
        doc = me.game(game_id)
        command = bots.setdefault(seat, GreedyBot()).choose(state_of(doc.view), seat)
        sent: JSON = msgspec.to_builtins(command)
        return sent, doc.version

    return choose


def curious_cargo_chooser(rng: random.Random) -> Chooser:
    """The greedy player of ``domain/curious_cargo/greedy.py`` (one per seat), fed a State
    rebuilt from its seat's view. What the view hides gets neutral placeholders, never the real
    values: the opponent's truck cards (and draft cards) are that many of the cards this seat has
    not seen, the deck the rest of them, the bag the tiles seen nowhere (the bag's contents are
    not shown, only its size). The bot only simulates its own moves on that State, so the guesses
    change which trial draws it imagines, not what the server does."""
    import msgspec

    from domain.curious_cargo.components import CARD_IDS, TILE_IDS
    from domain.curious_cargo.greedy import GreedyBot
    from domain.curious_cargo.options import Options
    from domain.curious_cargo.state import Placed, Player, Score, State, Supply, TruckInLane
    from domain.kernel import Rng

    bots: dict[int, GreedyBot] = {}

    def lane(trucks: list[Any]) -> list[TruckInLane]:
        return [
            TruckInLane(t["card"], t["rear"], {int(k): v for k, v in t["goods"].items()})
            for t in trucks
        ]

    def state_of(view: Any, seat: int) -> State:
        seen_cards = set(view["discarded_cards"])
        seen_tiles = set(view["discarded_tiles"])
        for p in view["players"]:
            seen_cards.update(t["card"] for t in p["shipping_lane"] + p["receiving_lane"])
            seen_tiles.update(b["piece"] for b in p["board"])
            seen_tiles.update(p["hand"])
            seen_tiles.update(t for stack in p["storage"] for t in stack)
            seen_cards.update(p["cards"] or [])
            seen_cards.update(p["dealt"] or [])
            if p["kept"]:
                seen_cards.add(p["kept"])
        unseen = [c for c in CARD_IDS if c not in seen_cards]
        players = []
        for p in view["players"]:
            if p["seat"] == seat:
                cards, dealt, kept = list(p["cards"]), list(p["dealt"]), p["kept"]
            else:  # hidden: stand-ins drawn from the cards this seat has not seen
                cards = [unseen.pop() for _ in range(min(p["card_count"], len(unseen)))]
                dealt = [unseen.pop() for _ in range(min(p["dealt_count"], len(unseen)))]
                kept = unseen.pop() if p["has_kept"] and unseen else None
            players.append(
                Player(
                    board=[msgspec.convert(b, Placed) for b in p["board"]],
                    scaffolds=p["scaffolds"],
                    hand=list(p["hand"]),
                    storage=[list(x) for x in p["storage"]],
                    cards=cards,
                    dealt=dealt,
                    kept=kept,
                    construction=p["tokens"]["construction"],
                    trucking=p["tokens"]["trucking"],
                    splitters=dict(p["splitters"]),
                    forklift=p["forklift"],
                    shipped=dict(p["shipped"]),
                    received=dict(p["received"]),
                    shipping_lane=lane(p["shipping_lane"]),
                    receiving_lane=lane(p["receiving_lane"]),
                )
            )
        bag = [t for t in TILE_IDS if t not in seen_tiles][: view["bag_size"]]
        return State(
            options=msgspec.convert(view["options"], Options),
            players=players,
            bag=bag,
            deck=unseen[: view["deck_size"]],
            supply=msgspec.convert(view["supply"], Supply),
            phase=view["phase"],
            step=view["step"],
            round=view["round"],
            order=list(view["order"]),
            turn=view["turn"],
            actions_left=view["actions_left"],
            token_used=view["token_used"],
            ap_left=view["ap_left"],
            ap_spent=view["ap_spent"],
            trucking_token_used=view["trucking_token_used"],
            top=view["top"],
            pending=list(view["pending"]),
            discarded_tiles=list(view["discarded_tiles"]),
            discarded_cards=list(view["discarded_cards"]),
            lost_goods=dict(view["lost_goods"]),
            scores=[msgspec.convert(x, Score) for x in view["scores"]],
            winners=list(view["winners"]),
        )

    def choose(me: ManifestClient, game_id: str, seat: int) -> tuple[JSON | None, int]:
        doc = me.game(game_id)
        if seat not in bots:
            bots[seat] = GreedyBot(Rng(rng.getrandbits(256).to_bytes(32, "big"), seat))
        command = bots[seat].choose(state_of(doc.view, seat), seat)
        sent: JSON = msgspec.to_builtins(command)
        return sent, doc.version

    return choose


def play(
    api: ManifestClient,
    created: Created,
    *,
    rng: random.Random | None = None,
    delay: float = 0.0,
    max_commands: int = 20_000,
    chooser: Chooser | None = None,
    say: Callable[[str], None] = lambda line: None,
    every: int = 100,
) -> GameDoc:
    """Play ``created`` (every seat held by this bot) to its end; returns the final document.
    ``say`` is told the progress every ``every`` commands sent."""
    rng = rng or random.Random()
    choose = chooser or random_chooser(rng)
    seats = [api.seat(created, s.seat) for s in created.seats]
    sent = 0
    for _ in range(max_commands):
        doc = api.game(created.id)
        if doc.status == "finished":
            return doc
        if not doc.to_act:
            raise RuntimeError(f"game {created.id} is {doc.status} with nobody to act")
        seat = rng.choice(doc.to_act)
        command, version = choose(seats[seat], created.id, seat)
        if command is None:
            continue  # the turn moved on between the two reads
        try:
            seats[seat].command(created.id, command, expected_version=version)
        except ApiError as error:
            if error.code == "version.conflict":
                continue
            if chooser is None or error.status != 422:
                raise
            # a scripted player's move the rules refuse: say so, and play a legal one instead
            say(f"seat {seat}: {command} refused ({error.code}); a random legal command instead")
            fallback, version = random_chooser(rng)(seats[seat], created.id, seat)
            if fallback is not None:
                try:
                    seats[seat].command(created.id, fallback, expected_version=version)
                except ApiError as again:
                    if again.code != "version.conflict":
                        raise
        sent += 1
        if sent % every == 0:
            say(f"{sent} commands sent, version {version + 1}, to act {doc.to_act}")
        if delay:
            time.sleep(delay)
    raise RuntimeError(f"game {created.id} did not end in {max_commands} commands")


DESCRIPTION = (
    "A bot that plays any game on a Manifest server: it creates a game with one bot per seat "
    "and plays it to the end, printing its progress and the result."
)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m examples.bot", description=DESCRIPTION)
    parser.add_argument("url", help="the server, e.g. http://127.0.0.1:8000")
    parser.add_argument("game", help="a game id: jolly-cargo, cargo-empire, empire-builder, ...")
    parser.add_argument("--seats", type=int, default=2, help="players (default 2)")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds between commands")
    parser.add_argument("--seed", type=int, default=None, help="seed of the bots' choices")
    parser.add_argument(
        "--turns", type=int, default=40, help="Empire Builder's turn limit (default 40)"
    )
    args = parser.parse_args(argv)
    try:
        _play(args)
    except ApiError as error:  # a user's mistake (a misspelt game, too many seats): one line
        sys.exit(f"bot: {error.detail} ({error.code})")
    except httpx.HTTPError as error:
        sys.exit(f"bot: cannot reach {args.url}: {error}")
    except KeyboardInterrupt:
        sys.exit("bot: interrupted")


def _play(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    options: JSON | None = None
    chooser = None
    if args.game == "empire-builder":
        options, chooser = {"turn_limit": args.turns}, empire_builder_chooser()
    elif args.game == "curious-cargo":
        chooser = curious_cargo_chooser(rng)
    with ManifestClient(args.url) as api:
        players = [f"bot{i}" for i in range(args.seats)]
        created = api.create(args.game, players=players, options=options)
        print(f"game {created.id}: {args.url}/viewer/#/games/{created.id}", flush=True)
        doc = play(
            api,
            created,
            rng=rng,
            delay=args.delay,
            chooser=chooser,
            say=lambda line: print(line, flush=True),
        )
        print(f"finished at version {doc.version}: {doc.result}")
        ended = [e["data"] for e in api.events(created.id) if e["type"] == "game_ended"]
        why = ended[-1].get("triggers") or ended[-1].get("reason") if ended else None
        if why:
            print(f"ended by: {why}", flush=True)


if __name__ == "__main__":
    main()

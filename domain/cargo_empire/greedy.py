"""A scripted greedy player for Cargo Empire, for bot games that score like a player's.

Every legal command (starting post, delivery with its route and bonus split, gather) is tried on
the state with the bot's own generator (``kernel.best_by_trial``) and the one leaving the best
standing is sent. The standing is the seat's score as if the game ended now (``rules.score``:
development markers, LV3 posts, private cities, goals), plus what the score does not see yet:
cards in hand (the means of later deliveries), posts on the map (reach; Far Reach), colours still
to deliver, and a city whose demand is nearly filled (an upgrade, LV3 posts). A finished game
adds a win bonus. So it delivers whenever a delivery pays, takes the bonus moves where the
markers earn most, places its starting posts on its private cities, and gathers the card it
lacks otherwise.

Pure: no I/O, no global random; ties are broken by the ``rng`` it is given. It reads the whole
state (no opponent's hidden card enters a score). Use one :class:`GreedyBot` per seat and game.
"""

from __future__ import annotations

from domain.kernel import Rng, best_by_trial

from . import commands as cmd
from .board import NAMES
from .legal import legal
from .rules import score
from .state import State

_WIN = 50.0


def standing(s: State, seat: int) -> float:
    """How well ``seat`` stands: its score now and what is on its way to score."""
    p = s.players[seat]
    value = float(score(s, seat).total)
    value += 0.8 * p.hand.total()
    value += 1.2 * sum(s.posts_in(n).count(seat) for n in NAMES)
    value += 0.5 * len(p.delivered)
    if s.phase == "finished" and seat in s.winners:
        value += _WIN / len(s.winners)
    return value


class GreedyBot:
    """One seat's greedy player (see the module)."""

    def __init__(self, rng: Rng) -> None:
        self.rng = rng
        self._trial = Rng(b"cargo-empire/greedy/trial".ljust(32, b"."), 0)

    def choose(self, state: State, seat: int) -> cmd.Command:
        from .game import CARGO_EMPIRE  # the record names this bot (its ``timeout``)

        return best_by_trial(
            CARGO_EMPIRE,
            state,
            seat,
            legal(state, seat),
            lambda after: standing(after, seat),
            self.rng,
            self._trial,
        )

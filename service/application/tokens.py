"""Bearer tokens and invite codes: random secrets, stored only as SHA-256 hashes."""

from __future__ import annotations

import hashlib
import secrets

from service.application.errors import Unauthorized

SEAT_PREFIX = "mfs_"
HOST_PREFIX = "mfh_"
PLAYER_PREFIX = "mfp_"

#: What a player key may do (docs/api.md, "Players"): read its seats' games, act in them,
#: manage the player's keys. A player's first key holds them all; a further key holds a subset.
SCOPES = ("read", "play", "keys")


def new_token(prefix: str) -> str:
    return prefix + secrets.token_urlsafe(32)


def token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def new_invite_code() -> str:
    """Eight characters from an alphabet without look-alikes, easy to read out loud."""
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    return "".join(secrets.choice(alphabet) for _ in range(8))


def new_seed() -> bytes:
    return secrets.token_bytes(32)


def bearer(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, if any."""
    if not header:
        return None
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return None
    return value.strip()


def token_of_header(header: str | None) -> str | None:
    """The token a request's ``Authorization`` header sends (None: no header). A header that
    is not ``Bearer <token>`` (a bare token, another scheme, nothing after ``Bearer``) is 401
    ``auth.malformed``: not taken for a missing token, nor for a spectator where a token is
    optional (the quotas, which must not refuse, read :func:`bearer`)."""
    if not header:
        return None
    token = bearer(header)
    if token is None:
        raise Unauthorized("auth.malformed", "send the token as Authorization: Bearer <token>")
    return token

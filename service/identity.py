"""Players: identity tokens the server verifies (docs/players.md).

A player is whoever an identity token names. Two kinds are accepted:

- the frontend's identity provider (Firebase Auth, Auth0, Keycloak, Cognito...): a JWT signed
  with an asymmetric key of its JWKS (RS256, ES256 or EdDSA, as configured), with the
  configured issuer and audience; the player is one claim (`sub` by default), the display name
  another. Keys are fetched and cached, and fetched again when a token names an unknown `kid`
  (at most every `refresh_seconds`), so a provider's key rotation needs no restart. An HS256
  shared secret is accepted instead only for development (`dev_secret`).
- guests: tokens the server signs itself (Ed25519, `service.guest_keys`), for a frontend with
  no accounts. A guest's id is `guest:<random>`.

Every check is PyJWT's; this module only chooses the key and algorithms a token may use (the
header's own `alg` never widens them: `none` and an HS256 token "signed" with a provider's
public key are refused) and maps failures to UNAUTHENTICATED with messages that never quote
the token, a claim or a key.

Example (a guest of a server's own key)::

    >>> ids = Identities(IdentitySettings(), GuestKeys.generate())
    >>> player, token = asyncio.run(ids.issue_guest("Ana"))
    >>> player.name, player.player_id.startswith("guest:")
    ('Ana', True)
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt
from jwt import PyJWK, PyJWKSet

from common.logging import get_logger
from engines.cache import remember
from service.guest_keys import GUEST_ALGORITHM, GuestKeys
from service.reasons import Reason
from service.table_errors import Code, TableError

log = get_logger("croupier.identity")

GUEST_ISSUER = "croupier:guest"
GUEST_AUDIENCE = "croupier"
GUEST_PREFIX = "guest:"
# player ids no provider may claim: they name guests and bot levels
RESERVED_PREFIXES = (GUEST_PREFIX, "bot:")
ASYMMETRIC = ("RS256", "RS384", "RS512", "PS256", "ES256", "ES384", "EdDSA")
DEFAULT_ALGORITHMS = ("RS256", "ES256", "EdDSA")
# a JWT with a few claims is well under 2 KB; gRPC refuses a call whose metadata passes 8 KB
# (now and then already from there on), so the server's own limit stays clear of that: a
# token it will not read is told so (UNAUTHENTICATED), not refused at random by the transport
MAX_TOKEN_CHARS = 6144
MAX_PLAYER_ID_CHARS = 200
MAX_PLAYER_NAME_CHARS = 40
LEEWAY_SECONDS = 30.0  # clock skew between the provider and us
VERIFIED_REMEMBERED = 20_000


@dataclass(frozen=True)
class Player:
    """A verified person: what seats bind to and ratings are kept for."""

    player_id: str
    name: str
    guest: bool
    expires_at: float


def is_identity_token(token: str) -> bool:
    """Identity tokens are JWTs (three parts separated by dots); seat tokens never hold one."""
    return "." in token


@dataclass(frozen=True)
class IdentitySettings:
    """How the server trusts a provider, and its guests (command-line flags, service/cli.py)."""

    jwks: str = ""  # https URL or file of the provider's JWKS; "" = no provider
    issuer: str = ""
    audience: str = ""
    algorithms: tuple[str, ...] = DEFAULT_ALGORITHMS
    player_claim: str = "sub"
    name_claim: str = "name"
    dev_secret: str = ""  # HS256, development only
    guests: bool = True
    guest_seconds: float = 30 * 24 * 3600.0  # a guest token's lifetime
    refresh_seconds: float = 10.0  # least time between two fetches of the JWKS on unknown kids
    max_age_seconds: float = 3600.0  # the JWKS is fetched again after this long anyway

    def __post_init__(self) -> None:
        wrong = [a for a in self.algorithms if a not in ASYMMETRIC]
        if wrong:
            raise ValueError(
                f"identity algorithms must be asymmetric ({', '.join(ASYMMETRIC)}); "
                f"{', '.join(wrong)} is not (an HS256 secret is --identity-dev-secret-file)"
            )
        if self.jwks and not (self.issuer and self.audience):
            raise ValueError(
                "an identity provider (--identity-jwks) needs --identity-issuer and "
                "--identity-audience: tokens are checked against both"
            )
        if self.dev_secret and len(self.dev_secret) < 32:
            raise ValueError("the HS256 development secret must have at least 32 characters")
        if self.dev_secret and not self.issuer:
            raise ValueError("an HS256 development secret needs --identity-issuer")


class KeySet:
    """The provider's public keys by `kid`, fetched from a URL (PyJWT's client) or a file."""

    def __init__(self, source: str, refresh_seconds: float, max_age: float) -> None:
        self.source = source
        self.refresh_seconds = refresh_seconds
        self.max_age = max_age
        self._keys: dict[str, PyJWK] = {}
        self._fetched_at = -float("inf")
        self._lock = asyncio.Lock()
        remote = source.startswith(("https://", "http://"))
        self._client = jwt.PyJWKClient(source, cache_keys=False, timeout=5) if remote else None

    def _load(self) -> dict[str, PyJWK]:
        if self._client is not None:
            data = self._client.fetch_data()
        else:
            data = json.loads(Path(self.source).read_text())
        keys = PyJWKSet.from_dict(data).keys
        return {k.key_id: k for k in keys if k.key_id}

    async def refresh(self, force: bool = False) -> None:
        async with self._lock:
            now = time.monotonic()
            if not force and now - self._fetched_at < self.refresh_seconds:
                return
            self._fetched_at = now
            try:
                self._keys = await asyncio.to_thread(self._load)
            except Exception as e:  # noqa: BLE001 - network, file, JSON: keep the old keys
                log.warning("jwks_fetch_failed", error=type(e).__name__)
                return
            log.info("jwks_fetched", keys=len(self._keys))

    async def key(self, kid: str) -> PyJWK | None:
        stale = time.monotonic() - self._fetched_at > self.max_age
        if kid not in self._keys or stale:
            await self.refresh(force=stale)
        return self._keys.get(kid)


class Identities:
    """Verifies identity tokens and issues guests' (one per server, shared by its calls)."""

    def __init__(
        self,
        settings: IdentitySettings,
        guest_keys: GuestKeys | None,
        load_guest_keys: Callable[[], Awaitable[GuestKeys]] | None = None,
    ) -> None:
        """`load_guest_keys`: where the guest keys come from when they are not given (the
        store's shared key), read on first need, so a store down at start delays guests
        only."""
        self.settings = settings
        self.guest_keys = guest_keys
        self._load_guest_keys = load_guest_keys
        self._loading = asyncio.Lock()
        self.keyset = (
            KeySet(settings.jwks, settings.refresh_seconds, settings.max_age_seconds)
            if settings.jwks
            else None
        )
        # verified tokens -> their player, until they expire: SubmitMove pays a dict lookup,
        # not a signature check, on each move of a player
        self._verified: dict[str, Player] = {}

    @property
    def guests(self) -> bool:
        return self.settings.guests and (
            self.guest_keys is not None or self._load_guest_keys is not None
        )

    async def _keys(self) -> GuestKeys | None:
        if self.guest_keys is None and self._load_guest_keys is not None and self.settings.guests:
            async with self._loading:
                if self.guest_keys is None:
                    self.guest_keys = await self._load_guest_keys()
        return self.guest_keys if self.settings.guests else None

    async def issue_guest(self, name: str) -> tuple[Player, str]:
        """A new guest player and its token, signed with the server's current guest key."""
        keys = await self._keys()
        if keys is None:
            raise TableError(
                Code.FAILED_PRECONDITION,
                "guest players are off on this server: sign in with its identity provider",
                reason=Reason.GUESTS_DISABLED,
            )
        name = check_player_name(name)
        now = time.time()
        player = Player(
            player_id=GUEST_PREFIX + secrets.token_urlsafe(16),
            name=name,
            guest=True,
            expires_at=now + self.settings.guest_seconds,
        )
        claims = {
            "iss": GUEST_ISSUER,
            "aud": GUEST_AUDIENCE,
            "sub": player.player_id,
            "name": name,
            "iat": int(now),
            "nbf": int(now),
            "exp": int(player.expires_at),
        }
        kid, private = keys.signing
        token = jwt.encode(claims, private, algorithm=GUEST_ALGORITHM, headers={"kid": kid})
        return player, token

    async def verify(self, token: str) -> Player:
        """The player `token` names; UNAUTHENTICATED (saying why, quoting nothing of it)."""
        hit = self._verified.get(token)
        if hit is not None and hit.expires_at + LEEWAY_SECONDS > time.time():
            return hit
        if len(token) > MAX_TOKEN_CHARS:
            raise _refused(f"it is longer than {MAX_TOKEN_CHARS} characters")
        try:
            header = jwt.get_unverified_header(token)
            unverified = jwt.decode(token, options={"verify_signature": False})
        except jwt.PyJWTError:
            raise _refused("it is not a JWT") from None
        alg = header.get("alg")
        kid = header.get("kid")
        if unverified.get("iss") == GUEST_ISSUER:
            player = self._verify_guest(token, alg, kid, await self._keys())
        else:
            player = await self._verify_provider(token, alg, kid)
        remember(self._verified, VERIFIED_REMEMBERED, token, player)
        return player

    def _verify_guest(self, token: str, alg: Any, kid: Any, keys: GuestKeys | None) -> Player:
        if keys is None:
            raise _refused("guest players are off on this server")
        if alg != GUEST_ALGORITHM:
            raise _refused(f"guest tokens are signed with {GUEST_ALGORITHM}")
        key = keys.public.get(kid) if isinstance(kid, str) else None
        if key is None:
            raise _refused("it is signed by a guest key this server does not hold")
        claims = _decode(token, key, GUEST_ALGORITHM, GUEST_ISSUER, GUEST_AUDIENCE)
        player_id = claims.get("sub")
        if not isinstance(player_id, str) or not player_id.startswith(GUEST_PREFIX):
            raise _refused("its subject is not a guest's")
        name = claims.get("name")
        return Player(
            player_id=player_id,
            name=name if isinstance(name, str) else "guest",
            guest=True,
            expires_at=float(claims["exp"]),
        )

    async def _verify_provider(self, token: str, alg: Any, kid: Any) -> Player:
        s = self.settings
        if self.keyset is not None and alg in s.algorithms:
            if not isinstance(kid, str) or not kid:
                raise _refused("its header names no key (kid)")
            jwk = await self.keyset.key(kid)
            if jwk is None:
                raise _refused("it is signed by a key the identity provider does not publish")
            if jwk.algorithm_name != alg:
                raise _refused("its algorithm does not match its key's")
            claims = _decode(token, jwk.key, alg, s.issuer, s.audience)
        elif s.dev_secret and alg == "HS256":
            claims = _decode(token, s.dev_secret, "HS256", s.issuer, s.audience or None)
        else:
            accepted = [*(s.algorithms if self.keyset else ()), *(["HS256"] if s.dev_secret else [])]
            if not accepted:
                raise _refused("this server trusts no identity provider (guests only)")
            raise _refused(f"its algorithm is not accepted here (accepted: {', '.join(accepted)})")
        player_id = claims.get(s.player_claim)
        if not isinstance(player_id, str) or not player_id:
            raise _refused(f"it has no {s.player_claim!r} claim naming the player")
        if len(player_id) > MAX_PLAYER_ID_CHARS or not player_id.isprintable():
            raise _refused(f"its {s.player_claim!r} claim is not a usable player id")
        if player_id.startswith(RESERVED_PREFIXES):
            raise _refused(f"its {s.player_claim!r} claim uses a prefix kept for guests and bots")
        name = claims.get(s.name_claim)
        # the provider's user chose it: no control or format character (an escape sequence)
        # reaches other players' screens through a seat's name
        name = "".join(c for c in name if c.isprintable()).strip() if isinstance(name, str) else ""
        shown = name or "player"
        return Player(
            player_id=player_id,
            name=shown[:MAX_PLAYER_NAME_CHARS],
            guest=False,
            expires_at=float(claims["exp"]),
        )


def _decode(token: str, key: Any, alg: str, issuer: str, audience: str | None) -> dict[str, Any]:
    try:
        claims: dict[str, Any] = jwt.decode(
            token,
            key,
            algorithms=[alg],
            issuer=issuer,
            audience=audience,
            leeway=LEEWAY_SECONDS,
            options={"require": ["exp", "iss"], "verify_aud": audience is not None},
        )
    except jwt.ExpiredSignatureError:
        raise _refused("it has expired", Reason.IDENTITY_EXPIRED) from None
    except jwt.ImmatureSignatureError:
        raise _refused("it is not valid yet") from None
    except jwt.InvalidIssuerError:
        raise _refused("it was not issued by the trusted issuer") from None
    except jwt.InvalidAudienceError:
        raise _refused("it is meant for another audience") from None
    except jwt.MissingRequiredClaimError as e:
        raise _refused(f"it lacks the {e.claim!r} claim") from None
    except jwt.InvalidSignatureError:
        raise _refused("its signature does not verify") from None
    except (jwt.PyJWTError, ValueError, TypeError):
        raise _refused("it does not verify") from None
    return claims


def _refused(why: str, reason: Reason = Reason.IDENTITY_REFUSED) -> TableError:
    return TableError(
        Code.UNAUTHENTICATED, f"the identity token is refused: {why}", reason=reason
    )


def check_player_name(name: str) -> str:
    """A display name a person chose: 1 to 40 printable characters, trimmed."""
    name = name.strip()
    if not name:
        raise TableError(
            Code.INVALID_ARGUMENT, "a name is required (1 to 40 characters)",
            reason=Reason.INVALID_ARGUMENT_NAME, meta={"max": MAX_PLAYER_NAME_CHARS},
        )
    if len(name) > MAX_PLAYER_NAME_CHARS:
        raise TableError(
            Code.INVALID_ARGUMENT,
            f"names are at most {MAX_PLAYER_NAME_CHARS} characters, not {len(name)}",
            reason=Reason.INVALID_ARGUMENT_NAME, meta={"max": MAX_PLAYER_NAME_CHARS},
        )
    if not name.isprintable():
        raise TableError(
            Code.INVALID_ARGUMENT, "names may not contain control characters",
            reason=Reason.INVALID_ARGUMENT_NAME,
        )
    return name

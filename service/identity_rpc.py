"""CreateGuest and WhoAmI: a player's identity, as the server issues and reads it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from croupier.v1 import croupier_pb2 as pb

from service.identity import Player
from service.rpc import unary

if TYPE_CHECKING:
    from service.identity import Identities


def player_message(player: Player, with_expiry: bool = True) -> pb.Player:
    return pb.Player(
        player_id=player.player_id,
        name=player.name,
        guest=player.guest,
        expires_at=player.expires_at if with_expiry else 0.0,
    )


class IdentityRpc:
    """Handlers of the servicer (service.server.CroupierServicer) about identities."""

    identities: Identities

    async def require_player(self, context: Any) -> Player:  # the servicer's
        raise NotImplementedError

    @unary
    async def CreateGuest(
        self, request: pb.CreateGuestRequest, context: Any, f: dict[str, Any]
    ) -> pb.PlayerToken:
        player, token = self.identities.issue_guest(request.name)
        return pb.PlayerToken(player=player_message(player), token=token)

    @unary
    async def WhoAmI(
        self, request: pb.WhoAmIRequest, context: Any, f: dict[str, Any]
    ) -> pb.Player:
        player = await self.require_player(context)
        f["guest"] = player.guest
        return player_message(player)

"""ListLeaderboard and GetProfile: the players' ladder read over gRPC (the work is
`service.player_standings`); CroupierServicer inherits these handlers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from croupier.v1 import croupier_pb2 as pb

from service import player_standings, views
from service.player_standings import ME, Standing, check_player_id
from service.rpc import bearer_token, unary

if TYPE_CHECKING:
    from service.identity import Player
    from service.tables import Tables


def _entry(s: Standing) -> pb.LeaderboardEntry:
    return pb.LeaderboardEntry(rank=s.rank, player_id=s.entrant, name=s.name, mu=s.mu,
                               sigma=s.sigma, ordinal=s.ordinal, games=s.games, bot=s.bot)


class PlayersRpc:
    """Leaderboards and profiles: public reads, but "me" needs the caller's identity."""

    tables: Tables

    if TYPE_CHECKING:
        async def caller(self, context: Any) -> Player | None: ...
        async def require_player(self, context: Any) -> Player: ...

    @unary
    async def ListLeaderboard(
        self, request: pb.ListLeaderboardRequest, context: Any, f: dict[str, Any]
    ) -> pb.ListLeaderboardResponse:
        f.update(game=request.game[:64], limit=request.limit)
        around = check_player_id(request.around, "around")
        if around == ME:
            around = (await self.require_player(context)).player_id
        entries, total = await player_standings.leaderboard(
            self.tables, request.game, request.limit, around
        )
        f.update(count=len(entries), total=total)
        return pb.ListLeaderboardResponse(entries=[_entry(e) for e in entries], total=total)

    @unary
    async def GetProfile(
        self, request: pb.GetProfileRequest, context: Any, f: dict[str, Any]
    ) -> pb.Profile:
        wanted = check_player_id(request.player_id, "player_id")
        if wanted in ("", ME):
            me: Player | None = await self.require_player(context)
        else:  # the player's own profile shows their private tables too
            me = await self.caller(context) if bearer_token(context) else None
        if wanted in ("", ME) or (me is not None and me.player_id == wanted):
            assert me is not None
            out = await player_standings.profile(self.tables, me.player_id, me.name, me.guest,
                                                 own=True)
        else:
            out = await player_standings.profile(self.tables, wanted)
        f["games"] = len(out.games)
        reply = pb.Profile(
            player=pb.Player(player_id=out.player_id, name=out.name, guest=out.guest),
            recent=[views.table_summary(self.tables.game(r.game), r) for r in out.recent],
        )
        for g in out.games:
            game = reply.games.add(game=g.game, games_played=g.games_played)
            if g.standing is not None:
                game.rating.CopyFrom(_entry(g.standing))
            game.history.extend(
                pb.RatingPoint(table_id=p.table_id, time=p.time, mu=p.mu, sigma=p.sigma,
                               ordinal=p.ordinal, rank=p.rank)
                for p in g.history
            )
        return reply

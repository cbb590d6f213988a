"""ListMyTables: the caller's own tables (service.my_tables), for a verified player only."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from croupier.v1 import croupier_pb2 as pb

from service import views
from service.my_tables import FINISHED_WITHIN_SECONDS, my_tables
from service.rpc import unary
from service.tables import Tables


class MyTablesRpc:
    """Mixed into CroupierServicer, which gives it `tables` and `require_player`."""

    tables: Tables
    # how long a finished table stays listed (the server sets its --my-tables-finished-days)
    finished_within: float = FINISHED_WITHIN_SECONDS

    if TYPE_CHECKING:

        async def require_player(self, context: Any) -> Any: ...

    @unary
    async def ListMyTables(
        self, request: pb.ListMyTablesRequest, context: Any, f: dict[str, Any]
    ) -> pb.ListMyTablesResponse:
        player = await self.require_player(context)
        found, next_page = await my_tables(
            self.tables, player.player_id, request.game, request.limit, request.page_token,
            request.include_finished, self.finished_within,
        )
        f["count"] = len(found)
        return pb.ListMyTablesResponse(
            tables=[
                pb.MyTable(
                    table=views.table(t.record, t.acting, t.presence),
                    seat=t.seat,
                    my_turn=t.my_turn,
                )
                for t in found
            ],
            next_page_token=next_page,
        )

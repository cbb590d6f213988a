"""The memory store's index from players to their tables and its presence maps: dicts, written
in the same step (no await) as the record, so atomic within the event loop as the rest."""

from __future__ import annotations

from collections.abc import Sequence

from service.model import Event, TableRecord
from service.player_index import belongs, closed_at, order_key, players_of

_Records = list[TableRecord]  # spelt out here: inside the stores, `list` is their listing method


class MemoryPlayers:
    """Mixed into MemoryStore, which calls `_init_players` and `_index_players`."""

    _tables: dict[str, TableRecord]

    def _init_players(self) -> None:
        self._by_player: dict[str, set[str]] = {}  # player -> ids of tables naming them
        self._closed_at: dict[str, float] = {}  # table id -> when it closed
        self._present: dict[str, dict[int, float]] = {}  # table id -> seat -> last seen

    def _index_players(self, record: TableRecord, events: Sequence[Event]) -> None:
        for player in players_of(record):
            self._by_player.setdefault(player, set()).add(record.table_id)
        at = closed_at(record, events)
        if at is not None:
            self._closed_at.setdefault(record.table_id, at)

    async def player_tables(
        self,
        player_id: str,
        after: tuple[float, str] | None = None,
        limit: int = 100,
        closed_since: float | None = None,
        game: str = "",
    ) -> _Records:
        found = [
            r for t in self._by_player.get(player_id, ())
            if (r := self._tables.get(t)) is not None
            and belongs(r, player_id, after, game, self._closed_at.get(t), closed_since)
        ]
        found.sort(key=order_key, reverse=True)
        return found[:limit]

    async def mark_present(self, table_id: str, seat: int, at: float) -> None:
        seen = self._present.setdefault(table_id, {})
        if seen.get(seat, float("-inf")) < at:
            seen[seat] = at

    async def presence(self, table_id: str) -> dict[int, float]:
        return dict(self._present.get(table_id, {}))

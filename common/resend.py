"""What a client does with a move refused ABORTED: the one rule for every client of ours.

ABORTED says the table moved on from the version the move was sent at. Often only another
seat's optional, out-of-turn move came in between (a declined announcement, an optional call), and
the move still means what it meant: then it is sent again at the new version instead of being
thrown back at the player (or searched again by a bot). It is sent again only while it is
still among the seat's legal moves and the table still waits for the same seats (`on_turn`),
and at most MAX_RESENDS times in a row: otherwise the player decides anew from the new view.

The bot worker and `croupier play` (clients.terminal) use this module; the web client
(web/src/table/TablePage.tsx) follows the same rule, and docs/frontends.md states it for other frontends. It imports only the
generated API, so neither role depends on the other's code.
"""

from __future__ import annotations

from croupier.v1 import croupier_pb2

MAX_RESENDS = 3  # in a row, for one decision: bots announce/pass a few times per trick


def still_stands(
    move: str, sent_at: croupier_pb2.TableView, fresh: croupier_pb2.TableView
) -> bool:
    """True when `move`, refused ABORTED at `sent_at`'s version, means the same at `fresh`:
    still legal for the seat, and the turn unchanged (the same seats waited for)."""
    return (
        fresh.version > sent_at.version
        and move in fresh.legal_moves
        and sorted(fresh.on_turn) == sorted(sent_at.on_turn)
    )


def resend(
    move: str, sent_at: croupier_pb2.TableView, fresh: croupier_pb2.TableView, resends: int
) -> bool:
    """Whether to send `move` again at `fresh.version`, after `resends` resends of it already."""
    return resends < MAX_RESENDS and still_stands(move, sent_at, fresh)

"""Seat-player test helpers: a scripted stub standing in for the server's seat calls, and views."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
from croupier.v1 import croupier_pb2 as pb

SEAT = 1


def view(version: int, legal: list[str], on_turn: bool = True,
         to_act: list[int] | None = None) -> pb.TableView:
    return pb.TableView(version=version, seat=SEAT, legal_moves=legal,
                        to_act=[SEAT] if to_act is None else to_act,
                        on_turn=[SEAT] if on_turn else [0])


class ScriptedStub:
    """SubmitMove answers from `submits` (an exception to raise, or None: accept the move and
    answer the view after it); GetView answers the current view."""

    def __init__(self, current: pb.TableView,
                 submits: list[grpc.aio.AioRpcError | None] | None = None,
                 after: Callable[[str, int], pb.TableView] | None = None) -> None:
        self.current = current
        self.submits = list(submits or [])
        self.sent: list[tuple[str, int]] = []
        self.fallbacks: list[str] = []  # SubmitMoveRequest.fallback of each move sent
        self.after = after or (lambda move, version: view(version + 1, [], to_act=[]))
        self.leaves: list[grpc.aio.AioRpcError | None] = []
        self.left = 0

    async def SubmitMove(self, request: pb.SubmitMoveRequest, **_: Any) -> pb.SubmitMoveResponse:
        self.sent.append((request.move, request.expected_version))
        self.fallbacks.append(request.fallback)
        outcome = self.submits.pop(0) if self.submits else None
        if outcome is not None:
            raise outcome
        self.current = self.after(request.move, request.expected_version)
        return pb.SubmitMoveResponse(version=self.current.version, move=request.move,
                                     public_move=request.move, view=self.current)

    async def GetView(self, request: pb.GetViewRequest, **_: Any) -> pb.TableView:
        return self.current

    async def LeaveTable(self, request: pb.LeaveTableRequest, **_: Any) -> pb.LeaveTableResponse:
        outcome = self.leaves.pop(0) if self.leaves else None
        if outcome is not None:
            raise outcome
        self.left += 1
        return pb.LeaveTableResponse()

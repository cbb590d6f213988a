"""The clients' rule for a move refused ABORTED (common.resend): sent again at the new version
only while it still means what it meant."""

from __future__ import annotations

from croupier.v1 import croupier_pb2 as pb

from common.resend import MAX_RESENDS, resend, still_stands


def view(version: int, legal: list[str], on_turn: list[int]) -> pb.TableView:
    return pb.TableView(version=version, seat=0, legal_moves=legal, on_turn=on_turn,
                        to_act=sorted({0, *on_turn}))


SENT = view(5, ["Qc", "Th", "re"], [0])


def test_a_move_overtaken_by_an_optional_move_stands() -> None:
    # another seat declined its announcement: the table still waits for seat 0, Qc legal
    assert still_stands("Qc", SENT, view(6, ["Qc", "Th", "re"], [0]))
    assert still_stands("re", SENT, view(8, ["Qc", "re"], [0]))


def test_a_move_no_longer_legal_does_not() -> None:
    assert not still_stands("re", SENT, view(6, ["Qc", "Th"], [0]))  # someone said kontra no 90


def test_a_changed_turn_does_not() -> None:
    # the seat was not waited for, and the seat waited for changed: a card was played
    before = view(5, ["re", "pass"], [2])
    assert not still_stands("re", before, view(6, ["re", "pass"], [3]))
    assert still_stands("re", before, view(6, ["re", "pass"], [2]))
    # the seat's own turn came meanwhile
    assert not still_stands("re", before, view(6, ["Qc", "re"], [0]))


def test_a_table_that_went_back_or_did_not_move_does_not() -> None:
    assert not still_stands("Qc", SENT, view(5, ["Qc"], [0]))
    assert not still_stands("Qc", SENT, view(4, ["Qc"], [0]))


def test_resends_are_bounded() -> None:
    fresh = view(6, ["Qc"], [0])
    assert all(resend("Qc", SENT, fresh, n) for n in range(MAX_RESENDS))
    assert not resend("Qc", SENT, fresh, MAX_RESENDS)

"""The reason codes refusals carry: one per situation a client may want to explain in its
player's words, each with the one gRPC status it goes with. The engines' own (the kinds of
rule a refused move breaks) are `engines.contract.MoveRule`; docs/api.md lists them all.

A code travels beside the English message as a `google.rpc.ErrorInfo` in the status details
(domain "croupier"), with metadata a translation may quote: public facts and limits only,
never a card of any hand, a token or the seed."""

from __future__ import annotations

import enum

from engines.contract import MoveRule

DOMAIN = "croupier"


class Reason(enum.StrEnum):
    """The service's own reason codes (UPPER_SNAKE_CASE, stable: clients key on them)."""

    # INVALID_ARGUMENT: the request itself is wrong; sending it again changes nothing
    INVALID_ARGUMENT_REQUEST = "INVALID_ARGUMENT_REQUEST"
    INVALID_ARGUMENT_FIELD = "INVALID_ARGUMENT_FIELD"
    INVALID_ARGUMENT_GAME = "INVALID_ARGUMENT_GAME"
    INVALID_ARGUMENT_PLAYERS = "INVALID_ARGUMENT_PLAYERS"
    INVALID_ARGUMENT_OPTION = "INVALID_ARGUMENT_OPTION"
    INVALID_ARGUMENT_SEAT = "INVALID_ARGUMENT_SEAT"
    INVALID_ARGUMENT_BOT_LEVEL = "INVALID_ARGUMENT_BOT_LEVEL"
    INVALID_ARGUMENT_NAME = "INVALID_ARGUMENT_NAME"
    INVALID_ARGUMENT_TOKEN = "INVALID_ARGUMENT_TOKEN"
    INVALID_ARGUMENT_VERSION = "INVALID_ARGUMENT_VERSION"
    INVALID_ARGUMENT_MOVE = "INVALID_ARGUMENT_MOVE"
    # FAILED_PRECONDITION: not now, not here (moves refused by a rule: MoveRule)
    TABLE_NOT_STARTED = "TABLE_NOT_STARTED"
    TABLE_FINISHED = "TABLE_FINISHED"
    TABLE_ABANDONED = "TABLE_ABANDONED"
    RECORD_NOT_READY = "RECORD_NOT_READY"
    SEAT_TAKEN = "SEAT_TAKEN"
    NO_FREE_SEAT = "NO_FREE_SEAT"
    SEAT_RESERVED = "SEAT_RESERVED"
    ALREADY_SEATED = "ALREADY_SEATED"
    GUESTS_DISABLED = "GUESTS_DISABLED"
    TICKET_OPEN = "TICKET_OPEN"
    TICKET_MATCHED = "TICKET_MATCHED"
    NOT_RATABLE = "NOT_RATABLE"
    DEAL_PAUSE = "DEAL_PAUSE"
    NOT_IN_PAUSE = "NOT_IN_PAUSE"
    # ABORTED
    STALE_VERSION = "STALE_VERSION"
    # NOT_FOUND
    TABLE_NOT_FOUND = "TABLE_NOT_FOUND"
    TICKET_NOT_FOUND = "TICKET_NOT_FOUND"
    PLAYER_NOT_FOUND = "PLAYER_NOT_FOUND"
    # UNAUTHENTICATED
    BAD_AUTHORIZATION = "BAD_AUTHORIZATION"
    TOKEN_REQUIRED = "TOKEN_REQUIRED"
    IDENTITY_REQUIRED = "IDENTITY_REQUIRED"
    IDENTITY_EXPIRED = "IDENTITY_EXPIRED"
    IDENTITY_REFUSED = "IDENTITY_REFUSED"
    API_KEY_REQUIRED = "API_KEY_REQUIRED"
    # PERMISSION_DENIED
    BAD_TOKEN = "BAD_TOKEN"
    NOT_SEATED = "NOT_SEATED"
    SEAT_BOUND_TO_ANOTHER_PLAYER = "SEAT_BOUND_TO_ANOTHER_PLAYER"
    PRIVATE_TABLE = "PRIVATE_TABLE"
    API_KEY_FORBIDDEN = "API_KEY_FORBIDDEN"
    # RESOURCE_EXHAUSTED
    RATE_LIMITED = "RATE_LIMITED"
    TOO_LARGE = "TOO_LARGE"
    TOO_MANY_TABLES = "TOO_MANY_TABLES"
    TOO_MANY_STREAMS = "TOO_MANY_STREAMS"
    # UNAVAILABLE: retry, the same request
    SHUTTING_DOWN = "SHUTTING_DOWN"
    STORE_UNAVAILABLE = "STORE_UNAVAILABLE"
    # INTERNAL
    INTERNAL = "INTERNAL"


_STATUS_BY_PREFIX = {"INVALID_ARGUMENT_": "INVALID_ARGUMENT"}
_STATUS: dict[str, str] = {
    **{r: "FAILED_PRECONDITION" for r in MoveRule},
    Reason.TABLE_NOT_STARTED: "FAILED_PRECONDITION",
    Reason.TABLE_FINISHED: "FAILED_PRECONDITION",
    Reason.TABLE_ABANDONED: "FAILED_PRECONDITION",
    Reason.RECORD_NOT_READY: "FAILED_PRECONDITION",
    Reason.SEAT_TAKEN: "FAILED_PRECONDITION",
    Reason.NO_FREE_SEAT: "FAILED_PRECONDITION",
    Reason.SEAT_RESERVED: "FAILED_PRECONDITION",
    Reason.ALREADY_SEATED: "FAILED_PRECONDITION",
    Reason.GUESTS_DISABLED: "FAILED_PRECONDITION",
    Reason.TICKET_OPEN: "FAILED_PRECONDITION",
    Reason.TICKET_MATCHED: "FAILED_PRECONDITION",
    Reason.NOT_RATABLE: "FAILED_PRECONDITION",
    Reason.DEAL_PAUSE: "FAILED_PRECONDITION",
    Reason.NOT_IN_PAUSE: "FAILED_PRECONDITION",
    Reason.STALE_VERSION: "ABORTED",
    Reason.TABLE_NOT_FOUND: "NOT_FOUND",
    Reason.TICKET_NOT_FOUND: "NOT_FOUND",
    Reason.PLAYER_NOT_FOUND: "NOT_FOUND",
    Reason.BAD_AUTHORIZATION: "UNAUTHENTICATED",
    Reason.TOKEN_REQUIRED: "UNAUTHENTICATED",
    Reason.IDENTITY_REQUIRED: "UNAUTHENTICATED",
    Reason.IDENTITY_EXPIRED: "UNAUTHENTICATED",
    Reason.IDENTITY_REFUSED: "UNAUTHENTICATED",
    Reason.API_KEY_REQUIRED: "UNAUTHENTICATED",
    Reason.BAD_TOKEN: "PERMISSION_DENIED",
    Reason.NOT_SEATED: "PERMISSION_DENIED",
    Reason.SEAT_BOUND_TO_ANOTHER_PLAYER: "PERMISSION_DENIED",
    Reason.PRIVATE_TABLE: "PERMISSION_DENIED",
    Reason.API_KEY_FORBIDDEN: "PERMISSION_DENIED",
    Reason.RATE_LIMITED: "RESOURCE_EXHAUSTED",
    Reason.TOO_LARGE: "RESOURCE_EXHAUSTED",
    Reason.TOO_MANY_TABLES: "RESOURCE_EXHAUSTED",
    Reason.TOO_MANY_STREAMS: "RESOURCE_EXHAUSTED",
    Reason.SHUTTING_DOWN: "UNAVAILABLE",
    Reason.STORE_UNAVAILABLE: "UNAVAILABLE",
}

# the reason of a refusal raised without one of its own, by its status (none should be:
# tests/test_reasons.py looks)
FALLBACK: dict[str, str] = {
    "INVALID_ARGUMENT": Reason.INVALID_ARGUMENT_FIELD,
    "FAILED_PRECONDITION": MoveRule.ILLEGAL_MOVE,
    "ABORTED": Reason.STALE_VERSION,
    "NOT_FOUND": Reason.TABLE_NOT_FOUND,
    "UNAUTHENTICATED": Reason.TOKEN_REQUIRED,
    "PERMISSION_DENIED": Reason.BAD_TOKEN,
    "RESOURCE_EXHAUSTED": Reason.TOO_LARGE,
    "UNAVAILABLE": Reason.SHUTTING_DOWN,
}


def status_of(reason: str) -> str:
    """The name of the gRPC status a reason goes with."""
    for prefix, code in _STATUS_BY_PREFIX.items():
        if reason.startswith(prefix):
            return code
    return _STATUS.get(reason, "INTERNAL")


def all_reasons() -> list[str]:
    """Every reason code a refusal may carry, the engines' included."""
    return [*Reason, *(r for r in MoveRule if r not in Reason.__members__)]

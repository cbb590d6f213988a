"""The errors table requests are refused with: the API's error classes (`Code`) and
`TableError`, which leaves the table unchanged and never quotes a hidden card or a token.
Each carries a reason code (service/reasons.py) and its safe parameters for clients."""

from __future__ import annotations

import enum
from collections.abc import Mapping

from service.reasons import Reason


class Code(enum.Enum):
    """The error classes of the API; the server maps them to gRPC status codes one to one."""

    INVALID_ARGUMENT = "invalid_argument"
    FAILED_PRECONDITION = "failed_precondition"
    ABORTED = "aborted"
    NOT_FOUND = "not_found"
    UNAUTHENTICATED = "unauthenticated"
    PERMISSION_DENIED = "permission_denied"
    RESOURCE_EXHAUSTED = "resource_exhausted"
    UNAVAILABLE = "unavailable"  # shutting down: retry elsewhere or later


class TableError(Exception):
    """A refused request: the table is unchanged. The message says what and why, and never
    carries a hidden card or a token. `reason` is its code for clients (a `Reason` or a
    `MoveRule`, of the status `code`), `meta` what a client's own words may quote: public
    facts and limits only."""

    def __init__(
        self,
        code: Code,
        message: str,
        log_message: str | None = None,
        *,
        reason: str = "",
        meta: Mapping[str, str | int | float] | None = None,
    ):
        super().__init__(message)
        self.code = code
        self.message = message
        # what logs may say: a refused move's reason can tell what its mover holds
        self.log_message = message if log_message is None else log_message
        self.reason = reason
        self.meta = dict(meta or {})


def closed_as_abandoned(table_id: str, what: str) -> TableError:
    return TableError(
        Code.FAILED_PRECONDITION,
        f"table was closed as abandoned: no person came back to table {table_id} in time; "
        f"{what}",
        reason=Reason.TABLE_ABANDONED,
    )

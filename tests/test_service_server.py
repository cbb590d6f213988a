"""Server helpers that the end-to-end tests cannot reach: unexpected errors and metadata."""

from __future__ import annotations

import grpc
import pytest

from service.rpc import _classify, bearer_token
from service.tables import Code, TableError


class FakeContext:
    def __init__(self, metadata: list[tuple[str, str]]) -> None:
        self._metadata = metadata

    def invocation_metadata(self) -> list[tuple[str, str]]:
        return self._metadata


def test_unexpected_errors_answer_internal_without_their_message() -> None:
    try:
        raise RuntimeError("seat 1 holds 3s 4h 5d")
    except RuntimeError as e:
        failure = _classify(e, "SubmitMove")
    assert failure.code == grpc.StatusCode.INTERNAL
    assert "3s" not in failure.message and "3s" not in failure.log_message
    assert "SubmitMove" in failure.message


def test_table_errors_keep_their_code_and_log_message() -> None:
    failure = _classify(TableError(Code.ABORTED, "stale: v3", "stale"), "SubmitMove")
    assert (failure.code, failure.message, failure.log_message) == (
        grpc.StatusCode.ABORTED, "stale: v3", "stale")


def test_bearer_token_parsing() -> None:
    assert bearer_token(FakeContext([])) is None
    assert bearer_token(FakeContext([("x-other", "1")])) is None
    assert bearer_token(FakeContext([("authorization", "Bearer abc")])) == "abc"
    assert bearer_token(FakeContext([("authorization", "bearer  abc ")])) == "abc"
    for bad in ("abc", "Basic abc", "Bearer ", "Bearer"):
        with pytest.raises(TableError) as info:
            bearer_token(FakeContext([("authorization", bad)]))
        assert info.value.code == Code.UNAUTHENTICATED


def test_log_timestamps_read_as_structlogs_iso_utc() -> None:
    """The server's own time stamper writes what TimeStamper(fmt="iso", utc=True) would."""
    import datetime
    import re
    from unittest import mock

    from common.logging import _UtcIsoStamper

    stamper = _UtcIsoStamper()
    for at in (1764444080.0, 1764444080.25, 1764444081.999999, 1764444081.5):
        with mock.patch("time.time", return_value=at):
            got = stamper(None, "info", {})["timestamp"]
        moment = datetime.datetime.fromtimestamp(at, tz=datetime.UTC)
        assert got == moment.isoformat().replace("+00:00", "Z"), at
    now = stamper(None, "info", {})["timestamp"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z", now)


def test_run_serves_the_web_port_unless_the_environment_empties_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`croupier run` serves browsers by default; CROUPIER_WEB_LISTEN="" turns that off as an
    empty --web-listen does (the environment alone must be able to say everything)."""
    from service.cli import build_parser
    from service.config import DEFAULT_WEB_LISTEN

    monkeypatch.delenv("CROUPIER_WEB_LISTEN", raising=False)
    assert build_parser().parse_args(["run"]).web_listen == DEFAULT_WEB_LISTEN
    monkeypatch.setenv("CROUPIER_WEB_LISTEN", "")
    assert build_parser().parse_args(["run"]).web_listen == ""
    monkeypatch.setenv("CROUPIER_WEB_LISTEN", "127.0.0.1:8181")
    assert build_parser().parse_args(["run"]).web_listen == "127.0.0.1:8181"
    assert build_parser().parse_args(["serve"]).web_listen == "127.0.0.1:8181"

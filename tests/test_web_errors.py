"""Errors in the reference web client, in real Chromium against a real server's web port: a
refusal is shown in the player's words keyed on its reason code (never a gRPC status name), a
code this client does not know falls back to the server's message, and a call lost on the
network reads "Reconnecting…", not "UNKNOWN: Failed to fetch"."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from google.rpc import error_details_pb2

from tests.support import ServerProcess, free_port
from tests.web_table_support import ARTIFACTS, skip_without_browser, watched_page

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, Route

skip_without_browser()
pytestmark = [pytest.mark.e2e, pytest.mark.browser]
STATUS_NAMES = ["INVALID_ARGUMENT", "UNKNOWN", "FAILED_PRECONDITION", "UNAVAILABLE", "Failed to fetch"]


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    proc = ServerProcess(db=tmp_path_factory.mktemp("web_errors") / "croupier.db",
                         web_port=free_port()).start()
    yield proc
    proc.stop()


def create_with(page: Page, url: str, deals: str) -> str:
    page.goto(url)
    page.select_option("#game", "dou_dizhu")
    page.fill("#option-deals", deals)
    page.click("#create-button")
    alert = page.wait_for_selector(".error")
    assert alert is not None
    return alert.inner_text()


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
def test_a_refusal_reads_in_words_keyed_on_its_reason(web: ServerProcess, browser: Browser,
                                                       viewport: str) -> None:
    with watched_page(browser, viewport) as w:
        text = create_with(w.page, web.web_url, "-3")
        assert text.strip() == "These table settings don't work together. Check them and try again."
        assert not any(name in text for name in STATUS_NAMES), text
        w.page.screenshot(path=str(ARTIFACTS / f"errors-refusal-{viewport}.png"))
        w.check_errors_but(["400", "Bad Request"])


def test_an_unknown_reason_falls_back_to_the_servers_message(web: ServerProcess, browser: Browser) -> None:
    """A newer server may send a code this client has no words for: the server's own message
    is shown. (No real server sends an unknown code, so this one answer is made up.)"""
    info = error_details_pb2.ErrorInfo(reason="SOME_FUTURE_REASON", domain="croupier")
    body = json.dumps({"code": "failed_precondition", "message": "the dealer is on a break",
                       "details": [{"type": "google.rpc.ErrorInfo",
                                    "value": base64.b64encode(info.SerializeToString()).decode()}]})

    def answer(route: Route) -> None:
        route.fulfill(status=400, content_type="application/json", body=body)

    with watched_page(browser, "desktop") as w:
        w.page.route("**/croupier.v1.Croupier/CreateTable", answer)
        text = create_with(w.page, web.web_url, "1")
        assert text.strip() == "the dealer is on a break"
        w.check_errors_but(["400", "Bad Request"])


def test_a_call_lost_on_the_network_reads_reconnecting(web: ServerProcess, browser: Browser) -> None:
    with watched_page(browser, "desktop") as w:
        w.page.route("**/croupier.v1.Croupier/CreateTable", lambda route: route.abort("failed"))
        text = create_with(w.page, web.web_url, "1")
        assert text.strip() == "Connection lost. Reconnecting…"
        assert not any(name in text for name in STATUS_NAMES), text
        w.check_errors_but(["CreateTable", "ERR_FAILED"])

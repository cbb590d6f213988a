"""The web client in real headless Chromium (Debian's), driven by Playwright, against a real
server (its web port serving web/dist) and a real bot worker: a person creates tables in the
lobby and plays them to the end by clicking cards and buttons; a spectator follows a bot game
live; the lobby pages, filters, joins and leaves. tests/test_web_table.py plays every game at
both screen sizes.

Screenshots go to test-output/browser/ (kept as artifacts, not committed). Deselect with
`-m 'not browser'`; skipped with a reason when Chromium or the built client is missing.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from croupier.v1 import croupier_pb2 as pb

from tests.bot_support import Bots
from tests.support import REPO, Client, ServerProcess, free_port
from tests.web_table_support import struct

if TYPE_CHECKING:  # Playwright is imported at run time only where Chromium is (below)
    from playwright.sync_api import Browser, Page

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

CHROMIUM = os.environ.get("CROUPIER_CHROMIUM", "/usr/bin/chromium")
DIST = REPO / "web" / "dist" / "index.html"
ARTIFACTS = Path(os.environ.get("CROUPIER_TEST_OUTPUT", REPO / "test-output")) / "browser"
MOVE = "button.move:not([disabled])"
# the table's version, as the page has it
VERSION = "() => document.querySelector('#table')?.dataset.version"

if not Path(CHROMIUM).exists():
    pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)", allow_module_level=True)
if not DIST.exists():
    pytest.skip("web client not built (make web)", allow_module_level=True)

sync_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    tmp = tmp_path_factory.mktemp("browser")
    server = ServerProcess(db=tmp / "croupier.db", web_port=free_port()).start()
    bots = Bots(server.address, tmp / "bots.log", workers=1, poll=0.1)
    yield server
    bots.stop()
    server.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        yield b
        b.close()


@pytest.fixture
def page(browser: Browser, request: pytest.FixtureRequest) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    pg = context.new_page()
    pg.set_default_timeout(20_000)
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    yield pg
    pg.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"), full_page=True)
    context.close()
    assert not errors, f"uncaught errors in the page: {errors}"


def create_in_lobby(page: Page, url: str, game: str, options: dict[str, str]) -> str:
    """Fills the lobby form (seat 0 a person, the others random bots) and sits down."""
    page.goto(url)
    page.fill("#name", "alice")
    page.select_option("#game", game)
    for seat in page.locator(".seat-kind").all()[1:]:
        seat.select_option("random")
    for name, value in options.items():
        page.fill(f"#option-{name}", value)
    page.click("#create-button")
    page.wait_for_url("**/#/table/*")
    page.wait_for_selector("#role[data-seat='0']")
    # the seat line can show before the first view: wait for the dealt hand
    page.wait_for_selector(".hand-card")
    return page.url.rsplit("/", 1)[1]


def test_a_finished_match_steps_back_downloads_and_plays_again(
    stack: ServerProcess, page: Page
) -> None:
    """A seat's page follows a match to its end (the other seats' moves and its own made
    over gRPC, quickly); then the history, the record and "Play again" (a new table like this
    one, the same seat taken under the same name)."""
    client = Client(stack.address)
    try:
        table = client.create("dou_dizhu", seats=[pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN)] * 3,
                              options=struct({"deals": 1}))
        table_id = table.table_id
        for name in ("alice", "bob", "carol"):
            client.join(table_id, name=name)
        page.goto(stack.web_url)
        page.evaluate("([t, tok]) => { sessionStorage.setItem(`croupier.seat.${t}`,"
                      " JSON.stringify({seat: 0, token: tok})); localStorage.setItem('croupier.name', 'alice'); }",
                      [table_id, client.tokens[0]])
        page.goto(f"{stack.web_url}/#/table/{table_id}")
        page.wait_for_selector(".hand-card")
        assert page.locator(".hand-card").count() == 17
        client.play_to_end(table_id, random.Random(5))
        page.wait_for_selector("#game-over")
        assert "Game over" in page.inner_text("#game-over")
        assert page.locator("#log .event-end").count() == 1
        step_back_and_download(page, table_id)
        view = client.view(table_id)
        assert view.result.finished and view.table.status == pb.TABLE_STATUS_FINISHED
        page.click("#play-again")
        page.wait_for_function(f"() => location.hash.startsWith('#/table/')"
                               f" && !location.hash.endsWith({table_id!r})")
        page.wait_for_selector("#role[data-seat='0']")
        again = client.view(page.url.rsplit("/", 1)[1]).table
        assert again.game == "dou_dizhu" and dict(again.options) == dict(view.table.options)
        assert [(s.kind, s.bot_level) for s in again.seats] == [
            (s.kind, s.bot_level) for s in view.table.seats]
        assert again.seats[0].name == "alice"
    finally:
        client.close()


def test_spectator_follows_a_bot_game_live_over_grpc_web(
    stack: ServerProcess, page: Page
) -> None:
    client = Client(stack.address)
    try:
        # all seats open to people; bots take them after a delay, while the page already watches
        table = client.create("dou_dizhu", fill_with_bots_after_seconds=4, fill_level="random")
    finally:
        client.close()
    page.goto(f"{stack.web_url}/?transport=grpc-web#/table/{table.table_id}")
    page.wait_for_selector("text=Spectator")
    page.wait_for_selector("#table")
    assert page.get_attribute("#table", "data-status") == "WAITING"  # nothing played yet
    page.wait_for_selector("#game-over", timeout=60_000)
    assert page.locator("#log .event-move").count() > 3
    assert page.locator("#log .event-end").count() == 1
    # a spectator sees no hand and gets no move buttons
    assert page.locator(".hand-card").count() == 0
    assert page.locator("button.move, #play").count() == 0
    step_back_and_download(page, table.table_id)


def step_back_and_download(page: Page, table_id: str) -> None:
    """After the end: a click on a move of the log shows the table as it was then, the arrows
    step from event to event, "back" returns to the end; the record downloads as JSON."""
    if page.locator("#game-over-toggle:has-text('Look at the table')").count():
        page.click("#game-over-toggle")  # the final screen folds away to show the table
    page.click("#show-log")
    lines = page.locator("#log li")
    versions = [int(v) for v in lines.evaluate_all("ls => ls.map(l => l.dataset.version)")]
    final = page.evaluate(VERSION)
    page.locator("#log .event-move").nth(2).click()
    at = versions.index(int(page.locator("#log .event-move").nth(2).get_attribute(
        "data-version") or -1))
    assert page.locator("#replay").is_visible()
    assert page.evaluate(VERSION) == str(versions[at])
    assert page.locator("#game-over").count() == 0  # the board is the table as it was
    assert page.locator("button.move, #play").count() == 0  # a past view offers no moves
    assert page.locator("#log li.pinned").get_attribute("data-version") == str(versions[at])
    page.click("#replay-prev")
    assert page.evaluate(VERSION) == str(versions[at - 1])
    page.click("#replay-next")
    page.click("#replay-next")
    assert page.evaluate(VERSION) == str(versions[at + 1])
    page.click("#replay-live")
    assert page.locator("#replay").count() == 0
    assert page.evaluate(VERSION) == final
    assert page.locator("#game-over").count() == 1
    with page.expect_download() as download:
        page.click("#record")
    record = json.loads(Path(download.value.path()).read_text())
    assert record["tableId"] == table_id
    assert len(record["moves"]) == page.locator("#log .event-move").count()


def test_lobby_lists_tables_and_shows_errors(stack: ServerProcess, page: Page) -> None:
    page.goto(stack.web_url)
    page.select_option("#game", "dou_dizhu")
    page.fill("#option-deals", "-3")
    page.click("#create-button")
    alert = page.wait_for_selector(".error")
    assert alert is not None  # None only when waiting for a selector to go away
    # the refusal's reason code in the player's words, never a status name
    assert "table settings don't work together" in alert.inner_text()
    assert "INVALID_ARGUMENT" not in alert.inner_text()
    assert "#/table/" not in page.url
    # a table made elsewhere shows up in the lobby; Join takes its open seat
    client = Client(stack.address)
    try:
        table = client.create(
            "dou_dizhu",
            seats=[
                pb.SeatSpec(kind=pb.SEAT_KIND_BOT, bot_level="random"),
                pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN),
                pb.SeatSpec(kind=pb.SEAT_KIND_BOT, bot_level="random"),
            ],
        )
    finally:
        client.close()
    page.click(f'button.join[data-table="{table.table_id}"]')
    page.wait_for_selector("#role[data-seat='1']")
    assert page.url.endswith(f"#/table/{table.table_id}")
    page.wait_for_selector(".hand-card")


def test_a_held_seat_is_returned_to_not_joined_twice_and_can_be_left(
    stack: ServerProcess, page: Page
) -> None:
    """The lobby offers the seat this tab holds instead of a second Join; Leave seat gives it
    back to the table; a token the table no longer knows turns the page into a spectator's."""
    client = Client(stack.address)
    try:
        table = client.create("dou_dizhu", seats=[pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN)] * 2 + [
            pb.SeatSpec(kind=pb.SEAT_KIND_BOT, bot_level="random")])
        tid = table.table_id
        page.goto(stack.web_url)
        page.click(f'button.join[data-table="{tid}"]')
        page.wait_for_selector("#role[data-seat='0']")
        page.click("text=← Lobby")
        page.wait_for_selector(f'.table-card[data-table="{tid}"] a.return')
        assert page.locator(f'button.join[data-table="{tid}"]').count() == 0  # seat 1 is open
        page.click(f'.table-card[data-table="{tid}"] a.return')
        page.click("#leave")
        page.click("#leave-confirm")  # Leave asks first
        page.wait_for_selector(f'button.join[data-table="{tid}"]')
        assert not client.view(tid).table.seats[0].occupied
        # a token that holds no seat here: the page falls back on the public view
        page.evaluate("t => sessionStorage.setItem(`croupier.seat.${t}`,"
                      " JSON.stringify({seat: 0, token: 'not-a-token'}))", tid)
        page.goto(f"{stack.web_url}/#/table/{tid}")
        page.wait_for_selector("#role:has-text('Spectator')")
        page.wait_for_selector("#table")
        assert page.evaluate("t => sessionStorage.getItem(`croupier.seat.${t}`)", tid) is None
    finally:
        client.close()


def test_the_lobby_pages_through_older_tables_and_filters(
    stack: ServerProcess, page: Page
) -> None:
    """More tables than a page: the lobby shows the newest, "older" walks on to the rest
    (none shown twice, none left out), "newer" comes back; the filters ask the server for one
    game's or one status's tables only."""
    client = Client(stack.address)
    try:
        made = [client.create("dos", seats=[pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN)] * 2).table_id
                for _ in range(23)]
        # the server's own list, in its order, is what the pages must add up to
        expected = [t.table_id for t in client.stub.ListTables(
            pb.ListTablesRequest(game="dos", status=pb.TABLE_STATUS_WAITING, limit=500)).tables]
    finally:
        client.close()
    assert set(made) <= set(expected)

    def rows() -> list[str]:
        return page.locator("#tables .table-card").evaluate_all("rs => rs.map(r => r.dataset.table)")

    page.goto(stack.web_url)
    page.wait_for_selector("#tables .table-card")
    page.select_option("#filter-game", "dos")
    page.select_option("#filter-status", str(pb.TABLE_STATUS_WAITING))
    page.wait_for_function("() => document.querySelector('#page-older') &&"
                           " !document.querySelector('#page-older').disabled")
    seen: list[str] = []
    number = 1
    while True:
        page.wait_for_selector(f"#page-number:has-text('page {number}')")
        shown = rows()
        cards = page.locator("#tables .table-card")
        assert cards.evaluate_all("cs => cs.map(c => c.dataset.status)") == ["WAITING"] * len(shown)
        assert cards.evaluate_all("cs => cs.map(c => c.dataset.game)") == ["dos"] * len(shown)
        seen += shown
        if page.locator("#page-older").is_disabled():
            break
        assert len(shown) == 20
        page.click("#page-older")
        number += 1
        # the page number may show before the older page's cards do (a loaded machine)
        page.wait_for_function(
            "first => document.querySelector('#tables .table-card')?.dataset.table !== first",
            arg=shown[0])
    assert number >= 2
    assert seen == expected
    assert page.locator("#page-newer").is_enabled()
    page.click("#page-newer")
    page.wait_for_selector(f"#page-number:has-text('page {number - 1}')")
    page.wait_for_function(f"() => document.querySelector('#tables .table-card')?.dataset.table"
                           f" === {expected[(number - 2) * 20]!r}")


def test_a_table_closed_as_abandoned_says_so_and_takes_nobody(
    browser: Browser, tmp_path: Path
) -> None:
    """The lobby lists abandoned tables only when asked, with no Join; the table says so."""
    server = ServerProcess(db=tmp_path / "croupier.db", web_port=free_port(),
                           extra=("--fill-interval", "0.05", "--abandon-waiting-after", "1"))
    server.start()
    client = Client(server.address)
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    try:
        tid = client.create("dos", seats=[pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN)] * 2).table_id
        deadline = time.monotonic() + 30
        while client.view(tid).table.status != pb.TABLE_STATUS_ABANDONED:
            assert time.monotonic() < deadline, "the table was not closed"
            time.sleep(0.05)
        pg = context.new_page()
        pg.set_default_timeout(20_000)
        pg.goto(server.web_url)
        pg.select_option("#filter-status", str(pb.TABLE_STATUS_ABANDONED))
        card = pg.locator(f"#tables .table-card[data-table='{tid}']")
        card.wait_for()
        assert card.get_attribute("data-status") == "ABANDONED"
        assert "abandoned" in card.inner_text().lower()
        assert card.locator("button.join").count() == 0
        pg.goto(f"{server.web_url}/#/table/{tid}")
        pg.wait_for_selector(".progress:has-text('Closed as abandoned')")
        assert "closed before the cards were dealt" in pg.inner_text("#not-dealt")
        assert pg.locator("#take-seat").count() == 0
        pg.screenshot(path=str(ARTIFACTS / "abandoned-table.png"))
    finally:
        context.close()
        client.close()
        server.stop()

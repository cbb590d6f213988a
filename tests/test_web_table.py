"""The card table in real Chromium (Playwright) against a real server and bot worker, for
every game at both sizes the client is made for (1280x800 and 390x844): a whole match played
by clicking cards and buttons, each deal's summary checked against the server's own view of
that deal, the final screen against the server's result; no horizontal scroll, the hand in
reach, no console error (a missing favicon included). Screenshots of each game's table at a
fixed position (fixed deck, scripted moves) go to test-output/browser/table-*.png.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

import pytest
from croupier.v1 import croupier_pb2 as pb

from tests.support import Client, ServerProcess
from tests.web_table_support import (
    ARTIFACTS,
    GAMES,
    Player,
    Watched,
    deck,
    hand_in_reach,
    launch,
    no_horizontal_scroll,
    skip_without_browser,
    small_targets,
    start_stack,
    struct,
    watched_page,
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = [pytest.mark.e2e, pytest.mark.browser]
skip_without_browser()
sync_api = pytest.importorskip("playwright.sync_api")

# short matches that still end in a deal summary and a final screen
MATCH: dict[str, dict[str, object]] = {
    "dou_dizhu": {"deals": 2},
    "doppelkopf": {"deals": 1},
    "dobro": {"rounds": 2},
    "dos": {"target": 1},
    "sobe_e_desce": {"start_score": 3},
}
PLAYERS = {"dou_dizhu": 3, "doppelkopf": 4, "dobro": 2, "dos": 2, "sobe_e_desce": 4}
# who acts first with a fixed deck: the seat after the dealer (or the opener)
FIRST = {"dou_dizhu": {"dealer": 2, "face_up": 0}, "doppelkopf": {"dealer": 3}, "dobro": {"opener": 0},
         "dos": {"dealer": 1}, "sobe_e_desce": {"dealer": 3}}
# scripted moves before the screenshot: enough to put cards on the table
SCRIPTED = {"dou_dizhu": 5, "doppelkopf": 7, "dobro": 5, "dos": 3, "sobe_e_desce": 7}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    server, bots = start_stack(tmp_path_factory.mktemp("table"))
    yield server
    bots.stop()
    server.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


def sit_down(w: Watched, url: str, table_id: str, seat: int, token: str) -> None:
    w.page.goto(url)
    w.page.evaluate("([t, s, tok]) => sessionStorage.setItem(`croupier.seat.${t}`,"
                    " JSON.stringify({seat: s, token: tok}))", [table_id, seat, token])
    w.page.goto(f"{url}/#/table/{table_id}")


@pytest.mark.parametrize("game", GAMES)
def test_table_at_a_fixed_position(stack: ServerProcess, browser: Browser, game: str) -> None:
    """A fixed deal, a few scripted moves: the table as seat 0 sees it, at both sizes."""
    client = Client(stack.address)
    try:
        n = PLAYERS[game]
        options = {**FIRST[game], "deck": deck(game, 7, n), **MATCH[game]}
        table = client.create(game, players=n, seats=[pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN)] * n,
                              options=struct(options))
        for name in ["alice", "bob", "carol", "dave"][:n]:
            client.join(table.table_id, name=name)
        rng = random.Random(3)
        for _ in range(SCRIPTED[game]):
            client.step(table.table_id, rng)
        version = client.view(table.table_id).version
        for viewport in ("desktop", "phone"):
            for w in watched_page(browser, viewport):
                sit_down(w, stack.web_url, table.table_id, 0, client.tokens[0])
                w.page.wait_for_selector(f'#table[data-version="{version}"] .hand-card')
                w.page.wait_for_timeout(300)  # the card faces' sprite
                w.page.screenshot(path=str(ARTIFACTS / f"table-{game}-{viewport}.png"))
                no_horizontal_scroll(w.page)
                hand_in_reach(w.page)
                assert not small_targets(w.page), small_targets(w.page)
                assert w.page.locator(".seat").count() == n
                w.check()
    finally:
        client.close()


def create_in_lobby(w: Watched, url: str, game: str, options: Mapping[str, object]) -> str:
    page = w.page
    page.goto(url)
    page.fill("#name", "alice")
    page.select_option("#game", game)
    if page.locator("select#players").count():
        page.select_option("#players", str(PLAYERS[game]))
    for i in range(1, PLAYERS[game]):
        page.select_option(f"#seat-{i}", "random")  # quick bots: the test is about the page
    for name, value in options.items():
        page.fill(f"#option-{name}", str(value))
    no_horizontal_scroll(page)
    page.click("#create-button")
    page.wait_for_url("**/#/table/*")
    page.wait_for_selector("#role[data-seat='0']")
    page.wait_for_selector(".hand-card")
    return page.url.rsplit("/", 1)[1]


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
@pytest.mark.parametrize("game", GAMES)
def test_a_whole_match_by_clicking(stack: ServerProcess, browser: Browser, game: str, viewport: str) -> None:
    for w in watched_page(browser, viewport):
        # the phone plays Dou Dizhu's one-deal match: the two-deal one runs on the desktop
        options = {**MATCH[game], "deals": 1} if (game, viewport) == ("dou_dizhu", "phone") else MATCH[game]
        table_id = create_in_lobby(w, stack.web_url, game, options)
        no_horizontal_scroll(w.page)
        hand_in_reach(w.page)
        client = Client(stack.address)
        try:
            player = Player(w.page, client, table_id, game, seed=hash((game, viewport)) % 1000)
            player.play()
            result = client.view(table_id).result
            assert result.finished
            final = w.page.locator("#game-over .final")
            assert json.loads(final.get_attribute("data-totals") or "") == list(result.totals)
            assert json.loads(final.get_attribute("data-winners") or "") == list(result.winners)
            assert player.clicks > 0 and player.summaries >= 1
            if game == "doppelkopf":
                assert player.out_of_turn == 1
            no_horizontal_scroll(w.page)
            w.page.screenshot(path=str(ARTIFACTS / f"over-{game}-{viewport}.png"))
        finally:
            client.close()
        w.check()

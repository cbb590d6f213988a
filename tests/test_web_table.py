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
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from croupier.v1 import croupier_pb2 as pb

from tests.support import Client, ServerProcess, free_port
from tests.web_table_support import (
    ARTIFACTS,
    GAMES,
    Player,
    Watched,
    deck,
    hand_in_reach,
    move_cards,
    no_horizontal_scroll,
    no_overlap,
    skip_without_browser,
    small_targets,
    start_stack,
    struct,
    watched_page,
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Route

pytestmark = [pytest.mark.e2e, pytest.mark.browser]
skip_without_browser()
sync_api = pytest.importorskip("playwright.sync_api")

# short matches: each ends on the final screen with its last deal; Dobro's second round and
# Sobe e Desce's later deals show the deal summary dialog on the way
MATCH: dict[str, dict[str, object]] = {
    "dou_dizhu": {"deals": 1},
    "doppelkopf": {"deals": 1},
    "dobro": {"deals": 2},
    "dos": {"target": 1},
    "sobe_e_desce": {"max_deals": 2},  # two deals from 20: nobody reaches 0 in the first
}
# the phone plays the one-deal matches (time): the deal summary dialog is tested on the desktop
PHONE = {"dobro": {"deals": 1}, "sobe_e_desce": {"max_deals": 1}}
PLAYERS = {"dou_dizhu": 3, "doppelkopf": 4, "dobro": 2, "dos": 2, "sobe_e_desce": 4}
# who acts first with a fixed deck: the seat after the dealer (or the opener)
FIRST = {"dou_dizhu": {"dealer": 2, "face_up": 0}, "doppelkopf": {"dealer": 3}, "dobro": {"opener": 0},
         "dos": {"dealer": 1}, "sobe_e_desce": {"dealer": 3}}
# what the centre shows at that position, for the seat and for a spectator
CENTRE = {"dou_dizhu": "Landlord:", "doppelkopf": "Game:", "dobro": "VALUE IN PLAY", "dos": "Draw pile:",
          "sobe_e_desce": "Trumps:"}
# scripted moves before the screenshot: enough to put cards on the table
SCRIPTED = {"dou_dizhu": 5, "doppelkopf": 7, "dobro": 5, "dos": 3, "sobe_e_desce": 7}


# the pause between deals of this module's server (pacing): long enough to read the deal's
# summary, which the player closes ("Next deal": ReadyForNextDeal ends the pause at once)
DEAL_PAUSE = 4.0
# the table's holds and flights in the whole matches: the motion ten times as fast
PACE = 0.1


@pytest.fixture(scope="module")
def web_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """The server of this module pauses between deals, as a real one does."""
    server, bots = start_stack(tmp_path_factory.mktemp("web_table"), deal_pause=DEAL_PAUSE)
    yield server
    bots.stop()
    server.stop()


def sit_down(w: Watched, url: str, table_id: str, seat: int, token: str) -> None:
    w.page.goto(url)
    w.page.evaluate("([t, s, tok]) => sessionStorage.setItem(`croupier.seat.${t}`,"
                    " JSON.stringify({seat: s, token: tok}))", [table_id, seat, token])
    w.page.goto(f"{url}/#/table/{table_id}")


@pytest.mark.parametrize("game", GAMES)
def test_table_at_a_fixed_position(web_stack: ServerProcess, browser: Browser, game: str) -> None:
    """A fixed deal, a few scripted moves: the table as seat 0 sees it, at both sizes: its
    hand, its legal moves (cards to pick, the others as buttons with words, not notation); a
    spectator's page shows neither."""
    client = Client(web_stack.address)
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
        legal = list(client.view(table.table_id, 0).legal_moves)
        buttons = [m for m in legal if move_cards(game, m) is None]
        for viewport in ("desktop", "phone"):
            with watched_page(browser, viewport) as w:
                sit_down(w, web_stack.web_url, table.table_id, 0, client.tokens[0])
                w.page.wait_for_selector(f'#table[data-version="{version}"] .hand-card')
                w.page.wait_for_timeout(300)  # the card faces' sprite
                w.page.screenshot(path=str(ARTIFACTS / f"table-{game}-{viewport}.png"))
                no_horizontal_scroll(w.page)
                hand_in_reach(w.page)
                assert not small_targets(w.page), small_targets(w.page)
                assert w.page.locator(".seat").count() == n
                assert CENTRE[game] in w.page.inner_text("#centre")
                assert json.loads(w.page.get_attribute("#table", "data-legal") or "") == legal
                shown = w.page.locator("#actions button.move").evaluate_all("bs => bs.map(b => b.dataset.move)")
                assert sorted(shown) == sorted(buttons)
                assert all(w.page.inner_text(f'#actions button.move[data-move="{m}"]') != m for m in buttons)
                assert w.page.locator("#play").count() == (len(buttons) < len(legal))
                w.check()
        with watched_page(browser, "desktop") as w:
            w.page.goto(f"{web_stack.web_url}/#/table/{table.table_id}")
            w.page.wait_for_selector(f'#table[data-version="{version}"]')
            w.page.wait_for_selector("text=Spectator")
            assert w.page.locator(".hand-card, button.move, #play").count() == 0
            assert w.page.locator(".seat").count() == n
            assert CENTRE[game] in w.page.inner_text("#centre")
            w.page.screenshot(path=str(ARTIFACTS / f"spectator-{game}.png"))
            w.check()
    finally:
        client.close()


def create_in_lobby(w: Watched, url: str, game: str, options: Mapping[str, object], viewport: str) -> str:
    page = w.page
    page.goto(url)
    page.fill("#name", "alice")
    page.select_option("#game", game)
    if page.locator("select#players").count():
        page.select_option("#players", str(PLAYERS[game]))
    for i in range(1, PLAYERS[game]):
        page.select_option(f"#seat-{i}", "random")  # quick bots: the test is about the page
    for name, value in options.items():
        if not page.locator(f"#option-{name}").is_visible():
            page.click("#advanced summary")  # the option is one of the folded ones
        page.fill(f"#option-{name}", str(value))
    no_horizontal_scroll(page)
    page.screenshot(path=str(ARTIFACTS / f"lobby-{game}-{viewport}.png"), full_page=True)
    page.click("#create-button")
    page.wait_for_url("**/#/table/*")
    page.wait_for_selector("#role[data-seat='0']")
    page.wait_for_selector(".hand-card")
    return page.url.rsplit("/", 1)[1]


def look_at(w: Watched, name: str) -> Callable[[int], None]:
    """At the seat's turns: nothing overlaps, no horizontal scroll; a screenshot at the fourth."""
    def look(turn: int) -> None:
        if turn % 4 == 0:
            no_overlap(w.page)
            no_horizontal_scroll(w.page)
        if turn == 4:
            w.page.screenshot(path=str(ARTIFACTS / f"playing-{name}.png"))
    return look


def finish(w: Watched, player: Player, client: Client, table_id: str, name: str) -> None:
    """The final screen says what the server says, opens at its top, and every event was drawn."""
    result = client.view(table_id).result
    assert result.finished
    final = w.page.locator("#game-over .final")
    assert json.loads(final.get_attribute("data-totals") or "") == list(result.totals)
    assert json.loads(final.get_attribute("data-winners") or "") == list(result.winners)
    assert w.page.evaluate("() => document.querySelector('#game-over').scrollTop") == 0
    assert w.page.locator("#game-over-title").is_visible()
    w.page.wait_for_function("v => document.querySelector('#table').dataset.received === v",
                             arg=str(client.view(table_id).version))
    counts = w.page.evaluate("() => document.querySelector('#table').dataset")
    assert counts["processed"] == counts["received"]
    assert player.clicks > 0 and player.summaries >= 1 and player.checked > 0
    assert int(w.page.evaluate("() => document.body.dataset.flights || '0'")) > 0  # the table moved
    no_horizontal_scroll(w.page)
    w.page.screenshot(path=str(ARTIFACTS / f"over-{name}.png"))


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
@pytest.mark.parametrize("game", GAMES)
def test_a_whole_match_by_clicking(web_stack: ServerProcess, browser: Browser, game: str, viewport: str) -> None:
    """The fewest players the game allows, the table made in the lobby."""
    with watched_page(browser, viewport, pace=PACE) as w:
        options = PHONE.get(game, MATCH[game]) if viewport == "phone" else MATCH[game]
        table_id = create_in_lobby(w, web_stack.web_url, game, options, viewport)
        no_horizontal_scroll(w.page)
        hand_in_reach(w.page)
        client = Client(web_stack.address)
        try:
            name = f"{game}-{PLAYERS[game]}-{viewport}"
            player = Player(w.page, client, table_id, game, seed=len(game) + len(viewport),
                            shots=f"{game}-{viewport}")
            player.play(look=look_at(w, name))
            finish(w, player, client, table_id, name)
            if game in ("dobro", "sobe_e_desce") and viewport == "desktop":
                assert player.summaries >= 2  # a dialog between deals, then the final screen
            if game == "doppelkopf":
                assert player.out_of_turn == 1
        finally:
            client.close()
        w.check()


# the most players the games allow where that is more than the fewest (the others above)
MOST = {"dobro": 6, "dos": 4}


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
@pytest.mark.parametrize("game", sorted(MOST))
def test_a_whole_match_with_the_most_players(web_stack: ServerProcess, browser: Browser, game: str, viewport: str) -> None:
    """The table made through the API with bots in every other seat: the compact opponents
    stay apart and readable at six players on a phone, the match plays to its end."""
    n = MOST[game]
    client = Client(web_stack.address)
    try:
        seats = [pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN)] + [pb.SeatSpec(kind=pb.SEAT_KIND_BOT, bot_level="random")] * (n - 1)
        table = client.create(game, players=n, seats=seats, options=struct(PHONE.get(game, MATCH[game])))
        client.join(table.table_id, name="alice")
        with watched_page(browser, viewport, pace=PACE) as w:
            sit_down(w, web_stack.web_url, table.table_id, 0, client.tokens[0])
            w.page.wait_for_selector(".hand-card")
            name = f"{game}-{n}-{viewport}"
            player = Player(w.page, client, table.table_id, game, seed=n)
            player.play(look=look_at(w, name))
            finish(w, player, client, table.table_id, name)
            w.check()
    finally:
        client.close()


def test_a_move_refused_because_another_seat_moved_first(web_stack: ServerProcess, browser: Browser) -> None:
    """The page's move reaches the server after another seat's: ABORTED. Still legal and the
    seat's turn unchanged: the page sends it again at the new version and it is played. No
    longer legal: the page says so and shows the table as it now is, sending nothing more."""
    client = Client(web_stack.address)
    try:
        table = client.create("doppelkopf", seats=[pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN)] * 4,
                              options=struct({"deals": 1, "dealer": 3, "deck": deck("doppelkopf", 11)}))
        tid = table.table_id
        for name in ("alice", "bob", "carol", "dave"):
            client.join(tid, name=name)
        for seat in range(4):
            client.move(tid, seat, "healthy")
        sent: list[str] = []

        def first_comes_another(route: Route, call: list[Callable[[], object]]) -> None:
            if not sent:  # the first try only: the others go through as they are
                call[0]()
            sent.append(route.request.url)
            route.continue_()

        with watched_page(browser, "desktop") as w:
            sit_down(w, web_stack.web_url, tid, 0, client.tokens[0])
            w.page.wait_for_selector("#play")

            # 1. seat 1 announces while seat 0's card is on its way
            announce = next(m for m in client.view(tid, 1).legal_moves if m.startswith(("re", "kontra")))
            other: list[Callable[[], object]] = [lambda: client.move(tid, 1, announce)]
            w.page.route("**/SubmitMove", lambda r: first_comes_another(r, other))
            card = next(m for m in client.view(tid, 0).legal_moves if len(m) == 2)
            w.page.locator(f'.hand-card[data-card="{card}"]').first.click()
            w.page.click("#play")
            w.page.wait_for_function("() => document.querySelectorAll('.hand-card').length === 11")
            assert len(sent) == 2
            assert client.view(tid).view.doppelkopf.trick.cards == card
            assert w.page.locator("#notice").count() == 0
            w.page.unroute("**/SubmitMove")
            # 2. seat 0's own other device says "no announcement" first: the page's announcement
            # is no longer legal (same seat and same move would be a retry, answered as one)
            sent.clear()
            mine = next(m for m in client.view(tid, 0).legal_moves if m.startswith(("re", "kontra")))
            w.page.wait_for_selector("#anytime-toggle")
            w.page.click("#anytime-toggle")
            w.page.wait_for_selector(f'button.out-of-turn[data-move="{mine}"]')
            other[0] = lambda: client.move(tid, 0, "pass")
            w.page.route("**/SubmitMove", lambda r: first_comes_another(r, other))
            version = client.view(tid).version
            w.page.click(f'button.out-of-turn[data-move="{mine}"]')
            # an announcement asks once before it is sent
            w.page.wait_for_selector("#call-dialog")
            assert len(sent) == 0 and client.view(tid).version == version
            w.page.click("#call-confirm")
            w.page.wait_for_selector("#notice")
            assert len(sent) == 1
            assert "moved first" in w.page.inner_text("#notice")
            w.page.wait_for_function(f"() => document.querySelector('#table').dataset.version === '{version + 1}'")
            assert w.page.locator("button.out-of-turn, #anytime-toggle").count() == 0
            assert not any(a.seat == 0 and a.move == mine for a in client.view(tid).view.doppelkopf.announcements)
            w.check_errors_but(["409", "Conflict", "ABORTED", "aborted"])
    finally:
        client.close()


def test_keyboard_play_card_labels_and_the_turn_timer_ring(web_stack: ServerProcess, browser: Browser) -> None:
    """Arrows move along the hand, Space picks, Enter plays; every card says what it is; the
    seat on turn of a table with a turn timer shows its ring."""
    client = Client(web_stack.address)
    try:
        table = client.create("doppelkopf", seats=[pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN)] * 4,
                              options=struct({"deals": 1, "dealer": 3, "deck": deck("doppelkopf", 5),
                                              "turn_seconds": 120}))
        tid = table.table_id
        for name in ("alice", "bob", "carol", "dave"):
            client.join(tid, name=name)
        for seat in range(4):
            client.move(tid, seat, "healthy")
        with watched_page(browser, "desktop") as w:
            page = w.page
            sit_down(w, web_stack.web_url, tid, 0, client.tokens[0])
            page.wait_for_selector("#play")
            labels = page.locator(".hand-card").evaluate_all("cs => cs.map(c => c.getAttribute('aria-label'))")
            assert len(labels) == 12 and all(" of " in label for label in labels)
            assert page.locator('.seat.to-act[data-seat="0"] .timer-ring').count() == 1
            legal = client.view(tid, 0).legal_moves
            codes = page.locator(".hand-card").evaluate_all("cs => cs.map(c => c.dataset.card)")
            at = next(i for i, c in enumerate(codes) if c in legal)
            page.locator(".hand-card").first.focus()
            for _ in range(at):
                page.keyboard.press("ArrowRight")
            page.keyboard.press("Space")
            assert page.locator(".hand-card.selected").count() == 1
            page.keyboard.press("Enter")
            page.wait_for_function("() => document.querySelectorAll('.hand-card').length === 11")
            assert client.view(tid).view.doppelkopf.trick.cards == codes[at]
            # the ring moves on with the turn
            page.wait_for_selector('.seat.to-act[data-seat="1"] .timer-ring')
            w.check()
    finally:
        client.close()


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
def test_dos_auto_end_is_the_players_own_opt_in(web_stack: ServerProcess, browser: Browser, viewport: str) -> None:
    """After a match that leaves nothing but `end`, the server waits (ending by itself would
    tell the table about the hand); the page waits too until its player ticks auto-end, then
    ends the turn for them, and remembers the choice. The deal's commitment is in the panel."""
    from tests.dos_support import FILLER, deck_for

    client = Client(web_stack.address)
    try:
        deck_order = deck_for(["b4 b7 b10 r10 y1 y4 y10", FILLER], "r7 y9", "b1 b3")
        table = client.create("dos", seats=[pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN)] * 2,
                              options=struct({"target": 1, "dealer": 1, "deck": deck_order}))
        tid = table.table_id
        for name in ("alice", "bob"):
            client.join(tid, name=name)
        with watched_page(browser, viewport) as w:
            sit_down(w, web_stack.web_url, tid, 0, client.tokens[0])
            w.page.wait_for_selector("#auto-end")
            assert not w.page.is_checked("#auto-end")
            matched = client.move(tid, 0, "b7 on r7")
            w.page.wait_for_selector('button.move[data-move="end"]')
            assert list(client.view(tid, 0).legal_moves) == ["end"]
            w.page.wait_for_timeout(800)  # nothing is sent without the player's word
            assert client.view(tid).version == matched.version and list(client.view(tid).on_turn) == [0]
            no_horizontal_scroll(w.page)
            w.page.screenshot(path=str(ARTIFACTS / f"dos-auto-end-{viewport}.png"))
            w.page.check("#auto-end")
            w.page.wait_for_function(
                f"() => document.querySelector('#table').dataset.version === '{matched.version + 1}'")
            view = client.view(tid)
            assert list(view.on_turn) == [1]
            events = client.stream(tid, from_version=matched.version)
            ended = next(iter(events))
            events.cancel()
            assert (ended.version, ended.seat, ended.move, ended.auto) == (matched.version + 1, 0, "end", False)
            w.page.reload()
            w.page.wait_for_selector("#auto-end")
            assert w.page.is_checked("#auto-end")
            w.page.click("#show-log")
            shown = w.page.get_attribute("#commitment", "data-sha256")
            assert shown and shown == view.commitment.sha256 and len(shown) == 64
            assert not view.commitment.salt and not view.commitment.cards
            w.check()
    finally:
        client.close()


def test_leave_asks_the_connection_comes_back_and_a_timed_out_move_is_said(
    browser: Browser, tmp_path: Path
) -> None:
    """The turn is a banner; a move the server played for the seat (its timer ran out) is said
    on the table; a server restarted is a banner in words (no status name), gone once events
    flow again; Leave asks first: Stay keeps the seat, Leave gives it up."""
    web_stack = ServerProcess(db=tmp_path / "croupier.db", web_port=free_port()).start()
    client = Client(web_stack.address)
    try:
        table = client.create("doppelkopf", seats=[pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN)] * 4,
                              options=struct({"deals": 1, "dealer": 3, "deck": deck("doppelkopf", 5),
                                              "turn_seconds": 2}))
        tid = table.table_id
        for name in ("alice", "bob", "carol", "dave"):
            client.join(tid, name=name)
        with watched_page(browser, "phone") as w:
            page = w.page
            sit_down(w, web_stack.web_url, tid, 0, client.tokens[0])
            page.wait_for_selector("#turn-banner")
            assert "Your turn" in page.inner_text("#turn-banner")
            assert page.locator("#turn-banner .turn-seconds").count() == 1
            # seat 0 does not answer: the server plays for it, and the table says so
            page.wait_for_selector("#auto-note", timeout=15_000)
            assert "server played" in page.inner_text("#auto-note")
            events = client.stream(tid, timeout=10)
            auto = next(e for e in events if e.kind == pb.EVENT_KIND_MOVE and e.auto and e.seat == 0)
            events.cancel()
            assert auto.version > 0
            # the server restarts: a banner in words while it is away; back: gone
            web_stack.stop()
            page.wait_for_selector("#connection.reconnecting", timeout=15_000)
            text = page.inner_text("body")
            assert "UNKNOWN" not in text and "Failed to fetch" not in text
            page.screenshot(path=str(ARTIFACTS / "connection-lost-phone.png"))
            web_stack.start()
            page.wait_for_selector("#connection.reconnecting", state="detached", timeout=40_000)
            # Leave asks first
            page.click("#leave")
            page.wait_for_selector("#leave-dialog")
            page.screenshot(path=str(ARTIFACTS / "leave-phone.png"))
            page.click("#leave-stay")
            assert page.locator("#leave-dialog").count() == 0
            assert client.view(tid).table.seats[0].occupied
            page.click("#leave")
            page.click("#leave-confirm")
            page.wait_for_url("**/#/")
            assert not client.view(tid).table.seats[0].occupied
            w.check_errors_but(["net::ERR_CONNECTION_REFUSED", "Failed to load resource"])
    finally:
        client.close()
        web_stack.stop()


def test_reduced_motion_draws_every_event_without_flights(web_stack: ServerProcess, browser: Browser) -> None:
    """A player who asked their system for less motion sees the same table, event by event,
    and nothing flies."""
    client = Client(web_stack.address)
    try:
        seats = [pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN)] + [pb.SeatSpec(kind=pb.SEAT_KIND_BOT, bot_level="random")] * 3
        table = client.create("doppelkopf", players=4, seats=seats, options=struct({"deals": 1}))
        client.join(table.table_id, name="alice")
        with watched_page(browser, "phone", pace=PACE, reduced_motion=True) as w:
            sit_down(w, web_stack.web_url, table.table_id, 0, client.tokens[0])
            w.page.wait_for_selector(".hand-card")
            player = Player(w.page, client, table.table_id, "doppelkopf", seed=5)
            turns: list[int] = []
            player.play(look=turns.append)
            assert player.checked > 0 and len(turns) > 2
            assert int(w.page.evaluate("() => document.body.dataset.flights || '0'")) == 0
            w.check()
    finally:
        client.close()

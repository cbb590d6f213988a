"""Players in the web client, in real Chromium (Playwright) against a real server (its web
port, matchmaking with a short bot wait, presence) and a real bot worker, at the two sizes the
client is made for (1280x800 and 390x844): a guest's sign-in kept by the browser and checked
again after a reload; "Play now" until matched with bots, and the game played; the same player
in a second browser (the same identity in its storage) gets their seat and hand back, while
another guest opening that seat is refused in words; seats show who is here, live; "My
tables" lists the game; the leaderboard and the profile show a rated match.
Screenshots go to test-output/browser/players-*.png.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from croupier.v1 import croupier_pb2 as pb

from tests.players_support import player_md
from tests.support import Client, ServerProcess
from tests.web_players_support import (
    SLOW_GAME,
    hold_identity,
    identity_of,
    new_guest,
    players_stack,
    rated_match_played,
    sign_in,
)
from tests.web_table_support import (
    ARTIFACTS,
    Player,
    hand_in_reach,
    no_horizontal_scroll,
    skip_without_browser,
    watched_page,
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = [pytest.mark.e2e, pytest.mark.browser]
skip_without_browser()
sync_api = pytest.importorskip("playwright.sync_api")

SIZES = ["desktop", "phone"]
OTHER = {"desktop": "phone", "phone": "desktop"}
# the refused seat's call, as Chromium logs it; nothing else may go wrong in a page
REFUSED = ["403", "PERMISSION_DENIED"]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with players_stack(tmp_path_factory.mktemp("web_players")) as server:
        yield server


def hand(page: Page) -> list[str]:
    return sorted(page.locator(".hand-card").evaluate_all("cs => cs.map(c => c.dataset.card)"))


def my_turn(page: Page) -> None:
    page.wait_for_function("""() => { const t = document.querySelector('#table');
        const seat = document.querySelector('#role')?.dataset.seat;
        return t && seat !== '' && seat !== undefined && JSON.parse(t.dataset.onTurn || '[]').includes(Number(seat))
          && JSON.parse(t.dataset.legal || '[]').length > 0 && !document.querySelector('.move[disabled]'); }""",
                           timeout=30_000)


def presence_of(page: Page, seat: int) -> str:
    return page.locator(f".seat[data-seat='{seat}'] .presence").get_attribute("data-presence") or ""


@pytest.mark.parametrize("size", SIZES)
def test_a_guest_sign_in_is_remembered_and_checked_again(
    stack: ServerProcess, browser: Browser, size: str
) -> None:
    """Play now, signed out, asks a name first; the waiting page counts and cancels; the
    browser keeps the player across a reload (WhoAmI), and forgets a token the server refuses."""
    with watched_page(browser, size) as w:
        page = w.page
        page.goto(stack.web_url)
        page.click(f".play-quick[data-game='{SLOW_GAME}']")
        page.wait_for_selector("#sign-in .sign-in-why")
        page.fill("#guest-name", f"Ann {size}")
        page.click("#sign-in-submit")
        page.wait_for_url("**/#/match/*")
        ticket_id = page.url.rsplit("/", 1)[1]
        page.wait_for_selector("#match[data-status='WAITING']")
        page.wait_for_selector("#waited:not([data-seconds='0'])")  # the clock counts
        assert page.get_attribute("#found", "data-players") == "2"
        assert page.get_attribute("#found", "data-found") == "1"
        assert "Bots take the empty seats in" in page.inner_text("#bots-at")
        no_horizontal_scroll(page)
        page.screenshot(path=str(ARTIFACTS / f"players-waiting-{size}.png"))
        identity = identity_of(page)
        page.click("#cancel-match")
        page.wait_for_selector("#play-now")
        client = Client(stack.address)
        try:
            ticket = client.stub.GetTicket(pb.GetTicketRequest(ticket_id=ticket_id),
                                           metadata=player_md(str(identity["token"])), timeout=10)
        finally:
            client.close()
        assert ticket.status == pb.TICKET_STATUS_CANCELLED
        player_id = identity["playerId"]
        assert f"Ann {size}" in page.inner_text("#me")
        page.reload()
        page.wait_for_selector(f"#player-bar[data-player='{player_id}']")  # WhoAmI took it
        page.wait_for_selector(f".play-rated[data-game='{SLOW_GAME}']")  # the lobby drawn again
        assert page.locator(f".play-rated[data-game='{SLOW_GAME}']").count() == 1
        no_horizontal_scroll(page)
        page.screenshot(path=str(ARTIFACTS / f"players-lobby-{size}.png"))
        # a token the server does not take: signed out, and told so
        page.evaluate("""() => { const id = JSON.parse(localStorage.getItem('croupier.identity'));
            localStorage.setItem('croupier.identity', JSON.stringify({...id, token: id.token + 'x'})); }""")
        page.reload()
        page.wait_for_selector("#sign-in")
        assert "sign in again" in page.inner_text("#player-bar")
        assert page.evaluate("() => localStorage.getItem('croupier.identity')") is None
        sign_in(page, "Ann again")
        page.click("#sign-out")
        page.wait_for_selector("#name")
        assert page.evaluate("() => localStorage.getItem('croupier.identity')") is None
        w.check_errors_but(["401", "UNAUTHENTICATED"])


@pytest.mark.parametrize("size", SIZES)
def test_play_now_resume_elsewhere_and_a_refused_seat(
    stack: ServerProcess, browser: Browser, size: str
) -> None:
    """Play now until bots fill the table; the seat played from a second browser of the same
    player (the hand the same), refused to another guest; presence follows the player's pages;
    My tables lists the game."""
    with watched_page(browser, size) as a:
        page = a.page
        page.goto(stack.web_url)
        sign_in(page, f"Bea {size}")
        identity = identity_of(page)
        page.click(".play-quick[data-game='dou_dizhu']")
        page.wait_for_url("**/#/match/*")
        page.wait_for_url("**/#/table/*", timeout=30_000)  # bots came
        table_id = page.url.rsplit("/", 1)[1]
        page.wait_for_selector("#role[data-seat]:not([data-seat=''])")
        seat = int(page.get_attribute("#role", "data-seat") or -1)
        page.wait_for_function("() => document.querySelectorAll('.hand-card').length === 17")
        client = Client(stack.address)
        try:
            view = client.view(table_id)
        finally:
            client.close()
        assert view.table.seats[seat].player_id == identity["playerId"]
        assert sum(s.is_bot for s in view.table.seats) == 2
        my_turn(page)
        hand_in_reach(page)
        no_horizontal_scroll(page)
        page.screenshot(path=str(ARTIFACTS / f"players-table-{size}.png"))
        mine = hand(page)
        version = page.get_attribute("#table", "data-version")

        # the same player, another browser at the other size: the seat and the hand come back
        with watched_page(browser, OTHER[size]) as b:
            hold_identity(b.page, identity)
            b.page.goto(f"{stack.web_url}/#/table/{table_id}")
            b.page.wait_for_selector(f"#role[data-seat='{seat}']")
            b.page.wait_for_function("v => document.querySelector('#table')?.dataset.version === v",
                                     arg=version)
            assert hand(b.page) == mine
            assert b.page.locator("#take-seat").count() == 0
            b.page.screenshot(path=str(ARTIFACTS / f"players-resumed-{OTHER[size]}.png"))
            # and plays it: the first browser sees the move
            Player(b.page, client, table_id, "dou_dizhu").make(
                json.loads(b.page.get_attribute("#table", "data-legal") or "[]")[0], version or "")
            page.wait_for_function("v => document.querySelector('#table')?.dataset.version !== v",
                                   arg=version)
            b.check()

            # another guest opening that seat: refused in words, watching
            with watched_page(browser, size) as c:
                other = c.page
                other.goto(stack.web_url)
                sign_in(other, f"Cid {size}")
                other.goto(f"{stack.web_url}/#/table/{table_id}?seat={seat}")
                other.wait_for_selector("#refusal")
                assert "belongs to another player" in other.inner_text("#refusal")
                assert other.locator("#role").inner_text().strip().startswith("Spectator")
                assert other.locator(".hand-card").count() == 0
                assert "?seat=" not in other.url
                other.wait_for_function(
                    f"() => document.querySelector(\".seat[data-seat='{seat}'] .presence\")"
                    "?.dataset.presence === 'here'")
                no_horizontal_scroll(other)
                other.screenshot(path=str(ARTIFACTS / f"players-refused-{size}.png"))
                c.check_errors_but(REFUSED)
                # the player's pages close: their seat turns away, live, in the spectator's
                b.page.close()
                page.goto(stack.web_url)
                other.wait_for_function(
                    f"() => document.querySelector(\".seat[data-seat='{seat}'] .presence\")"
                    "?.dataset.presence === 'away'", timeout=15_000)
                assert presence_of(other, seat) == "away"

        # My tables: the game, to resume
        row = page.locator(f"#my-tables-open .my-table[data-table='{table_id}']")
        row.wait_for()
        assert row.locator("a.my-table-open").inner_text() == "Resume"
        no_horizontal_scroll(page)
        page.screenshot(path=str(ARTIFACTS / f"players-my-tables-{size}.png"), full_page=True)
        row.locator("a.my-table-open").click()
        page.wait_for_selector(f"#role[data-seat='{seat}']")
        a.check()


def test_leaderboard_and_profile_show_a_rated_match(stack: ServerProcess, browser: Browser) -> None:
    """A guest's rated match played to its end (over gRPC): their place on the game's board
    beside the bot levels, their profile with the rating's line and the table, at both sizes."""
    player_id, token = new_guest(stack.address, "Dot")
    table_id = rated_match_played(stack.address, token)
    identity = {"token": token, "playerId": player_id, "name": "Dot", "guest": True, "expiresAt": 0}
    for size in SIZES:
        with watched_page(browser, size) as w:
            page = w.page
            hold_identity(page, identity)
            page.goto(f"{stack.web_url}/#/leaderboard/dou_dizhu")
            rows = page.locator("#board-top tbody tr")
            page.wait_for_selector(f"#board-top tr.me[data-player='{player_id}']", timeout=15_000)
            assert rows.count() >= 2
            assert page.locator("#board-top tr .badge.bot").count() >= 1
            no_horizontal_scroll(page)
            page.screenshot(path=str(ARTIFACTS / f"players-leaderboard-{size}.png"), full_page=True)
            page.goto(f"{stack.web_url}/#/profile")
            card = page.locator(".profile-game[data-game='dou_dizhu']")
            card.wait_for()
            assert card.locator(".rating-line circle").count() == 1
            assert page.locator(f"#recent li[data-table='{table_id}']").count() == 1
            assert page.inner_text("#profile-name") == "Dot"
            no_horizontal_scroll(page)
            page.screenshot(path=str(ARTIFACTS / f"players-profile-{size}.png"), full_page=True)
            w.check()

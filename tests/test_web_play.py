"""Playing cards in the web table, in real Chromium against a real server, at 1280x800 and
390x844: the hand dims every card that neither starts nor continues a legal move (the live
cards are exactly those of the server's legal moves); a lone card that is a whole move plays
with one tap; a pick that is no move says what it lacks; Dou Dizhu names the combination before
it is played, its Hint cycles through distinct legal plays, its two jokers differ, the kitty's
cards are marked in the landlord's hand and no card face shows twice anywhere on the screen at
any point of a deal; Dos shows an opponent's match after the turn has cleared the row, in
words; Dobro's joker takes its value from one compact control. The other seats are played by
this test through the API, so every position is known. Screenshots go to
test-output/browser/play-*.png.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from typing import TYPE_CHECKING

import pytest
from croupier.v1 import croupier_pb2 as pb

from tests.support import Client, ServerProcess
from tests.web_table_support import (
    ARTIFACTS,
    deck,
    hand_in_reach,
    move_cards,
    no_horizontal_scroll,
    skip_without_browser,
    struct,
    watched_page,
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = [pytest.mark.e2e, pytest.mark.browser]
skip_without_browser()
sync_api = pytest.importorskip("playwright.sync_api")

VIEWPORTS = ["desktop", "phone"]
NOTATION = re.compile(r"\b[bgryw](?:\d{1,2}|#)(?![\w])|\bw2\b")


def human_table(client: Client, game: str, players: int, options: dict[str, object]) -> str:
    table = client.create(game, players=players, seats=[pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN)] * players,
                          options=struct(options))
    for name in ["alice", "bob", "carol", "dave"][:players]:
        client.join(table.table_id, name=name)
    return table.table_id


def sit(page: Page, url: str, table_id: str, token: str) -> None:
    page.goto(url)
    page.evaluate("([t, tok]) => sessionStorage.setItem(`croupier.seat.${t}`, JSON.stringify({seat: 0, token: tok}))",
                  [table_id, token])
    page.goto(f"{url}/#/table/{table_id}")


def at_version(page: Page, version: int) -> None:
    page.wait_for_selector(f'#table[data-version="{version}"] .hand-card')


def live_codes(page: Page) -> list[str]:
    return page.locator(".hand-card:not(.dim)").evaluate_all("cs => cs.map(c => c.dataset.card)")


def hand_codes(page: Page) -> list[str]:
    return page.locator(".hand-card").evaluate_all("cs => cs.map(c => c.dataset.card)")


def legal_cards(game: str, legal: list[str]) -> set[str]:
    out: set[str] = set()
    for m in legal:
        plan = move_cards(game, m)
        if plan:
            out.update(plan[0])
    return out


def check_dimming(page: Page, game: str, legal: list[str]) -> None:
    """The live cards are exactly the cards of the legal moves (none picked)."""
    assert page.locator(".hand-card.selected").count() == 0
    hand = set(hand_codes(page))
    assert set(live_codes(page)) == legal_cards(game, legal) & hand
    assert set(live_codes(page)) != hand or legal_cards(game, legal) >= hand


def faces_shown(page: Page) -> dict[str, list[str]]:
    return page.evaluate("""() => {
        const f = sel => [...document.querySelectorAll(sel)].map(c => c.dataset.face).filter(Boolean);
        return { hand: f('.hand-card:not([data-mark])'), handKitty: f('.hand-card[data-mark=kitty]'),
                 kitty: f('.kitty [data-face]'), played: f('.played-cards [data-face]'),
                 faceUp: f('.face-up [data-face]') }; }""")


def no_face_twice(page: Page) -> None:
    """No two cards show the same face: the hand, the kitty cards marked in it and the plays
    are all different cards; the kitty row is the record of the three cards the landlord took,
    so each of its faces shows at most once more, as that same card (marked in the landlord's
    hand, or played), and the face-up card likewise in its holder's hand."""
    s = faces_shown(page)
    cards = s["hand"] + s["handKitty"] + s["played"]
    twice = [f for f, n in Counter(cards).items() if n > 1]
    assert not twice, f"shown twice: {twice} in {s}"
    assert len(set(s["kitty"])) == len(s["kitty"]), s
    for f in s["hand"]:
        assert f not in s["kitty"], f"a kitty face in the hand, unmarked: {f} in {s}"
    for f in s["handKitty"]:
        assert f in s["kitty"], s


def shot(page: Page, name: str) -> None:
    page.wait_for_timeout(150)
    page.screenshot(path=str(ARTIFACTS / f"play-{name}.png"))


def dou_dizhu_deck() -> str:
    """Seat 0 (first to deal to, dealer 2) holds both jokers and a bomb of 5s."""
    cards = deck("dou_dizhu", 21).split()
    want = ["B", "R", "5s", "5h", "5d", "5c"]
    for c in want:
        cards.remove(c)
    rest = cards
    out: list[str] = []
    mine = iter(want)
    for k in range(54):
        if k < 51 and k % 3 == 0 and k // 3 < len(want):
            out.append(next(mine))
        else:
            out.append(rest.pop(0))
    return " ".join(out)


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_dou_dizhu_names_hints_dims_and_never_shows_a_card_twice(
    web_stack: ServerProcess, browser: Browser, viewport: str
) -> None:
    client = Client(web_stack.address)
    rng = random.Random(5)
    try:
        tid = human_table(client, "dou_dizhu", 3, {"dealer": 2, "face_up": 0, "deck": dou_dizhu_deck()})
        with watched_page(browser, viewport) as w:
            page = w.page
            sit(page, web_stack.web_url, tid, client.tokens[0])
            at_version(page, client.view(tid).version)
            no_face_twice(page)
            shot(page, f"dou_dizhu-bidding-{viewport}")
            page.click('#actions button.move[data-move="bid 3"]')
            page.wait_for_function("() => document.querySelectorAll('.hand-card').length === 20")
            hand_in_reach(page)
            no_horizontal_scroll(page)
            assert page.locator(".hand-card[data-mark=kitty]").count() == 3
            jokers = page.locator('.hand-card[data-card="B"], .hand-card[data-card="R"]')
            assert sorted(jokers.evaluate_all("cs => cs.map(c => c.dataset.face)")) == ["joker_black", "joker_red"]
            labels = jokers.evaluate_all("cs => cs.map(c => c.getAttribute('aria-label'))")
            assert sorted(labels) == ["big joker", "small joker"]
            words = jokers.evaluate_all("cs => cs.map(c => c.querySelector('svg').textContent)")
            assert words[0] != words[1]
            no_face_twice(page)
            shot(page, f"dou_dizhu-landlord-{viewport}")

            # leading: every card is live; Hint cycles through distinct legal plays, each named
            legal = list(client.view(tid, 0).legal_moves)
            check_dimming(page, "dou_dizhu", legal)
            seen: list[str] = []
            for _ in range(4):
                page.click("#hint")
                picked = sorted(page.locator(".hand-card.selected").evaluate_all("cs => cs.map(c => c.dataset.card)"))
                named = page.inner_text("#selection")
                seen.append(" ".join(picked))
                assert any(sorted(m.replace("+", "")) == picked for m in legal), picked
                assert named and "Pick" not in named
            assert len(set(seen)) == 4

            # the bomb named before it is played
            page.click("#clear")
            for _ in range(4):
                page.locator('.hand-card[data-card="5"]:not(.selected)').first.click()
            assert page.inner_text("#selection").startswith("Bomb of four 5s")
            shot(page, f"dou_dizhu-bomb-{viewport}")
            # a pick that is no whole move says what it lacks, before Play and on Play
            page.click("#clear")
            page.locator('.hand-card[data-card="5"]').first.click()
            page.locator('.hand-card[data-card="B"]').first.click()
            assert page.inner_text("#selection") == "Pick 2 more cards of the same rank for Three 5s with a single."
            version = client.view(tid).version
            page.click("#play")
            assert page.inner_text("#notice") == page.inner_text("#selection")
            assert client.view(tid).version == version
            page.click("#clear")

            # the deal to its end: the page plays a Hint's pick, the others play through the API;
            # at every point no face shows twice, and when following, dimming is the legal moves
            for _ in range(200):
                view = client.view(tid)
                if view.result.finished:
                    break
                if list(view.to_act) == [0]:
                    at_version(page, view.version)
                    no_face_twice(page)
                    legal = list(client.view(tid, 0).legal_moves)
                    check_dimming(page, "dou_dizhu", legal)
                    plays = [m for m in legal if m != "pass"]
                    if plays and ("pass" not in legal or rng.random() < 0.7):
                        page.click("#hint")
                        picked = sorted(page.locator(".hand-card.selected").evaluate_all(
                            "cs => cs.map(c => c.dataset.card)"))
                        page.click("#play")
                        if page.locator("#choice").count():
                            page.locator("#choice button.choice").first.click()
                        page.wait_for_function(f"() => document.querySelector('#table').dataset.version !== '{view.version}'")
                        done = client.view(tid).view.dou_dizhu.plays[-1]
                        assert done.seat == 0 and sorted(done.move.replace("+", "")) == picked
                    else:
                        page.click('#actions button.move[data-move="pass"]')
                        page.wait_for_function(f"() => document.querySelector('#table').dataset.version !== '{view.version}'")
                else:
                    client.step(tid, rng)
                    page.wait_for_selector(f'#table[data-version="{client.view(tid).version}"]')
                    no_face_twice(page)
                if rng.random() < 0.1:
                    shot(page, f"dou_dizhu-playing-{viewport}")
            assert client.view(tid).result.finished
            page.wait_for_selector("#game-over")
            shot(page, f"dou_dizhu-over-{viewport}")
            w.check_errors_but([])
    finally:
        client.close()

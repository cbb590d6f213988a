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
    small_targets,
    struct,
    watched_page,
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = [pytest.mark.e2e, pytest.mark.browser]
skip_without_browser()
sync_api = pytest.importorskip("playwright.sync_api")

VIEWPORTS = ["desktop", "phone"]
# the table's holds between events, scaled: these tests look at picks, dimming and words, not at
# the motion (tests/test_web_table.py plays it), and wait for the table to settle after each move
FAST = 0.1
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
    page.wait_for_selector(f'#table[data-version="{version}"][data-settled="1"] .hand-card')


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
        // a dialog (the deal's summary, the final screen) repeats the felt's last play: the
        // same cards again, not other cards
        const f = sel => [...document.querySelectorAll(sel)].filter(c => !c.closest('.modal'))
            .map(c => c.dataset.face).filter(Boolean);
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
        with watched_page(browser, viewport, pace=FAST, one_tap=True) as w:
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
            assert not small_targets(page), small_targets(page)
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

            if viewport == "phone":  # the whole deal once, at the desktop size (minutes of suite)
                w.check_errors_but([])
                return
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
                    page.wait_for_selector(f'#table[data-version="{client.view(tid).version}"][data-settled="1"]')
                    no_face_twice(page)
                if rng.random() < 0.1:
                    shot(page, f"dou_dizhu-playing-{viewport}")
            assert client.view(tid).result.finished
            page.wait_for_selector("#game-over")
            shot(page, f"dou_dizhu-over-{viewport}")
            w.check_errors_but([])
    finally:
        client.close()


CARD = {"doppelkopf": re.compile(r"[ATKQJ9][cshd]"), "sobe_e_desce": re.compile(r"[23456QJK7A][cdhs]")}


def advance_to_follow(client: Client, tid: str, game: str, rng: random.Random) -> None:
    """Moves through the API (seat 0's decisions too) until seat 0 is to play a card to a trick
    that another seat has led: a position where some of its cards cannot be played."""
    for _ in range(400):
        view = client.view(tid)
        assert not view.result.finished
        mine = list(client.view(tid, 0).legal_moves)
        cards = [m for m in mine if CARD[game].fullmatch(m)]
        if 0 in view.to_act and cards and len(cards) < len(hand_of(client, tid, game)):
            return
        seat = view.to_act[0]
        legal = list(client.view(tid, seat).legal_moves)
        pick = [m for m in legal if CARD[game].fullmatch(m)] or [m for m in legal if m not in ("reservation",)]
        if game == "doppelkopf" and "pass" in legal and len(view.to_act) > 1:
            pick = ["pass"]
        if game == "sobe_e_desce" and seat == 0 and "play" in legal:
            pick = ["play"]
        client.move(tid, seat, rng.choice(pick), view.version)
    raise AssertionError("seat 0 never had to follow")


def hand_of(client: Client, tid: str, game: str) -> list[str]:
    return getattr(client.view(tid, 0).view, game).hand.split()


@pytest.mark.parametrize("viewport", VIEWPORTS)
@pytest.mark.parametrize("game", ["doppelkopf", "sobe_e_desce"])
def test_trick_games_dim_what_cannot_follow_and_play_with_one_tap(
    web_stack: ServerProcess, browser: Browser, game: str, viewport: str
) -> None:
    client = Client(web_stack.address)
    rng = random.Random(11)
    try:
        options: dict[str, object] = {"deck": deck(game, 13), "dealer": 0}
        options.update({"deals": 1} if game == "doppelkopf" else {"max_deals": 1})
        tid = human_table(client, game, 4, options)
        advance_to_follow(client, tid, game, rng)
        view = client.view(tid)
        with watched_page(browser, viewport, pace=FAST, one_tap=True) as w:
            page = w.page
            sit(page, web_stack.web_url, tid, client.tokens[0])
            at_version(page, view.version)
            legal = list(client.view(tid, 0).legal_moves)
            check_dimming(page, game, legal)
            assert page.locator(".hand-card.dim").count() > 0
            shot(page, f"{game}-follow-{viewport}")
            # a dimmed card is no start: a tap picks nothing and sends nothing
            page.locator(".hand-card.dim").first.click(force=True)
            assert page.locator(".hand-card.selected").count() == 0
            assert client.view(tid).version == view.version
            # "tap then confirm" (kept by the browser): a tap picks, another live card replaces
            # the pick (a trick takes one card), the line names it, Play plays it
            page.check("#tap-confirm")
            first, second = live_codes(page)[:2] if len(live_codes(page)) > 1 else live_codes(page) * 2
            page.locator(f'.hand-card[data-card="{first}"]').first.click()
            if first != second:
                page.locator(f'.hand-card[data-card="{second}"]').first.click()
            assert page.locator(".hand-card.selected").evaluate_all("cs => cs.map(c => c.dataset.card)") == [second]
            assert page.inner_text("#selection").strip()
            assert client.view(tid).version == view.version
            page.click("#play")
            page.wait_for_function(f"() => document.querySelector('#table').dataset.version !== '{view.version}'")
            assert second not in hand_of(client, tid, game)
            # one tap on a live card plays it
            advance_to_follow(client, tid, game, rng)
            view = client.view(tid)
            page.reload()
            at_version(page, view.version)
            assert page.is_checked("#tap-confirm")
            page.uncheck("#tap-confirm")
            legal = list(client.view(tid, 0).legal_moves)
            check_dimming(page, game, legal)
            card = live_codes(page)[0]
            page.locator(f'.hand-card[data-card="{card}"]').first.click()
            page.wait_for_function(f"() => document.querySelector('#table').dataset.version !== '{view.version}'")
            assert card not in hand_of(client, tid, game)
            w.check()
    finally:
        client.close()


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_dobro_joker_value_from_one_control(web_stack: ServerProcess, browser: Browser, viewport: str) -> None:
    cards = deck("dobro", 9, 2).split()
    for c in ("5", "2", "J"):
        cards.remove(c)
        cards.insert(0, c)
    client = Client(web_stack.address)
    try:
        tid = human_table(client, "dobro", 2, {"rounds": 1, "opener": 0, "deck": " ".join(cards)})
        version = client.view(tid).version
        legal = list(client.view(tid, 0).legal_moves)
        with watched_page(browser, viewport, pace=FAST, one_tap=True) as w:
            page = w.page
            sit(page, web_stack.web_url, tid, client.tokens[0])
            at_version(page, version)
            check_dimming(page, "dobro", legal)
            page.locator('.hand-card[data-card="J"]').first.click()
            assert page.inner_text("#selection") == "Joker as:"
            offered = page.locator("#choose-move option").evaluate_all("os => os.map(o => o.value)")
            assert set(offered) == {m for m in legal if m.startswith("J:")} and len(offered) > 1
            assert page.locator("#choose-move option").evaluate_all("os => os.map(o => o.textContent)") == \
                [m[2:] for m in offered]
            assert page.locator("#actions button.move").count() <= 3  # no button per value
            assert not small_targets(page), small_targets(page)
            page.select_option("#choose-move", "J:7")
            shot(page, f"dobro-joker-{viewport}")
            page.click("#play")
            page.wait_for_function(f"() => document.querySelector('#table').dataset.version === '{version + 1}'")
            assert client.view(tid).view.dobro.auction[-1].move == "J:7"
            assert page.locator("#choice").count() == 0
            text = page.inner_text("body")
            assert "(s)" not in text and " 1 pts" not in text
            w.check()
    finally:
        client.close()


COLOUR = {"b": "blue", "g": "green", "r": "red", "y": "yellow"}


def dos_words(card: str) -> str:
    if card == "w2":
        return "wild DOS"
    return f"{COLOUR[card[0]]} {'wild #' if card[1:] == '#' else card[1:]}"


def dos_turn(client: Client, tid: str, seat: int) -> list[str]:
    """Seat `seat` matches what it can (one match), places its bonus cards and ends its turn."""
    made: list[str] = []
    for _ in range(12):
        view = client.view(tid)
        if seat not in view.to_act:
            break
        legal = list(client.view(tid, seat).legal_moves)
        on = [m for m in legal if " on " in m]
        adds = [m for m in legal if m.startswith("add ")]
        ends = [m for m in legal if m.startswith("end")]
        move = on[0] if on and not made else adds[0] if adds else ends[-1] if ends else "draw"
        client.move(tid, seat, move, view.version)
        if " on " in move or move.startswith("add "):
            made.append(move)
    return made


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_dos_shows_the_opponents_match_in_words(web_stack: ServerProcess, browser: Browser, viewport: str) -> None:
    from tests.dos_support import deck_for

    client = Client(web_stack.address)
    try:
        order = deck_for(["b4 b7 b10 r10 y1 y4 y10", "r7 g1 g6 g8 g10 y8 b3"], "r7 y9", "b5 g3 r4 y6 b9 r1")
        tid = human_table(client, "dos", 2, {"target": 1, "dealer": 1, "deck": order})
        with watched_page(browser, viewport, pace=FAST, one_tap=True) as w:
            page = w.page
            sit(page, web_stack.web_url, tid, client.tokens[0])
            at_version(page, client.view(tid).version)
            check_dimming(page, "dos", list(client.view(tid, 0).legal_moves))
            dos_turn(client, tid, 0)
            made = dos_turn(client, tid, 1)
            assert any(" on " in m for m in made), made
            at_version(page, client.view(tid).version)
            shown = page.inner_text("#last-turn")
            assert shown.startswith("bob played:"), shown
            said = page.get_attribute("#last-turn", "aria-label") or ""
            for m in made:
                cards = m.split(" on ")[0].removeprefix("add ").split("+")
                for c in cards + ([m.split(" on ")[1]] if " on " in m else []):
                    assert dos_words(c) in said, (c, said)
            assert page.locator("#last-turn .card").count() >= 2
            body = page.inner_text("body")
            assert not NOTATION.search(body), NOTATION.search(body)
            shot(page, f"dos-last-turn-{viewport}")
            w.check()
    finally:
        client.close()

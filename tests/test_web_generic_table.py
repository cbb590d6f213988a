"""The web client reads every per-game fact from ListGames and plays a game without a web
module of its own through the generic table, in real Chromium against a real server.

No new game is registered for this: `?plain` in a table's address makes the page draw any
game with the generic module a game without one gets (web/src/games/generic.tsx), so a known
game's table checks the fallback: its hand from the view's fields, every legal move a button
in notation, a move played by clicking one. The lobby's option words and folds and the
table's title come from ListGames, not from a list in the client.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

import pytest
from croupier.v1 import croupier_pb2 as pb

from tests.support import Client, ServerProcess
from tests.web_table_support import (
    ARTIFACTS,
    deck,
    no_horizontal_scroll,
    skip_without_browser,
    struct,
    watched_page,
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = [pytest.mark.e2e, pytest.mark.browser]
skip_without_browser()
sync_api = pytest.importorskip("playwright.sync_api")


def test_the_generic_table_plays_a_known_game(web_stack: ServerProcess, browser: Browser) -> None:
    client = Client(web_stack.address)
    try:
        info = next(g for g in client.stub.ListGames(pb.ListGamesRequest(), timeout=5).games
                    if g.name == "dos")
        n = info.min_players
        options = struct({"deck": deck(info.name, 5, n), "dealer": 1, "target": 1})
        table = client.create(info.name, players=n, options=options,
                              seats=[pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN)] * n)
        tid = table.table_id
        for name in ("alice", "bob")[:n]:
            client.join(tid, name=name)
        rng = random.Random(1)
        while 0 not in client.view(tid).on_turn:
            client.step(tid, rng)
        mine = client.view(tid, 0)
        hand = mine.view.dos.hand.split()
        with watched_page(browser, "desktop") as w:
            page = w.page
            page.goto(web_stack.web_url)
            page.evaluate("([t, tok]) => sessionStorage.setItem(`croupier.seat.${t}`,"
                          " JSON.stringify({seat: 0, token: tok}))", [tid, client.tokens[0]])
            page.goto(f"{web_stack.web_url}/#/table/{tid}?plain")
            page.wait_for_selector(f'#table[data-version="{mine.version}"] .hand-card')
            assert page.inner_text("h1") == info.title  # from ListGames
            # the hand: the view's own cards, each named by its code (no game's faces)
            shown = page.locator(".hand-card").evaluate_all(
                "bs => bs.map(b => b.getAttribute('aria-label'))")
            assert sorted(shown) == sorted(hand)
            assert page.locator(".seat").count() == n
            assert "draw pile" in page.inner_text("#centre")  # a plain field of the view
            # every legal move a button in its notation, nothing played with cards
            moves = page.locator("#actions button.move")
            offered = moves.evaluate_all("bs => bs.map(b => b.dataset.move)")
            assert sorted(offered) == sorted(mine.legal_moves)
            assert all(page.inner_text(f'#actions button.move[data-move="{m}"]') == m
                       for m in mine.legal_moves)
            assert page.locator("#play").count() == 0
            no_horizontal_scroll(page)
            page.screenshot(path=str(ARTIFACTS / "generic-dos-desktop.png"))
            move = sorted(mine.legal_moves)[0]
            page.click(f'#actions button.move[data-move="{move}"]')
            page.wait_for_selector(f'#table:not([data-version="{mine.version}"])')
            assert client.view(tid).version > mine.version
            # the same table without ?plain is drawn by the game's own module (its faces)
            page.goto(f"{web_stack.web_url}/#/table/{tid}")
            page.wait_for_function("() => [...document.querySelectorAll('.hand-card')]"
                                   ".some(b => b.getAttribute('aria-label').includes(' '))")
            w.check()
    finally:
        client.close()


def test_the_lobby_reads_option_words_and_folds_from_list_games(web_stack: ServerProcess,
                                                                browser: Browser) -> None:
    client = Client(web_stack.address)
    try:
        games = client.stub.ListGames(pb.ListGamesRequest(), timeout=5).games
    finally:
        client.close()
    with watched_page(browser, "desktop") as w:
        page = w.page
        page.goto(web_stack.web_url)
        page.wait_for_selector("#game")
        for game in games:
            page.select_option("#game", game.name)
            for spec in game.options:
                field = page.locator(f"#option-{spec.name}")
                assert field.count() == 1, spec.name
                # a folded option sits under "Advanced", the others in the form itself
                assert page.locator(f"#advanced #option-{spec.name}").count() == int(spec.advanced)
                shown = page.text_content(f"#create .option:has(#option-{spec.name})") or ""
                assert spec.label in shown
        w.check()

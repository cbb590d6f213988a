"""The web client and the terminal name the same things with the same words
(docs/frontends.md, "Seats and levels"): a bot level by its API name, with the one-line
description docs/levels.md gives it; a seat by the API's number, from 0, on every screen.

Real parts only: a `croupier serve` process with its web port serving web/dist, headless
Chromium (Playwright) on it, and `croupier watch` in a pseudo-terminal on the same table. The
browser tests are skipped with a reason when Chromium or the built client is missing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pexpect
import pytest
from croupier.v1 import croupier_pb2 as pb

from bots.levels import LEVELS
from tests.bot_support import child_env
from tests.support import CROUPIER, REPO, Client, ServerProcess, free_port
from tests.web_table_support import skip_without_browser, watched_page

if TYPE_CHECKING:
    from playwright.sync_api import Browser


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    skip_without_browser()
    server = ServerProcess(db=tmp_path_factory.mktemp("agree") / "croupier.db",
                           web_port=free_port()).start()
    yield server
    server.stop()


def documented_levels() -> dict[str, str]:
    """docs/levels.md's "Naming a level to a player" table: level -> one-line description."""
    text = (REPO / "docs" / "levels.md").read_text()
    section = text.split("## Naming a level to a player", 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"^\| `([a-z]+)` \| ([^|]+?) \|$", section, re.MULTILINE))


def test_croupier_play_names_the_levels_its_bots_take() -> None:
    """`croupier play --help` lists the levels `--bots` takes by their API names, all of
    them, in the ladder's order."""
    from clients.terminal import play_parser

    text = " ".join(play_parser().format_help().split())
    listed = re.search(r"bots of this level instead of being matched: ([a-z, ]+?) \(", text)
    assert listed is not None, text
    assert re.split(r", | or ", listed.group(1)) == list(LEVELS)


@pytest.mark.e2e
@pytest.mark.browser
def test_the_lobby_names_levels_by_their_api_names_and_documented_words(
    stack: ServerProcess, browser: Browser
) -> None:
    """Every bot level the lobby offers is a level the server plays, shown by that name and
    the description docs/levels.md gives it (no "beginner" for `heuristic`); the seats of the
    form count from 0, the creator's own seat first, as `croupier play`'s."""
    documented = documented_levels()
    assert list(documented) == list(LEVELS)  # the docs' table covers every level, in order
    with watched_page(browser, "desktop") as w:
        w.page.goto(stack.web_url)
        w.page.select_option("#game", "dou_dizhu")
        w.page.wait_for_selector("#seat-2")
        seats = w.page.locator(".seat-choice").evaluate_all(
            "ls => ls.map(l => [...l.childNodes].filter(n => n.nodeType === Node.TEXT_NODE)"
            "  .map(n => n.textContent).join('').trim())")
        assert seats == ["Seat 0", "Seat 1", "Seat 2"]
        assert w.page.input_value("#seat-0") == "you"
        shown = w.page.locator("#seat-1 option").evaluate_all(
            "os => os.map(o => [o.value, o.textContent])")
        bots = [(value, text) for value, text in shown if value not in ("you", "open")]
        assert [value for value, _ in bots] == list(LEVELS)
        for value, text in bots:
            assert text == f"Bot: {value} ({documented[value]})"
        w.check()


@pytest.mark.e2e
@pytest.mark.browser
def test_the_web_table_and_croupier_watch_number_seats_alike(
    stack: ServerProcess, browser: Browser, tmp_path: Path
) -> None:
    """One table, seen by a web spectator and by `croupier watch`: the number each puts on a
    seat is the API's seat number, for open seats (web), joins (terminal) and the names the
    server gives a seat joined without one."""
    client = Client(stack.address)
    try:
        table = client.create("dou_dizhu", seats=[pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN)] * 3)
        tid = table.table_id
        with watched_page(browser, "desktop") as w:
            w.page.goto(f"{stack.web_url}/#/table/{tid}")
            w.page.wait_for_selector(".seat[data-seat='2'] .seat-name")

            def web_names() -> dict[int, str]:
                names = w.page.locator(".seat[data-seat]").evaluate_all(
                    "ss => ss.map(s => [s.dataset.seat, s.querySelector('.seat-name').textContent])")
                return {int(seat): name for seat, name in names}

            # open seats: the seat's number, and an "open" badge beside it
            assert web_names() == {0: "Seat 0", 1: "Seat 1", 2: "Seat 2"}
            assert w.page.locator(".seat[data-seat] .badge.open").count() == 3

            watch = pexpect.spawn(
                CROUPIER[0], [*CROUPIER[1:], "watch", tid, "--server", stack.address],
                cwd=str(REPO), env=child_env(NO_COLOR="1", TERM="xterm"), encoding="utf-8",
                timeout=20, dimensions=(50, 160),
            )
            with (tmp_path / "watch.txt").open("w") as log:
                watch.logfile_read = log
                try:
                    watch.expect(r"created")
                    # joined out of order, one seat without a name (the server names it by number)
                    joins = {2: "ann", 0: "", 1: "cat"}
                    for seat, name in joins.items():
                        client.join(tid, name=name, seat=seat)
                    terminal: dict[int, str] = {}
                    for _ in joins:
                        watch.expect(r"joined: seat (\d+) \(([^)]*)\) joined")
                        terminal[int(watch.match.group(1))] = watch.match.group(2)
                finally:
                    watch.terminate(force=True)
            # the terminal's number for a seat is the API's, and so the web's above
            assert terminal == {2: "ann", 0: "player 0", 1: "cat"}
            # the page draws the joins in their order, each held a moment: the last is seat 1's
            w.page.wait_for_selector(".seat[data-seat='1'] .seat-name:has-text('cat')")
            assert web_names() == {0: "player 0", 1: "cat", 2: "ann"}
            w.check()
    finally:
        client.close()

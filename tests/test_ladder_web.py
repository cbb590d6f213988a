"""The lobby's Ladder panel in real headless Chromium, at desktop and phone sizes, against a
real server whose ladder holds rated matches (played and rated over gRPC first)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tests.ladder_support import bot_table, played, rate, standings
from tests.support import Client, ServerProcess, free_port
from tests.web_table_support import (
    ARTIFACTS,
    skip_without_browser,
    watched_page,
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = [pytest.mark.e2e, pytest.mark.browser]
skip_without_browser()
sync_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """Two rated matches of Dou Dizhu on ladder main: six entrants, three in each."""
    tmp = tmp_path_factory.mktemp("ladder-web")
    proc = ServerProcess(db=tmp / "croupier.db", web_port=free_port()).start()
    client = Client(proc.address)
    try:
        for n, group in enumerate([("random", "heuristic", "easy"), ("medium", "hard", "expert")]):
            rotations = [group[i:] + group[:i] for i in range(3)]
            tables = [played(client, bot_table(client, s, ladder="main", deals=1), 10 * n + i)
                      for i, s in enumerate(rotations)]
            rate(client, "main", f"web/{n}", tables)
    finally:
        client.close()
    yield proc
    proc.stop()


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
def test_ladder_panel_shows_the_standings(server: ServerProcess, browser: Browser,
                                          viewport: str) -> None:
    client = Client(server.address)
    try:
        expected = standings(client, "main", "dou_dizhu")
    finally:
        client.close()
    assert len(expected) == 6
    with watched_page(browser, viewport) as w:
        page = w.page
        page.goto(server.web_url + "/")
        panel = page.locator("#ladder")
        rows = panel.locator("tbody tr")
        rows.first.wait_for()
        assert panel.locator("h2").inner_text() == "Ladder"
        assert page.locator("#ladder-game").input_value() == "dou_dizhu"
        assert rows.count() == 6
        for i, (_, entrant, mu, sigma, ordinal, matches) in enumerate(expected):
            cells = [c.strip() for c in rows.nth(i).locator("td").all_inner_texts()]
            assert cells[1:] == [entrant, f"{ordinal:.1f}", f"{mu:.1f} ± {sigma:.1f}",
                                 str(matches)], cells
        places = [int(rows.nth(i).locator("td").first.inner_text()) for i in range(6)]
        assert places[0] == 1 and places == sorted(places)
        # nothing spills sideways: the whole table is in view at this size
        width = page.evaluate("() => document.documentElement.clientWidth")
        box = panel.locator("table").bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width
        panel.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / f"ladder-{viewport}.png"), full_page=True)
        panel.screenshot(path=str(ARTIFACTS / f"ladder-panel-{viewport}.png"))

        # another game: an empty ladder says so
        page.locator("#ladder-game").select_option("dobro")
        empty = panel.locator(".ladder-empty")
        empty.wait_for()
        assert "No rated matches in Dobro yet" in empty.inner_text()
        assert rows.count() == 0
        panel.screenshot(path=str(ARTIFACTS / f"ladder-empty-{viewport}.png"))
        # the lobby's game filter takes the panel along
        page.locator("#filter-game").select_option("dou_dizhu")
        rows.first.wait_for()
        assert page.locator("#ladder-game").input_value() == "dou_dizhu"
        w.check()

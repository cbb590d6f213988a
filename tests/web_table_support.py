"""What the browser tests of the card table share: the stack (a real server with its web port
and a real bot worker), Chromium through Playwright, pages at the two sizes the client is made
for with every console error collected, fixed decks, and a player that plays a match to the
end by clicking cards and buttons as a person does.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from croupier.v1 import croupier_pb2 as pb
from google.protobuf import struct_pb2

from tests.bot_support import CROUPIER as CROUPIER_BIN
from tests.bot_support import Proc
from tests.support import REPO, Client, ServerProcess, free_port

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, ViewportSize

CHROMIUM = os.environ.get("CROUPIER_CHROMIUM", "/usr/bin/chromium")
DIST = REPO / "web" / "dist" / "index.html"
ARTIFACTS = Path(os.environ.get("CROUPIER_TEST_OUTPUT", REPO / "test-output")) / "browser"
VIEWPORTS: dict[str, ViewportSize] = {
    "desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
GAMES = ["dou_dizhu", "doppelkopf", "dobro", "dos", "sobe_e_desce"]


def skip_without_browser() -> None:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)", allow_module_level=True)
    if not DIST.exists():
        pytest.skip("web client not built (make web)", allow_module_level=True)


def struct(values: dict[str, Any]) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(values)
    return s


def start_stack(tmp: Path, deal_pause: float = 0) -> tuple[ServerProcess, Proc]:
    """The server (with a pause between deals of `deal_pause` seconds) and a bot worker."""
    extra = ("--fill-interval", "0.1", "--deal-pause-seconds", str(deal_pause))
    server = ServerProcess(db=tmp / "croupier.db", web_port=free_port(), extra=extra).start()
    # bots that think a moment at a table with a person (pacing), short: the tests play whole
    # matches (the worker's environment is cleared of CROUPIER_* settings: flags, then)
    argv = [CROUPIER_BIN, "bots", "--server", server.address, "--workers", "1", "--poll", "0.05",
            "--think-seconds", "0-0.1", "--forced-think-seconds", "0"]
    return server, Proc("bots", argv, tmp / "bots.log")


def launch(p: Any) -> Browser:
    return p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"])



@dataclass
class Watched:
    """A page and everything that went wrong in it: uncaught errors, console errors (a missing
    favicon is one), failed requests."""

    page: Page
    errors: list[str] = field(default_factory=list)

    def check(self) -> None:
        assert not self.errors, f"errors in the page: {self.errors}"

    def check_errors_but(self, expected: list[str]) -> None:
        """As check, less the console lines of refusals the test itself provoked."""
        left = [e for e in self.errors if not any(x in e for x in expected)]
        assert not left, f"errors in the page: {left}"


@contextlib.contextmanager
def watched_page(browser: Browser, viewport: str, pace: float | None = None,
                 reduced_motion: bool = False, one_tap: bool = False) -> Iterator[Watched]:
    """A page at `viewport`; `pace` scales the table's holds between events (the client's
    `croupier.pace`: 0.2 plays the motion five times as fast, for tests that play whole matches).
    Cards are picked then played with Play (the client's "tap then confirm" setting) unless
    `one_tap`: a card that alone is a move then plays on its tap (tests/test_web_play.py)."""
    context = browser.new_context(viewport=VIEWPORTS[viewport], has_touch=viewport == "phone",
                                  is_mobile=viewport == "phone", device_scale_factor=1,
                                  reduced_motion="reduce" if reduced_motion else "no-preference")
    if pace is not None:
        context.add_init_script(f"localStorage.setItem('croupier.pace', '{pace}')")
    if not one_tap:
        context.add_init_script("localStorage.setItem('croupier.tapThenConfirm', '1')")
    page = context.new_page()
    page.set_default_timeout(20_000)
    w = Watched(page)
    page.on("pageerror", lambda e: w.errors.append(f"pageerror: {e}"))
    page.on("console", lambda m: w.errors.append(f"console: {m.text}") if m.type == "error" else None)
    page.on("requestfailed", lambda r: w.errors.append(f"request failed: {r.url}")
            if "StreamTable" not in r.url else None)  # a stream cut by leaving the page
    try:
        yield w
    finally:
        context.close()


def deck(game: str, seed: int, players: int = 4) -> str:
    """A fixed card order for the game's `deck` option: every card once, shuffled by `seed`."""
    if game == "dou_dizhu":
        cards = [r + s for r in "3456789TJQKA2" for s in "shdc"] + ["B", "R"]
    elif game == "doppelkopf":
        cards = [r + s for r in "ATKQJ9" for s in "cshd"] * 2
    elif game == "sobe_e_desce":
        cards = [r + s for r in "23456QJK7A" for s in "cdhs"]
    elif game == "dobro":
        counts = {"2": 5, "3": 6, "4": 6, "5": 6, "6": 6, "7": 5, "8": 4, "9": 3, "10": 3, "11": 3,
                  "12": 3, "J": 3, "S": 2, "R": 0 if players == 2 else 2}
        cards = [c for c, n in counts.items() for _ in range(n)]
    else:
        per = {"1": 3, "3": 3, "4": 3, "5": 3, "6": 2, "7": 2, "8": 2, "9": 2, "10": 2, "#": 2}
        cards = [c + v for c in "bgry" for v, n in per.items() for _ in range(n)] + ["w2"] * 12
    random.Random(seed).shuffle(cards)
    return " ".join(cards)


def no_horizontal_scroll(page: Page) -> None:
    width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], f"horizontal scroll: content {width[0]} px in a {width[1]} px window"


def motion_done(page: Page) -> None:
    """Waits until no card is in flight (the table's own animations; the glow of the seat on
    turn is a CSS animation and runs on)."""
    page.wait_for_function("""() => document.getAnimations()
        .filter(a => a.constructor === Animation && a.playState === 'running').length === 0""")


def hand_in_reach(page: Page) -> None:
    """Every hand card shows at least 44 px of itself inside the window, without scrolling."""
    motion_done(page)
    boxes = page.evaluate("""() => [...document.querySelectorAll('.hand-card')].map(b => {
        const r = b.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })""")
    height = page.evaluate("() => window.innerHeight")
    lefts = sorted({round(b[0]) for b in boxes})
    for b in boxes:
        assert b[3] <= height + 1, f"a hand card is below the window: {b} (height {height})"
    steps = [b - a for a, b in zip(lefts, lefts[1:], strict=False)]
    assert not steps or min(steps) >= 44, f"hand cards closer than 44 px: {steps}"


def no_overlap(page: Page) -> None:
    """The header, every opponent's box, the centre and the player's own area: none covers
    another; the centre keeps room to be read; no opponent's name is cut."""
    motion_done(page)
    boxes: list[list[Any]] = page.evaluate("""() => [
        ...[...document.querySelectorAll('.table-header, #centre, .my-area')].map(e => [e.className || e.id, e]),
        ...[...document.querySelectorAll('.opponents .seat')].map(e => ['seat ' + e.dataset.seat, e])]
      .map(([n, e]) => { const r = e.getBoundingClientRect(); return [n, r.left, r.top, r.right, r.bottom]; })""")
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            w = min(a[3], b[3]) - max(a[1], b[1])
            h = min(a[4], b[4]) - max(a[2], b[2])
            assert w <= 1 or h <= 1, f"{a[0]} and {b[0]} overlap: {a[1:]} {b[1:]}"
    centre = next(b for b in boxes if b[0] == "centre")
    assert centre[4] - centre[2] >= 110, f"the centre is a strip: {centre[1:]}"
    cut: list[str] = page.evaluate("""() => [...document.querySelectorAll('.opponents .seat-name')]
        .filter(e => e.scrollHeight > e.clientHeight + 1 || e.scrollWidth > e.clientWidth + 1).map(e => e.textContent)""")
    assert not cut, f"names cut: {cut}"


def small_targets(page: Page) -> list[str]:
    """Visible buttons, links, inputs and selects smaller than 44 px in either direction."""
    found: list[str] = page.evaluate("""() => [...document.querySelectorAll(
        'button:not(.hand-card), a, select, input:not([type=checkbox])')]
        .filter(e => e.offsetParent !== null)
        .map(e => [e, e.getBoundingClientRect()])
        .filter(([e, r]) => r.width > 0 && (r.height < 43.5 || r.width < 43.5))
        .map(([e, r]) => `${e.tagName} ${e.id || e.className} ${Math.round(r.width)}x${Math.round(r.height)}`)""")
    return found


# ------------------------------------------------------------------ playing by clicking

def move_cards(game: str, move: str) -> tuple[list[str], str] | None:
    """The hand cards (and the Dos centre card) a move takes; None for a button move. Written
    from the rulebooks' notation, apart from the client's own reading of it."""
    if game == "dou_dizhu":
        return None if move == "pass" or move.startswith("bid") else (list(move.replace("+", "")), "")
    if game == "doppelkopf":
        return ([move], "") if re.fullmatch(r"[ATKQJ9][cshd]", move) else None
    if game == "sobe_e_desce":
        if re.fullmatch(r"[23456QJK7A][cdhs]", move):
            return [move], ""
        if move.startswith("exchange "):
            return move.split()[1:], ""
        return None
    if game == "dobro":
        if move in ("skip", "reverse"):
            return ["S" if move == "skip" else "R"], ""
        if move.startswith("JJ:"):
            return ["J", "J"], ""
        if move.startswith("J:"):
            return ["J"], ""
        if move.startswith("J+"):
            return ["J", move[2:]], ""
        if move.isdigit():
            return ([move], "") if 2 <= int(move) <= 12 else ([move[: len(move) // 2]] * 2, "")
        return None
    m = re.fullmatch(r"(\S+) on (\S+)", move)
    if m:
        return m.group(1).split("+"), m.group(2)
    if move.startswith("add "):
        return [move[4:]], ""
    return None


def deal_scores(game: str, view: pb.TableView, deal: int) -> list[int]:
    """A finished deal's scores as the server's view counts them (what the summary shows)."""
    g = getattr(view.view, game)
    h = g.history[deal]
    if game in ("dou_dizhu", "doppelkopf"):
        return list(h.scores)
    if game == "dobro":
        return list(h.points)
    if game == "dos":
        return [h.points if i == h.winner else 0 for i in range(view.table.players)]
    return list(h.change)


def deal_hands(game: str, view: pb.TableView, deal: int) -> dict[int, str]:
    """The hands a finished deal laid down (seat -> cards, ranks only for Dou Dizhu), as the
    server's view shows them to every seat; empty for games that show none."""
    if game not in ("dos", "dou_dizhu"):
        return {}
    h = getattr(view.view, game).history[deal]
    if game == "dos":
        return {s: " ".join(sorted(c.split())) for s, c in enumerate(h.hands) if c}
    return {s: "".join(sorted(c)) for s, c in enumerate(h.hands) if c}


@dataclass
class Player:
    """Plays seat `seat` of a table in the page by clicking, checking each deal's summary."""

    page: Page
    client: Client
    table_id: str
    game: str
    seed: int = 1
    shots: str = ""  # names the screenshot of the first deal summary, if given
    seat: int = 0
    clicks: int = 0
    checked: int = 0
    summaries: int = 0
    out_of_turn: int = 0
    refused: int = 0

    def state(self) -> dict[str, Any]:
        return self.page.evaluate("""() => { const t = document.querySelector('#table');
            return { over: !!document.querySelector('#game-over'), summary: !!document.querySelector('#deal-summary'),
              legal: JSON.parse(t?.dataset.legal || '[]'), version: t?.dataset.version || '',
              onTurn: JSON.parse(t?.dataset.onTurn || '[]'), seat: Number(document.querySelector('#role')?.dataset.seat),
              busy: !!document.querySelector('#play[disabled], .move[disabled]'),
              choice: !!document.querySelector('#choice') }; }""")

    def check_summary(self, root: str) -> None:
        deal = int(self.page.get_attribute(f"{root} [data-deal]", "data-deal") or -1)
        shown = json.loads(self.page.get_attribute(f"{root} [data-deal] .summary-scores", "data-scores") or "[]")
        view = self.client.view(self.table_id)
        assert shown == deal_scores(self.game, view, deal)
        hands = self.page.evaluate(f"""() => Object.fromEntries([...document.querySelectorAll(
            '{root} [data-deal] .shown-hand')].map(h => [h.dataset.seat, h.dataset.cards]))""")
        if self.game == "dou_dizhu":  # the faces add suits to the engine's ranks
            drawn = {int(s): "".join(sorted(c[0] for c in cards.split())) for s, cards in hands.items()}
        else:
            drawn = {int(s): " ".join(sorted(cards.split())) for s, cards in hands.items()}
        assert drawn == deal_hands(self.game, view, deal), (drawn, deal)
        self.summaries += 1

    def check_drawn(self) -> None:
        """The table drawn once the events settled is the server's: the version, every hand's
        size, and every event received was drawn (the queue dropped none)."""
        view = self.client.view(self.table_id)  # hand sizes are public
        drawn = self.page.evaluate("""() => { const t = document.querySelector('#table');
            return { version: t.dataset.version, hand: document.querySelectorAll('.hand-card').length,
              received: Number(t.dataset.received), processed: Number(t.dataset.processed),
              counts: [...document.querySelectorAll('.seat[data-seat] .cards-left')]
                .map(c => [Number(c.closest('.seat').dataset.seat), Number(c.textContent)]) }; }""")
        assert drawn["received"] == drawn["processed"], drawn
        if int(drawn["version"]) != view.version:
            return  # another seat moved out of turn meanwhile: the next look compares
        sizes = list(getattr(view.view, self.game).hand_sizes)
        assert drawn["hand"] == sizes[self.seat], (drawn, sizes)
        assert {s: c for s, c in drawn["counts"]} == {s: sizes[s] for s, _ in drawn["counts"]}, (drawn, sizes)
        self.checked += 1

    def play(self, limit: int = 800, look: Callable[[int], None] | None = None) -> None:
        """Plays to the end; `look(turn)` is called at each of the seat's turns, settled."""
        rng = random.Random(self.seed)
        for _ in range(limit):
            self.page.wait_for_function("""() => { const t = document.querySelector('#table');
                if (document.querySelector('#game-over, #deal-summary')) return true;
                if (!t || document.querySelector('#play[disabled], .move[disabled], #choice')) return false;
                const seat = document.querySelector('#role')?.dataset.seat;
                return JSON.parse(t.dataset.onTurn || '[]').includes(Number(seat))
                  && JSON.parse(t.dataset.legal || '[]').length > 0; }""", timeout=60_000)
            s = self.state()
            if not s["over"] and not s["summary"]:
                self.check_drawn()
                if look:
                    look(self.clicks)
            if s["over"]:
                self.check_summary("#game-over")
                return
            if s["summary"]:
                if self.shots and not self.summaries:
                    self.page.screenshot(path=str(ARTIFACTS / f"summary-{self.shots}.png"))
                self.check_summary("#deal-summary")
                self.page.click("#summary-close")
                continue
            legal: list[str] = s["legal"]
            anytime = [m for m in legal if self.is_out_of_turn(m)]
            if anytime and self.out_of_turn == 0 and self.game == "doppelkopf" and anytime != ["pass"]:
                choice = next(m for m in anytime if m != "pass")  # one announcement: a badge
                self.out_of_turn += 1
            else:
                in_turn = [m for m in legal if not self.is_out_of_turn(m)] or legal
                cards = [m for m in in_turn if move_cards(self.game, m)]
                keep = [m for m in in_turn if m not in ("pass", "draw")]
                choice = rng.choice(cards if cards and rng.random() < 0.8 else keep or in_turn)
            self.make(choice, s["version"])
        raise AssertionError(f"match not over after {limit} moves")

    def is_out_of_turn(self, move: str) -> bool:
        if self.game == "doppelkopf":
            return move == "pass" or move.startswith(("re", "kontra"))
        return (self.game == "dos" and move in ("dos", "catch")) or (
            self.game == "dobro" and move.startswith("call "))

    def make(self, move: str, version: str) -> None:
        page = self.page
        plan = move_cards(self.game, move)
        if plan is None:
            button = page.locator(f'#actions button.move[data-move="{move}"]')
            if not button.count() and page.locator("#anytime-toggle").count():
                page.click("#anytime-toggle")  # the calls folded into one button
            button.click()
        else:
            cards, target = plan
            if page.locator("#clear").count():
                page.click("#clear")
            if target:
                page.locator(f'.target-row button[data-target="{target}"]').first.click()
            for card in cards:
                page.locator(f'.hand-card[data-card="{card}"]:not(.selected)').first.click()
            page.click("#play")
            if page.locator("#choice").count():
                page.click(f'#choice button[data-move="{move}"]')
        self.clicks += 1
        page.wait_for_function(
            "v => document.querySelector('#table')?.dataset.version !== v"
            " || !!document.querySelector('#notice, #game-over, #deal-summary')", arg=version)
        if page.locator("#notice").count():
            self.refused += 1  # another seat's move came first: the table says so, look again

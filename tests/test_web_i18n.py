"""The web client's languages. Without a browser: every English message is in every other
language with the same arguments, and parses as ICU (web/tools/check-catalogues.mjs, through
intl-messageformat, the parser i18next-icu uses); no JSX shows words that do not come from a
catalogue, and every `t("area.key")` names a key English has (web/tools/check-strings.mjs, on
the TypeScript AST). In real Chromium against a real server: the browser's language picks the
client's, the picker changes it live and the choice survives a reload, numbers follow the
language, a missing message is a console error (which fails every browser test), and the rules
pages open from the lobby, in English with a word saying so where no translation exists.
Screenshots go to test-output/browser/i18n-*.png.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from tests.support import REPO, ServerProcess
from tests.web_table_support import ARTIFACTS, CHROMIUM, DIST, VIEWPORTS, Watched, start_stack

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

WEB = REPO / "web"
LANGS = ["fr", "de", "pt", "zh"]
# the lobby's "Play now" button in each language, as the catalogues say it
TAGS = {"en": "en", "fr": "fr", "de": "de", "pt": "pt-PT", "zh": "zh-Hans"}  # <html lang>
PLAY_NOW = {"en": "Play now", "fr": "Jouer", "de": "Jetzt spielen", "pt": "Jogar agora", "zh": "开始游戏"}
# the files whose strings go through t(), by owner area of the client
SOURCES = ["main.tsx", "lobby", "players", "i18n", "rules", "table", "games", "cards"]


def node_tool(script: str, *args: str) -> list[dict[str, Any]]:
    """Runs one of web/tools/*.mjs; its findings, one JSON object a line."""
    node = shutil.which("node")
    if node is None or not (WEB / "node_modules").is_dir():
        pytest.skip("node and web/node_modules needed (cd web && npm ci)")
    done = subprocess.run([node, f"tools/{script}", *args], cwd=WEB, capture_output=True, text=True,
                          timeout=120, check=False)
    found = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert done.returncode == (1 if found else 0), done.stderr
    return found


@pytest.mark.parametrize("lang", LANGS)
def test_every_english_message_is_translated_with_the_same_arguments(lang: str) -> None:
    problems = node_tool("check-catalogues.mjs", lang)
    assert not problems, "\n".join(f"{p['lang']}/{p['area']}.json {p['key']!r}: {p['problem']}" for p in problems)


def test_the_catalogue_check_finds_what_it_is_for(tmp_path: Any) -> None:
    """The checker itself: a copy of the catalogues with a key dropped, an argument renamed, a
    broken plural and a stale key is refused on each count."""
    node = shutil.which("node")
    if node is None or not (WEB / "node_modules").is_dir():
        pytest.skip("node and web/node_modules needed")
    web = tmp_path / "web"
    (web / "tools").mkdir(parents=True)
    shutil.copy(WEB / "tools" / "check-catalogues.mjs", web / "tools")
    (web / "node_modules").symlink_to(WEB / "node_modules")
    shutil.copytree(WEB / "src" / "i18n", web / "src" / "i18n", ignore=shutil.ignore_patterns("*.ts*", "*.css"))
    fr = web / "src" / "i18n" / "fr" / "common.json"
    cat = json.loads(fr.read_text())
    del cat["lobby.join"]
    cat["lobby.page"] = "page {m, number}"
    cat["lobby.playersCount"] = "{n, plural, one {# joueur}"
    cat["no.such"] = "rien"
    fr.write_text(json.dumps(cat))
    done = subprocess.run([node, "tools/check-catalogues.mjs", "--strict", "fr"], cwd=web, capture_output=True, text=True,
                          timeout=120, check=False)
    found = {(p["key"], p["problem"].split(":")[0].split(" {")[0]) for p in map(json.loads, done.stdout.splitlines())
             if p["area"] == "common"}
    assert done.returncode == 1
    assert found >= {("lobby.join", "missing"), ("lobby.page", "arguments"),
                     ("lobby.playersCount", "does not parse as ICU"), ("no.such", "not in the English catalogue (stale)")}


@pytest.mark.parametrize("where", SOURCES)
def test_jsx_shows_no_words_outside_the_catalogues(where: str) -> None:
    found = node_tool("check-strings.mjs", where)
    assert not found, "\n".join(f"{f['file']}:{f['line']} {f['kind']}: {f['text']}" for f in found)


def test_the_string_check_finds_literals_and_unknown_keys(tmp_path: Any) -> None:
    node = shutil.which("node")
    if node is None or not (WEB / "node_modules").is_dir():
        pytest.skip("node and web/node_modules needed")
    web = tmp_path / "web"
    (web / "tools").mkdir(parents=True)
    shutil.copy(WEB / "tools" / "check-strings.mjs", web / "tools")
    (web / "node_modules").symlink_to(WEB / "node_modules")
    (web / "src" / "i18n" / "en").mkdir(parents=True)
    (web / "src" / "i18n" / "en" / "common.json").write_text('{"ok": "Fine", "level.easy": "easy"}')
    (web / "src" / "x.tsx").write_text(
        'const a = <p title="Hello there">Plain words {t("common.ok")} {t("common.nope")} {x ? "Yes" : t("common.ok")}'
        ' {t(`common.level.${l}`)} {t(`common.gone.${l}`)} ←&nbsp;· 3</p>;\n')
    done = subprocess.run([node, "tools/check-strings.mjs"], cwd=web, capture_output=True, text=True, timeout=120,
                          check=False)
    found = sorted((f["kind"], f["text"]) for f in map(json.loads, done.stdout.splitlines()))
    assert found == sorted([("literal", 'title="Hello there"'), ("literal", "Plain words"), ("literal", "Yes"),
                            ("missing-key", "common.nope"), ("missing-key", "common.gone.")])


def test_the_option_words_in_english_are_the_engines_own() -> None:
    """en/options.json holds the label of every table option and the documentation of every
    option not under "Advanced", word for word as the engines give them to ListGames: the
    other languages translate these, and English never drifts from the server."""
    from engines.registry import GAMES

    want: dict[str, str] = {}
    for name, game in GAMES.items():
        for spec in game.info.options:
            want[f"{name}.{spec.name}.label"] = spec.label
            if not spec.advanced:
                want[f"{name}.{spec.name}.doc"] = spec.doc
    have = json.loads((WEB / "src" / "i18n" / "en" / "options.json").read_text())
    assert have == want


# --- in the browser ---------------------------------------------------------------------------

def browser_needed() -> None:
    from pathlib import Path

    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    if not DIST.exists():
        pytest.skip("web client not built (make web)")


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server with its web port and a bot worker (tables watched here are played by bots)."""
    browser_needed()
    server, bots = start_stack(tmp_path_factory.mktemp("web_i18n"))
    yield server
    bots.stop()
    server.stop()


def open_page(browser: Browser, locale: str, viewport: str = "desktop") -> tuple[Any, Watched]:
    context = browser.new_context(viewport=VIEWPORTS[viewport], locale=locale, has_touch=viewport == "phone",
                                  is_mobile=viewport == "phone", device_scale_factor=1)
    page = context.new_page()
    page.set_default_timeout(20_000)
    w = Watched(page)
    page.on("pageerror", lambda e: w.errors.append(f"pageerror: {e}"))
    page.on("console", lambda m: w.errors.append(f"console: {m.text}") if m.type == "error" else None)
    page.on("requestfailed", lambda r: w.errors.append(f"request failed: {r.url}")
            if "StreamTable" not in r.url else None)  # a stream cut by leaving the page, as watched_page
    return context, w


def play_now_text(page: Page) -> str:
    return page.locator("button.play-quick").first.inner_text().strip()


@pytest.mark.e2e
@pytest.mark.browser
@pytest.mark.parametrize("locale,lang", [("fr-FR", "fr"), ("de-DE", "de"), ("zh-CN", "zh"), ("pt-BR", "pt"),
                                         ("en-US", "en"), ("ja-JP", "en")])
def test_the_browser_language_is_the_client_language(web: ServerProcess, browser: Browser, locale: str,
                                                     lang: str) -> None:
    """A browser in French opens the lobby in French (strict: a message missing in French
    would be a console error); a language the client lacks falls back to English."""
    context, w = open_page(browser, locale)
    try:
        w.page.goto(f"{web.web_url}/?i18n=strict")
        w.page.wait_for_selector("button.play-quick")
        assert play_now_text(w.page) == PLAY_NOW[lang]
        assert w.page.evaluate("document.documentElement.lang") == TAGS[lang]
        assert w.page.input_value("#language") == lang
        if lang in ("fr", "zh"):
            w.page.screenshot(path=str(ARTIFACTS / f"i18n-lobby-{lang}.png"), full_page=False)
        w.check()
    finally:
        context.close()


@pytest.mark.e2e
@pytest.mark.browser
@pytest.mark.parametrize("viewport", ["desktop", "phone"])
def test_the_picker_switches_live_and_is_remembered(web: ServerProcess, browser: Browser, viewport: str) -> None:
    context, w = open_page(browser, "en-GB", viewport)
    try:
        page = w.page
        page.goto(f"{web.web_url}/?i18n=strict")
        page.wait_for_selector("button.play-quick")
        assert play_now_text(page) == "Play now"
        page.select_option("#language", "de")
        page.wait_for_function("() => document.querySelector('button.play-quick').textContent === 'Jetzt spielen'")
        assert page.evaluate("document.documentElement.lang") == "de"
        assert page.locator("#create-button").inner_text() == "Erstellen und Platz nehmen"
        page.select_option("#game", "doppelkopf")
        assert page.locator("label[for=option-deals]").inner_text() == "Spiele in der Sitzung"
        assert "Schweine" in page.locator("#option-bistro-doc").inner_text()
        page.screenshot(path=str(ARTIFACTS / f"i18n-lobby-de-{viewport}.png"), full_page=False)
        page.reload()
        page.wait_for_selector("button.play-quick")
        assert play_now_text(page) == "Jetzt spielen"
        assert page.evaluate("localStorage.getItem('croupier.language')") == "de"
        page.select_option("#language", "zh")
        page.wait_for_function("() => document.querySelector('button.play-quick').textContent === '开始游戏'")
        assert page.title() == "Croupier"
        w.check()
    finally:
        context.close()


@pytest.mark.e2e
@pytest.mark.browser
def test_numbers_and_plurals_follow_the_language(web: ServerProcess, browser: Browser) -> None:
    """ICU plurals and Intl numbers, through the client's own `t` (exposed with ?i18n=strict)."""
    context, w = open_page(browser, "en-US")
    try:
        page = w.page
        page.goto(f"{web.web_url}/?i18n=strict")
        page.wait_for_selector("button.play-quick")
        say = "([k, v]) => window.croupierI18n.t(k, v)"
        assert page.evaluate(say, ["common.lobby.playersCount", {"n": 1}]) == "1 player"
        assert page.evaluate(say, ["common.lobby.playersCount", {"n": 4}]) == "4 players"
        assert page.evaluate(say, ["common.lobby.page", {"n": 1234}]) == "page 1,234"
        page.evaluate("() => window.croupierI18n.setLanguage('fr')")
        assert page.evaluate(say, ["common.lobby.playersCount", {"n": 1}]) == "1 joueur"
        assert page.evaluate(say, ["common.lobby.playersCount", {"n": 4}]) == "4 joueurs"
        assert page.evaluate(say, ["common.lobby.page", {"n": 1234}]).replace("\u202f", " ") == "page 1 234"
        page.evaluate("() => window.croupierI18n.setLanguage('pt')")  # European: "0 jogos", not "0 jogo"
        assert page.evaluate(say, ["common.profile.ratedGames", {"n": 0}]) == "0 jogos competitivos"
        assert page.evaluate(say, ["common.profile.ratedGames", {"n": 1}]) == "1 jogo competitivo"
        page.evaluate("() => window.croupierI18n.setLanguage('zh')")
        assert page.evaluate(say, ["common.lobby.playersCount", {"n": 4}]) == "4 名玩家"
        w.check()
    finally:
        context.close()


@pytest.mark.e2e
@pytest.mark.browser
def test_a_missing_message_is_a_console_error(web: ServerProcess, browser: Browser) -> None:
    """Every browser test fails on console errors; a key no catalogue has logs one, and in
    strict mode so does a key the current language lacks."""
    context, w = open_page(browser, "fr-FR")
    try:
        page = w.page
        page.goto(f"{web.web_url}/?i18n=strict")
        page.wait_for_selector("button.play-quick")
        assert not w.errors
        page.evaluate("() => window.croupierI18n.t('common.no.such.message')")
        assert any("common.no.such.message" in e for e in w.errors), w.errors
    finally:
        context.close()


@pytest.mark.e2e
@pytest.mark.browser
@pytest.mark.parametrize("viewport", ["desktop", "phone"])
def test_rules_open_from_the_lobby_and_say_when_they_are_in_english(web: ServerProcess, browser: Browser,
                                                                    viewport: str) -> None:
    context, w = open_page(browser, "en-US", viewport)
    try:
        page = w.page
        page.goto(web.web_url)
        page.locator(".play-game[data-game=dou_dizhu] a.play-rules").click()
        page.wait_for_selector("#rules[data-game=dou_dizhu] .rulebook h2")
        assert "#/rules/dou_dizhu" in page.url
        assert page.locator(".rulebook h1").inner_text().startswith("Dou Dizhu")
        assert page.locator("#rules-in-english").count() == 0
        page.screenshot(path=str(ARTIFACTS / f"i18n-rules-{viewport}.png"), full_page=False)
        width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], f"horizontal scroll: {width}"
        # Dou Dizhu's rulebook is written in Chinese: shown as it is, with the games' own words
        page.select_option("#language", "zh")
        page.wait_for_selector("#rules[data-shown=zh] .rulebook h1")
        assert page.locator(".rulebook h1").inner_text().startswith("斗地主")
        assert page.locator("#rules-in-english").count() == 0
        book = page.locator(".rulebook").inner_text()
        assert all(word in book for word in ("地主", "农民", "炸弹", "王炸", "不出"))
        assert page.locator(".rules-tab[href='#/rules/dou_dizhu']").inner_text() == "斗地主"
        page.screenshot(path=str(ARTIFACTS / f"i18n-rules-zh-{viewport}.png"), full_page=False)
        # Doppelkopf's is not: the English one, and a line in Chinese that says so
        page.locator(".rules-tab[href='#/rules/doppelkopf']").click()
        page.wait_for_selector("#rules[data-game=doppelkopf][data-shown=en] .rulebook h2")
        assert "英文" in page.locator("#rules-in-english").inner_text()
        page.goto(f"{web.web_url}/#/rules/nonsense")
        page.wait_for_selector("#rules-unknown")
        w.check()
    finally:
        context.close()


# a table of each game watched in a language other than English, while bots play it
TABLES = [("zh", "dou_dizhu"), ("de", "doppelkopf"), ("fr", "dobro"), ("pt", "sobe_e_desce"), ("fr", "dos")]


@pytest.mark.e2e
@pytest.mark.browser
@pytest.mark.parametrize("lang,game", TABLES)
def test_a_table_watched_in_another_language_misses_no_message(web: ServerProcess, browser: Browser, lang: str,
                                                               game: str) -> None:
    """Strict mode: every message the table page and the game's module show while bots play
    is in the language's catalogues (a missing one is a console error)."""
    context, w = open_page(browser, "en-US", "phone" if lang == "zh" else "desktop")
    try:
        page = w.page
        page.goto(f"{web.web_url}/?i18n=strict&lang={lang}")
        page.wait_for_selector("#create-watch")
        page.select_option("#game", game)
        page.click("#create-watch")
        page.wait_for_selector("#table[data-version]")
        page.wait_for_timeout(4000)  # a few moves by the bots, their words in the log
        assert page.evaluate("document.documentElement.lang") == TAGS[lang]
        if game == "dobro":  # what the last move says is composed here, not the server's English
            said = page.locator(".centre-dobro .announcement").inner_text(timeout=20_000)
            assert "card(s)" not in said and "value" not in said, said
            assert any(w in said for w in ("valeur", "passe", "pioche", "tour", "Oubli")), said
        page.screenshot(path=str(ARTIFACTS / f"i18n-table-{game}-{lang}.png"), full_page=False)
        w.check()
    finally:
        context.close()


# rulebooks written in a language, with the games' own words in it
RULEBOOKS = [("zh", "dou_dizhu", ["地主", "农民", "不出", "炸弹", "王炸", "春天"]),
             ("de", "doppelkopf", ["Stich", "Trumpf", "Re", "Kontra", "Ansage", "Hochzeit", "Fuchs"]),
             ("pt", "sobe_e_desce", ["vaza", "trunfo", "RISCOS", "bisca"]),
             ("fr", "dobro", ["enchère", "pioche", "carte Oubli", "manche"])]


@pytest.mark.e2e
@pytest.mark.browser
@pytest.mark.parametrize("lang,game,words", RULEBOOKS)
def test_a_translated_rulebook_is_shown_in_its_language(web: ServerProcess, browser: Browser, lang: str, game: str,
                                                       words: list[str]) -> None:
    context, w = open_page(browser, "en-US", "phone")
    try:
        page = w.page
        page.goto(f"{web.web_url}/?i18n=strict&lang={lang}#/rules/{game}")
        page.wait_for_selector(f"#rules[data-shown={lang}] .rulebook h2")
        assert page.locator("#rules-in-english").count() == 0
        book = page.locator(".rulebook").inner_text()
        assert [x for x in words if x not in book] == []
        w.check()
    finally:
        context.close()

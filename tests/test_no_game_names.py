"""Outside each game's own modules no code names a game: generic code reads what it needs of
a game from the engine contract (`GameInfo`, `OptionSpec`, ListGames), so that adding a game
touches only the places docs/adding-a-game.md lists.

A game's own modules are the files and folders named after it (the engine package
engines/<game>/, its environment codec engines/envs/<game>.py, its heuristics
bots/heuristics/<game>.py, its terminal renderer render/<game>.py, its web module
web/src/games/<game>.tsx); each may name its own game and no other. Tests, rulebooks, docs and
protos are the game's own too and are not searched. bench/ is not searched: a benchmark
measures named games at chosen positions, as a test does.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from engines.registry import ENGINES

REPO = Path(__file__).resolve().parent.parent
SEARCHED = ("engines", "service", "clients", "bots", "web/src")
SKIPPED = ("web/src/gen/",)  # generated from protos/
# name -> how code spells it: engine names, titles, camelCase, short forms
SPELLINGS = {
    "dou_dizhu": r"dou[_ -]?dizhu",
    "doppelkopf": r"doppelkopf|doko",
    "dobro": r"dobro",
    "dos": r"(?<![a-z])dos(?![a-z])",
    "sobe_e_desce": r"sobe[_ -]?e[_ -]?desce",
}
# the only places outside a game's modules that may name games, each for a reason
ALLOWED = {
    # the registry of engines: the one list of the games the service offers
    "engines/registry.py",
    # the registry of the web game modules: imports each game's module to list it
    "web/src/games/index.ts",
    # the registry of the rulebooks: imports each game's rulebook (seeds/<game>*.md) lazily
    "web/src/rules/docs.ts",
}
# the web client's message catalogues are words, the games' own words among them (docs, not code)
CATALOGUE = re.compile(r"^web/src/i18n/[a-z]{2}/[a-z]+\.json$")


def owner(path: str) -> str | None:
    """The game whose own module `path` is (a file or folder named after it), else None."""
    parts = [re.sub(r"[^a-z]", "", Path(p).stem.lower()) for p in path.split("/")]
    for game in ENGINES:
        if game.replace("_", "") in parts:
            return game
    return None


def hits() -> list[str]:
    files = subprocess.run(["git", "ls-files", "--", *SEARCHED], cwd=REPO, check=True,
                           capture_output=True, text=True).stdout.split()
    out = []
    for path in files:
        if path.startswith(SKIPPED) or path in ALLOWED or CATALOGUE.match(path) or not (REPO / path).is_file():
            continue
        mine = owner(path)
        text = (REPO / path).read_text(errors="replace")
        for n, line in enumerate(text.splitlines(), 1):
            for game, pattern in SPELLINGS.items():
                if game != mine and re.search(pattern, line, re.IGNORECASE):
                    out.append(f"{path}:{n}: names {game}: {line.strip()[:100]}")
    return out


def test_the_spellings_cover_every_registered_game() -> None:
    assert set(SPELLINGS) == set(ENGINES)
    assert all(owner(f"x/{game}.py") == game for game in ENGINES)


def test_no_code_outside_a_games_modules_names_a_game() -> None:
    found = hits()
    assert not found, "generic code names a game:\n" + "\n".join(found)


def test_every_game_fills_the_places_docs_adding_a_game_lists() -> None:
    """Each `<game>` path the guide names exists for every registered game (a web module under
    its camelCase name), so the guide lists places games really fill."""
    guide = (REPO / "docs" / "adding-a-game.md").read_text()
    places = sorted(set(re.findall(r"`([^`\s]*<game>[^`\s]*)`", guide)))
    assert len(places) >= 8, places
    for game in ENGINES:
        camel = re.sub(r"_(\w)", lambda m: m.group(1).upper(), game)
        for place in places:
            if "/" not in place or place.endswith("_support.py"):  # a name; shared helpers
                continue
            path = place.replace("<game>", camel if place.startswith("web/") else game)
            assert list(REPO.glob(path.rstrip("/"))), f"{game} has no {path}"

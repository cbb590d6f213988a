"""The names of the built-in bot levels, without the levels themselves.

The server checks seat requests and API-key roles against these names, and an SDK bot checks
its entrant name against them, neither loading the search and heuristics that play the levels
(`bots.levels`, whose table must name exactly these; a test holds them equal).
"""

from __future__ import annotations

# weakest first, as frontends list them
LEVEL_NAMES: tuple[str, ...] = ("random", "heuristic", "easy", "medium", "hard", "expert")

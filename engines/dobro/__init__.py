"""Dobro: auctions where equalling the value in play doubles it; fewest cards collected wins.

>>> from engines.dobro import GAME
>>> s = GAME.new_game(4, {"opener": 1}, seed="doc")
>>> sorted(GAME.to_act(s))
[1]
>>> "pass" in [m.text for m in GAME.legal_moves(s, 1)]  # the opener may not pass
False
"""

from engines.dobro.game import GAME, Dobro, DobroState
from engines.dobro.moves import Move, parse_move

__all__ = ["GAME", "Dobro", "DobroState", "Move", "parse_move"]

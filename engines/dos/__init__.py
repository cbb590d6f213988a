"""Dos: 2 to 4 players match numbers (not colours) on a centre row of cards.

>>> from engines.dos import GAME
>>> s = GAME.new_game(2, {}, seed="doc")
>>> GAME.to_act(s) == {s.current}
True
>>> "draw" in [m.text for m in GAME.legal_moves(s, s.current)]
True
"""

from engines.dos.game import GAME, Dos, DosState
from engines.dos.moves import Move, parse_move

__all__ = ["GAME", "Dos", "DosState", "Move", "parse_move"]

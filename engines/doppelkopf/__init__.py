"""Doppelkopf: four players, Re (the club queens) against Kontra, with solos and marriages.

>>> from engines.doppelkopf import GAME
>>> s = GAME.new_game(4, {"dealer": 3}, seed="doc")
>>> sorted(GAME.to_act(s))
[0]
>>> [m.text for m in GAME.legal_moves(s, 0)]
['healthy', 'reservation']
"""

from engines.doppelkopf.game import GAME, Doppelkopf, DoppelkopfState, deck_from_hands
from engines.doppelkopf.moves import Move, parse_move

__all__ = ["GAME", "Doppelkopf", "DoppelkopfState", "Move", "deck_from_hands", "parse_move"]

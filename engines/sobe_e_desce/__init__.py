"""Sobe e Desce ("up and down"): four players, each for himself, five tricks a deal, scores
running down from 20; the first at 0 wins.

>>> from engines.sobe_e_desce import GAME
>>> s = GAME.new_game(4, {"dealer": 3}, seed="doc")
>>> sorted(GAME.to_act(s))
[0]
>>> [m.text for m in GAME.legal_moves(s, 0)]
['trump c', 'trump d', 'trump h', 'trump s', 'turn']
"""

from engines.sobe_e_desce.game import GAME, SobeEDesce, SobeEDesceState
from engines.sobe_e_desce.moves import Move, parse_move

__all__ = ["GAME", "Move", "SobeEDesce", "SobeEDesceState", "parse_move"]

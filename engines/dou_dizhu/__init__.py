"""Dou Dizhu (Fight the Landlord): three players, landlord against two farmers.

>>> from engines.dou_dizhu import GAME
>>> s = GAME.new_game(3, {}, seed="doc")
>>> sorted(GAME.to_act(s)) == [s.face_up_holder]
True
>>> [m.text for m in GAME.legal_moves(s, s.face_up_holder)]
['pass', 'bid 1', 'bid 2', 'bid 3']
"""

from engines.dou_dizhu.game import GAME, DouDizhu, DouDizhuState
from engines.dou_dizhu.moves import Move, parse_move

__all__ = ["GAME", "DouDizhu", "DouDizhuState", "Move", "parse_move"]

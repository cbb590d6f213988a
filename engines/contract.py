"""The one contract every game engine fulfils.

Engines are stateless: every method is a pure function of its arguments. The service keeps
each table's state as bytes (`encode`) and calls the engine for every move; bots call
`legal_moves` / `apply` millions of times, so engines keep their states in fast private
representations and expose only this plain API.

Errors: a malformed option or move text raises `ValueError` (the service answers
INVALID_ARGUMENT); a well-formed move that the rules forbid raises `IllegalMove`
(FAILED_PRECONDITION). Either way nothing changes: states are never mutated.
"""

from __future__ import annotations

import argparse
import enum
import json
import random
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from google.protobuf.message import Message

State = TypeVar("State")
MoveT = TypeVar("MoveT")
ViewT = TypeVar("ViewT", bound=Message)  # the game's View message


class MoveRule(enum.StrEnum):
    """The kinds of rule a refused move breaks, as engines tell them apart. The service sends
    the kind as the refusal's reason code, so that a client can say it in its player's words;
    the API documentation lists each with the parameters that come with it."""

    ILLEGAL_MOVE = "ILLEGAL_MOVE"  # a rule the engine names in words only
    NOT_YOUR_TURN = "NOT_YOUR_TURN"
    CARD_NOT_IN_HAND = "CARD_NOT_IN_HAND"
    WRONG_PHASE = "WRONG_PHASE"  # a move of another part of the deal (a bid while playing)
    MUST_FOLLOW_SUIT = "MUST_FOLLOW_SUIT"  # suit: the suit led ("trump" where trumps were)
    MUST_TRUMP = "MUST_TRUMP"
    MUST_OVERTRUMP = "MUST_OVERTRUMP"
    MUST_LEAD_TRUMP_ACE = "MUST_LEAD_TRUMP_ACE"
    MUST_BEAT = "MUST_BEAT"  # to_beat: the play on the table (public)
    BID_TOO_LOW = "BID_TOO_LOW"  # bid: the current bid
    MAY_NOT_PASS = "MAY_NOT_PASS"
    ANNOUNCEMENT_NOT_ALLOWED = "ANNOUNCEMENT_NOT_ALLOWED"
    DECLARATION_NOT_ALLOWED = "DECLARATION_NOT_ALLOWED"
    DRAW_NOT_ALLOWED = "DRAW_NOT_ALLOWED"
    END_TURN_NOT_ALLOWED = "END_TURN_NOT_ALLOWED"  # owed: bonus cards still to place
    NOT_A_MATCH = "NOT_A_MATCH"
    NO_BONUS_OWED = "NO_BONUS_OWED"
    CALL_NOT_ALLOWED = "CALL_NOT_ALLOWED"
    STOCK_TOO_SMALL = "STOCK_TOO_SMALL"  # stock: the cards left in the stock


class IllegalMove(Exception):
    """A well-formed move that the rules do not allow now; the message says why, `rule` says
    which kind of rule (a code clients translate) and `params` what a translation may quote.
    Params are public facts only (a suit led, the play to beat, a count): never a card of a
    hand, not even the mover's own, so that a code and its params may go anywhere."""

    def __init__(
        self, message: str, rule: MoveRule = MoveRule.ILLEGAL_MOVE, **params: str | int
    ) -> None:
        super().__init__(message)
        self.rule = rule
        self.params = params


def _shown(value: Any) -> str:
    """A refused value as an error message quotes it: at most 40 characters."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:37]}..."


@dataclass(frozen=True)
class OptionSpec:
    """One table option: its type, default and bounds, as ListGames shows them."""

    name: str
    type: str  # "int", "bool", "string" or "cards"
    default: Any
    doc: str
    min: int | None = None
    max: int | None = None
    label: str = ""  # a few words a person reads in a form; default: the name in words
    advanced: bool = False  # fixed decks, seats, limits: folded away in a form
    aliases: tuple[str, ...] = ()  # older names new_game still accepts for this option

    @property
    def title(self) -> str:
        """The label, or the name in words where the game gives none."""
        return self.label or self.name.replace("_", " ")

    @property
    def secret(self) -> bool:
        """A card order (`deck`): whoever reads it knows every hand, so tables leave it out
        of what they show (`public_options`)."""
        return self.type == "cards"

    def check(self, value: Any) -> Any:
        """The value converted to the option's type, or ValueError saying what is wrong."""
        must = f"option {self.name!r} must be"
        got = f"got {_shown(value)}"
        if self.type == "int":
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"{must} an integer, {got}")
            if isinstance(value, float):
                if not value.is_integer():
                    raise ValueError(f"{must} an integer, {got}")
                value = int(value)
            if self.min is not None and value < self.min:
                raise ValueError(f"{must} at least {self.min}, {got}")
            if self.max is not None and value > self.max:
                raise ValueError(f"{must} at most {self.max}, {got}")
            return value
        if self.type == "bool":
            if not isinstance(value, bool):
                raise ValueError(f"{must} true or false, {got}")
            return value
        if not isinstance(value, str):
            raise ValueError(f"{must} a string, {got}")
        return value


def public_options(specs: Iterable[OptionSpec], options: Mapping[str, Any]) -> dict[str, Any]:
    """A table's options as anyone may read them: without its secret ones (a card order that
    fixes the deal). Not even a digest of one is shown: an unsalted digest of a deck lets
    whoever guesses the cards check the guess. `fixes_cards` says whether one was given; the
    record exported after the end holds the value itself.

    >>> spec = OptionSpec("deck", "cards", "", "the card order")
    >>> public_options([spec], {"deck": "3s 4s", "rounds": 2})
    {'rounds': 2}
    """
    secret = {spec.name for spec in specs if spec.secret}
    return {k: v for k, v in options.items() if k not in secret}


def fixes_cards(specs: Iterable[OptionSpec], options: Mapping[str, Any]) -> bool:
    """Whether the options fix the cards (a non-empty secret option such as `deck`): the
    plain fact is public, the cards are not.

    >>> spec = OptionSpec("deck", "cards", "", "the card order")
    >>> fixes_cards([spec], {"deck": "3s 4s"}), fixes_cards([spec], {"deck": ""})
    (True, False)
    """
    return any(spec.secret and options.get(spec.name) for spec in specs)


def parse_option(text: str) -> tuple[str, Any]:
    """`NAME=VALUE` as the command lines take a game option: VALUE read as JSON when it is
    (numbers, true/false, lists), else as text. ValueError without a `=` or a name.

    >>> parse_option("deals=1"), parse_option("bistro=true"), parse_option("deck=Ac Ts")
    (('deals', 1), ('bistro', True), ('deck', 'Ac Ts'))
    """
    name, sep, raw = text.partition("=")
    if not sep or not name.strip():
        raise ValueError(f"expected NAME=VALUE, got {text!r}")
    try:
        return name.strip(), json.loads(raw)
    except ValueError:
        return name.strip(), raw


def option_argument(text: str) -> tuple[str, Any]:
    """`parse_option` for argparse's `type=` (`--option NAME=VALUE` of every command line)."""
    try:
        return parse_option(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def canonical_options(specs: Iterable[OptionSpec], options: Mapping[str, Any]) -> dict[str, Any]:
    """`options` with every alias replaced by its option's name (an older spelling kept for
    old records and scripts); ValueError when one option is given under two names.

    >>> spec = OptionSpec("deals", "int", 3, "deals in the match", aliases=("rounds",))
    >>> canonical_options([spec], {"rounds": 2})
    {'deals': 2}
    """
    out = dict(options)
    for spec in specs:
        for alias in spec.aliases:
            if alias not in out:
                continue
            if spec.name in out:
                raise ValueError(
                    f"option {spec.name!r} given twice, also as {alias!r} (its older name): "
                    "give one"
                )
            out[spec.name] = out.pop(alias)
    return out


def check_options(specs: tuple[OptionSpec, ...], options: Mapping[str, Any]) -> dict[str, Any]:
    """Options with defaults filled in, aliases under their option's name; ValueError on an
    unknown name, a name given twice or a bad value."""
    options = canonical_options(specs, options)
    known = {spec.name: spec for spec in specs}
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValueError(
            f"unknown option(s) {', '.join(map(repr, unknown))}; known: {', '.join(known) or 'none'}"
        )
    out: dict[str, Any] = {}
    for name, spec in known.items():
        out[name] = spec.check(options[name]) if name in options else spec.default
    return out


@dataclass(frozen=True)
class Result:
    """Scores so far: match totals, the last finished deal, and the winners once over."""

    totals: tuple[int, ...]
    last_deal: tuple[int, ...]
    finished: bool
    winners: tuple[int, ...] = ()
    deals_played: int = 0


@dataclass(frozen=True)
class Bounds:
    """What the rules bound in a match of given options, as learning and search code needs it
    (OpenSpiel's utility range and longest game): the tightest simple bounds that hold for
    every play, derived by each game from its rules."""

    deals: int  # the most deals (rounds) the match plays: 1 makes its rewards come at its end
    lowest: float  # the lowest return (match total) of any seat
    highest: float  # the highest
    moves: int  # the most moves (decisions, chance excluded; out-of-turn calls excepted)


BoundsOf = Callable[[int, Mapping[str, Any]], Bounds]
"""A game's bounds for a player count and full (checked) options."""

DuplicateDeal = Callable[[int, Mapping[str, Any], random.Random], dict[str, Any]]
"""A game's fixed deal for duplicate play: given the player count, the options and a random
source, the options that fix every card and the dealer (its `deck` option and the like),
drawn only from that source, so that every seating of one deal gets the same hands."""


@dataclass(frozen=True)
class GameInfo:
    """Every fact about a game that code outside its package needs (as OpenSpiel's game type
    and game info): generic code reads these instead of naming games. ListGames serves the
    plain ones."""

    name: str
    title: str
    min_players: int
    max_players: int
    options: tuple[OptionSpec, ...]
    notation: str = ""
    view_field: str = field(default="")  # the field of croupier.v1.GameView holding its view
    # match totals always sum to zero (for every play of every option)
    zero_sum: bool = False
    # the options that make a match one deal (an episode of the environments, a duplicate
    # table of a tournament); empty where every match is one deal
    one_deal: Mapping[str, Any] = field(default_factory=dict, compare=False)
    bounds: BoundsOf | None = None
    duplicate_deal: DuplicateDeal | None = None


class Game(ABC, Generic[State, MoveT, ViewT]):
    """A game engine. Subclasses are stateless singletons registered in `engines.registry`."""

    info: GameInfo

    # --- set-up -------------------------------------------------------------------------
    @abstractmethod
    def new_game(self, players: int, options: Mapping[str, Any], seed: str) -> State:
        """A new match; `options` validated (ValueError), randomness only from `seed`."""

    def checked_options(self, players: int, options: Mapping[str, Any]) -> dict[str, Any]:
        """What every `new_game` checks first: a player count the game is played by, and the
        options (defaults filled in); ValueError saying what is wrong."""
        info = self.info
        lo, hi = info.min_players, info.max_players
        if isinstance(players, bool) or not isinstance(players, int) or not lo <= players <= hi:
            by = f"exactly {lo}" if lo == hi else f"{lo} to {hi}"
            raise ValueError(f"{info.title} is played by {by} players, not {players}")
        return check_options(info.options, options)

    def seat_kinds(self, players: int, options: Mapping[str, Any]) -> tuple[str, ...] | None:
        """The part each seat plays under these (valid) options: "human" (a person's) or "bot"
        (a computer's); None when any seat may be either. A new table's seats get these kinds
        by default; a computer's seat must be a bot seat (a bot may play a person's part)."""
        return None

    # --- play ---------------------------------------------------------------------------
    @abstractmethod
    def to_act(self, state: State) -> frozenset[int]:
        """Seats that may move now; empty once the match is over."""

    def on_turn(self, state: State) -> frozenset[int]:
        """The seats the game waits for: a subset of `to_act`, empty once the match is over.
        The other seats of `to_act` may act (announce, call a forgetting) but need not, so a
        turn timer runs for these alone. Games where every seat that may act must act keep
        this default."""
        return self.to_act(state)

    @abstractmethod
    def legal_moves(self, state: State, seat: int) -> Sequence[MoveT]:
        """Every move `seat` may make now (empty if it may not act); do not mutate it."""

    @abstractmethod
    def apply(self, state: State, seat: int, move: MoveT) -> State:
        """The state after the move; IllegalMove if the rules forbid it. Never mutates."""

    def is_over(self, state: State) -> bool:
        return not self.to_act(state)

    # --- notation -----------------------------------------------------------------------
    def format_move(self, move: MoveT) -> str:
        """Canonical notation; `parse_move(format_move(m)) == m`. By default the move's str,
        its notation for moves of engines.interned."""
        return str(move)

    @abstractmethod
    def parse_move(self, text: str) -> MoveT:
        """A move from its notation; ValueError saying what is malformed."""

    def redact(self, state: State, seat: int, move: MoveT, observer: int | None) -> str:
        """The move as `observer` may see it when `seat` plays it in `state` (hidden parts masked)."""
        return self.format_move(move)

    # --- knowledge ----------------------------------------------------------------------
    @abstractmethod
    def view(self, state: State, seat: int | None) -> ViewT:
        """Exactly what `seat` (None: a spectator) may know, as the game's View message."""

    @abstractmethod
    def sample(self, view: ViewT, rng: random.Random) -> State:
        """A full state consistent with `view`: `view(sample(v), v.seat) == v`."""

    def replay(self, state: State) -> Iterator[tuple[State, int, MoveT]] | None:
        """The moves of the deal in progress, each with the state it was made in, as the hidden
        cards of this full state imply them; None where the game cannot rebuild them (cards
        drawn since the deal leave earlier hands unknown).

        Bots weigh sampled worlds by how well a model of the players explains these moves:
        a world in which the others would not have played as they did is an unlikely one.
        """
        return None

    # --- fair dealing -------------------------------------------------------------------
    def shuffles(self, state: State) -> tuple[int, ...]:
        """Which shuffle the hidden cards come from: changes exactly when the engine deals,
        re-deals or reshuffles a pile, never on a plain move. The service commits to the cards
        (`dealt`) each time it changes (engines.commitments). Default: one per deal."""
        return (self.deal_number(state),)

    def dealt(self, state: State) -> str:
        """Every place's cards in `state`, as its last shuffle left them, in the game's card
        notation: one line per seat (`seat N: ...`), then one per other place, hidden or not
        (a kitty, a row, a draw pile top first). Called right after a shuffle, it is the deal
        the service commits to; '' for a game without cards to commit to."""
        return ""

    # --- outcome ------------------------------------------------------------------------
    @abstractmethod
    def result(self, state: State) -> Result:
        """Per-seat scores of the last deal and of the match."""

    @abstractmethod
    def deal_number(self, state: State) -> int:
        """0-based deal of the match in progress; bots search to the end of a deal."""

    @abstractmethod
    def num_players(self, state: State) -> int: ...

    @abstractmethod
    def partners(self, state: State, seat: int) -> frozenset[int]:
        """Seats sharing `seat`'s reward in this deal as far as is public (itself included)."""

    def census(self, state: State) -> Counter[str] | None:
        """Every card of the game counted over all its places (hands, piles, tricks), or None.

        The property kit checks it never changes during a deal: no card is created or lost.
        """
        return None

    # --- storage ------------------------------------------------------------------------
    @abstractmethod
    def encode(self, state: State) -> bytes:
        """The game's State protobuf message, serialized; `decode(encode(s)) == s`."""

    @abstractmethod
    def decode(self, data: bytes) -> State:
        """ValueError if the bytes are not a state of this game."""

    @contextmanager
    def decoding(self) -> Iterator[None]:
        """Around the body of `decode`: whatever malformed bytes raise (protobuf's DecodeError,
        a bad card text, a missing field) becomes ValueError("not a <title> state: ...")."""
        try:
            yield
        except (ValueError, IndexError, TypeError, KeyError) as exc:
            raise ValueError(f"not a {self.info.title} state: {exc}") from None
        except Exception as exc:  # protobuf's DecodeError: its text says nothing more
            raise ValueError(f"not a {self.info.title} state: {type(exc).__name__}") from None

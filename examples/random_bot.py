"""A complete Croupier bot: plays a random legal move at every seat reserved for its entrant.

Run it from the repository (after `make setup`), against a server with a table that has a
seat reserved for the entrant (SeatSpec{kind: BOT, entrant: "my-random"}):

    .venv/bin/python examples/random_bot.py --server 127.0.0.1:50051 --entrant my-random \
        [--key API_KEY]

Ctrl-C stops it cleanly: the seats of unfinished tables are given back.
"""

import argparse
import random
import sys

from croupier.v1.croupier_pb2 import TableView

from bots import sdk


class RandomBot(sdk.Bot):
    blocking = False  # it thinks for no time: no thread needed

    def choose(self, view: TableView, legal_moves: list[str], time_left: float) -> str:
        return random.choice(legal_moves)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="a random bot for Croupier")
    parser.add_argument("--server", default="127.0.0.1:50051")
    parser.add_argument("--entrant", required=True, help="the entrant name to play as")
    # the key (role entrant:<name>) from env CROUPIER_API_KEY or a file, never argv
    parser.add_argument("--key-file", default="", help="a file holding the API key")
    args = parser.parse_args()
    sys.exit(sdk.run(RandomBot, args.server, args.entrant, key_file=args.key_file))

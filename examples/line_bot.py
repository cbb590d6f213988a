#!/usr/bin/env python3
"""A Croupier bot for `croupier bot-bridge` in plain Python (standard library only):

    croupier bot-bridge --entrant alice -- python3 examples/line_bot.py [--shared] [--first]

It says hello, then answers every "decide" line with a legal move: a random one (--first: the
first listed). The bridge sends one JSON object per line on stdin and reads one per line on
stdout; what goes to stderr lands in the bridge's log. docs/bots.md has every line's schema.
"""

import json
import random
import sys


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()  # a pipe is block-buffered: without this the bridge waits in vain


def main() -> None:
    shared = "--shared" in sys.argv
    first = "--first" in sys.argv
    send({"hello": "croupier-bot/1", "name": "python line example",
          "mode": "shared" if shared else "per-seat"})
    for line in sys.stdin:  # ends when the bridge closes stdin: time to exit
        message = json.loads(line)
        if message["type"] == "decide":
            moves = message["legal_moves"]
            send({"id": message["id"], "move": moves[0] if first else random.choice(moves)})
        elif message["type"] == "seat":
            print(f"seat {message['seat']} of {message['game']} table {message['table']}",
                  file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()

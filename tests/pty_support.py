"""`croupier play GAME` driven through a pseudo-terminal: one loop for every game's test.

Each test says how to answer a prompt (from the listed legal moves) and what the screen must
show; this module does the spawning, the prompting, an optional malformed first move and the
clean-up, and hands back what a person would have read."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pexpect

from tests.bot_support import CROUPIER, child_env

PROMPT = r"Your move \((?:1|1-\d+) or notation, \? to list\): "


@dataclass
class PtyPlay:
    text: str  # everything shown, styles dropped, lines ending in \n
    prompts: int  # how many times the person was asked for a move
    refusal: str  # the reason given for the malformed first move ("" if none was sent)
    exitstatus: int | None

    def final_scores(self) -> list[tuple[str, int]]:
        """(seat, total) of the "Final scores" block, in seat order."""
        final = self.text[self.text.index("Final scores") :]
        return [(s, int(v)) for s, v in re.findall(r"seat (\d) \((?:you|bot)\): ([+-]\d+)", final)]


def play_in_pty(
    address: str,
    game: str,
    args: Sequence[str],
    transcript: Path,
    answer: Callable[[int, str], str],
    malformed: str = "",
    width: int = 120,
    max_prompts: int = 200,
) -> PtyPlay:
    """Plays `croupier play GAME --server ADDRESS --name tester ARGS` to its end.

    `answer(prompts, listed)` gives the line to type at the n-th prompt, from the text after
    "Legal moves:". With `malformed`, that line is typed first and must be refused (the
    server's reason is kept), then the prompt comes again."""
    child = pexpect.spawn(
        CROUPIER,
        ["play", game, "--server", address, "--name", "tester", *args],
        env=child_env(NO_COLOR="1", TERM="xterm"),
        encoding="utf-8",
        timeout=30,
        dimensions=(50, width),
    )
    output: list[str] = []
    prompts = 0
    refusal = ""
    with transcript.open("w") as log:
        child.logfile_read = log
        try:
            while child.expect([PROMPT, pexpect.EOF]) == 0:
                output.append(child.before)
                prompts += 1
                if prompts == 1 and malformed:
                    child.sendline(malformed)
                    child.expect(r"Refused: (.+?)\r?\n")
                    refusal = child.match.group(1)
                    child.expect(PROMPT)
                    output.append(child.before)
                listed = child.before[child.before.rfind("Legal moves:") :]
                child.sendline(answer(prompts, listed))
                assert prompts < max_prompts, f"{game}: the match does not end"
            output.append(child.before)
        finally:
            child.close()
    # Styles stay on with NO_COLOR (bold, dim): drop them to read the text as a person does.
    text = re.sub(r"\x1b\[[0-9;]*m", "", "".join(output)).replace("\r\n", "\n")
    return PtyPlay(text, prompts, refusal, child.exitstatus)

"""`croupier play GAME` driven through a pseudo-terminal: one loop for every game's test.

Each test says how to answer a prompt (from the listed legal moves) and what the screen must
show; this module does the spawning, the prompting, an optional malformed first move and the
clean-up, and hands back what a person would have read.

The terminal shows the table's events as they come, also while it waits for a move, and then
shows its prompt again below them: so after each answer this waits for what became of it (the
move's own line, or a refusal) before it takes the next prompt as a new question."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pexpect

from tests.bot_support import CROUPIER, REPO, child_env

PROMPT = r"Your move \((?:Enter for [^\r\n]+?, #1|#1-#\d+) or notation, \? to list\): "
OWN_MOVE = r"\n(?:\x1b\[[0-9;]*m)*seat \d+ \(you\): [^\r\n]*\r?\n"  # styles stay on
REFUSED = r"Refused: ([^\r\n]+)\r?\n"


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


def last_list(shown: str) -> str:
    """The last list of legal moves on the screen: from "Legal moves:" to the line after it
    that is not an entry (the optional moves, the prompt)."""
    block = re.sub(r"\x1b\[[0-9;]*m", "", shown[shown.rfind("Legal moves:") :])
    lines = block.replace("\r\n", "\n").split("\n")
    entries = [lines[0]]
    for line in lines[1:]:
        if not re.match(r"\s*#\d+\) ", line):
            break
        entries.append(line)
    return "\n".join(entries)


def play_in_pty(
    address: str,
    game: str,
    args: Sequence[str],
    transcript: Path,
    answer: Callable[[int, str], str],
    malformed: str = "",
    width: int = 120,
    max_prompts: int = 200,
    command: Sequence[str] = (CROUPIER,),
) -> PtyPlay:
    """Plays `croupier play GAME --server ADDRESS --name tester ARGS` to its end (`command`
    in place of `croupier`: a script that wraps the client, say).

    `answer(prompts, listed)` gives the line to type at the n-th prompt, from the text after
    "Legal moves:". With `malformed`, that line is typed first and must be refused (the
    server's reason is kept), then the prompt comes again."""
    child = pexpect.spawn(
        command[0],
        [*command[1:], "play", game, "--server", address, "--name", "tester", *args],
        cwd=str(REPO),
        env=child_env(NO_COLOR="1", TERM="xterm"),
        encoding="utf-8",
        timeout=30,
        dimensions=(50, width),
    )
    output: list[str] = []
    prompts = 0
    refusal = ""

    def outcome() -> None:
        # what became of the line just typed: prompts shown again meanwhile are not questions
        if child.expect([OWN_MOVE, REFUSED, pexpect.EOF]) != 2:
            output.append(child.before + child.after)
        else:
            output.append(child.before)

    with transcript.open("w") as log:
        child.logfile_read = log
        try:
            while child.expect([PROMPT, pexpect.EOF]) == 0:
                output.append(child.before + child.after)
                prompts += 1
                if prompts == 1 and malformed:
                    child.sendline(malformed)
                    child.expect(REFUSED)
                    refusal = child.match.group(1)
                    output.append(child.before + child.after)
                    child.expect(PROMPT)
                    output.append(child.before + child.after)
                listed = last_list("".join(output))
                child.sendline(answer(prompts, listed))
                outcome()
                assert prompts < max_prompts, f"{game}: the match does not end"
            output.append(child.before)
        finally:
            child.close()
    # Styles stay on with NO_COLOR (bold, dim): drop them to read the text as a person does.
    text = re.sub(r"\x1b\[[0-9;]*m", "", "".join(output)).replace("\r\n", "\n")
    return PtyPlay(text, prompts, refusal, child.exitstatus)

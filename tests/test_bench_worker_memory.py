"""The bot worker memory benchmark: RSS counts a process's descendants; a short real run."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from bench.worker_memory import descendants, main, rss_kb, tree_rss_mb

HOLD_60_MB = "b = bytearray(60 << 20); import time; time.sleep(60)"


def test_the_rss_of_a_process_tree_counts_its_grandchildren() -> None:
    spawner = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {HOLD_60_MB!r}])"
    parent = subprocess.Popen([sys.executable, "-c", spawner])
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            below = descendants(parent.pid)
            if below and rss_kb(below[0]) > 60 << 10:
                break
            time.sleep(0.1)
        assert len(below) == 1, below
        assert tree_rss_mb(parent.pid) >= rss_kb(parent.pid) / 1024 + 60
    finally:
        for pid in descendants(parent.pid):
            subprocess.run(["kill", str(pid)], check=False)
        parent.kill()
        parent.wait()


@pytest.mark.e2e
def test_a_short_run_prints_rising_decisions_and_the_workers_memory(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--minutes", "0.1", "--every", "2", "--level", "random"]) == 0
    rows = [line.strip("| ").split(" | ") for line in capsys.readouterr().out.splitlines()
            if line.startswith("| ") and line[2].isdigit()]
    assert len(rows) >= 3
    minutes = [float(r[0]) for r in rows]
    decisions = [int(r[2]) for r in rows]
    assert minutes == sorted(minutes) and 0.09 <= minutes[-1] < 0.2
    assert decisions == sorted(decisions) and decisions[-1] > 0
    assert all(float(r[5]) > 20 for r in rows)  # a Python process with grpc loaded

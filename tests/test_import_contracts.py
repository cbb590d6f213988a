"""One package per role: the import contracts of pyproject.toml ([tool.importlinter]) hold.

engines <- common <- service | bots | clients: a layer imports only the layers below it, and the
three roles never import one another (the bots and the clients talk to the server over gRPC
like any frontend). The one declared exception is the server's turn timer, which plays an
overdue turn with the game's rule-based player (bots.heuristics); the second test holds that
this loads the players alone, not the search.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_no_layer_imports_upward_or_sideways() -> None:
    cli = pytest.importorskip(
        "importlinter.cli",
        reason="import-linter is not installed (a dev dependency: uv sync installs it)",
    )
    old = Path.cwd()
    os.chdir(ROOT)  # the contracts name the packages of this checkout's root
    try:
        code = cli.lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True)
    finally:
        os.chdir(old)
    assert code == 0, "an import breaks a contract of [tool.importlinter]: see the output above"


def test_the_server_loads_no_search_nor_client() -> None:
    """The server with its turn timer's players loaded: no search, no bot levels, no client."""
    probe = (
        "import sys\n"
        "import service.server, service.cli\n"
        "from bots.heuristics import get_heuristic\n"
        "get_heuristic('dos')\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('bots', 'clients'))\n"
        "print(' '.join(loaded))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), *sys.path]))}
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=60,
        cwd=ROOT, check=True,
    ).stdout.split()
    assert out, "the probe loaded no player"
    assert all(m == "bots" or m.startswith("bots.heuristics") for m in out), out

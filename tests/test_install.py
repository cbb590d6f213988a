"""Installs that pass on any day: the lock matches pyproject.toml, pins every package with its
hashes, is what the Makefile installs, and a researcher's documented `pip install -e '.[envs]'`
works in a bare virtualenv without the Makefile and without the service's runtime."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
UV = Path(sys.executable).parent / "uv"  # the Makefile installs it, pinned by hash
ENV = {**os.environ, "UV_PYTHON_DOWNLOADS": "never", "UV_NO_PROGRESS": "1"}


def uv(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    assert UV.exists(), f"{UV} is missing: `make setup` installs uv beside the interpreter"
    return subprocess.run([str(UV), *args], cwd=cwd, env=ENV, capture_output=True, text=True,
                          timeout=120)


def test_the_lock_matches_pyproject() -> None:
    done = uv("lock", "--check", "--offline")
    assert done.returncode == 0, f"uv.lock is out of date with pyproject.toml (make lock):\n{done.stderr}"


def test_a_pyproject_change_without_a_new_lock_is_caught(tmp_path: Path) -> None:
    """The check above can fail: a dependency dropped from pyproject.toml but not the lock.
    uv re-resolves to tell, which needs the registry's index pages: a fresh machine's cache
    holds only what the frozen install fetched, so this one asks the registry."""
    text = (ROOT / "pyproject.toml").read_text()
    assert '  "orjson>=3.10",' in text
    (tmp_path / "pyproject.toml").write_text(text.replace('  "orjson>=3.10",', ""))
    shutil.copy(ROOT / "uv.lock", tmp_path / "uv.lock")
    done = uv("lock", "--check", cwd=tmp_path)
    assert done.returncode != 0 and "needs to be updated" in done.stderr, done.stderr


def test_every_locked_package_is_pinned_with_hashes() -> None:
    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    packages = [p for p in lock["package"] if "registry" in p["source"]]
    assert len(packages) > 40
    for package in packages:
        files = [package.get("sdist", {}), *package.get("wheels", [])]
        hashed = [f for f in files if f.get("hash", "").startswith("sha256:")]
        assert package["version"] and hashed, f"{package['name']} has no pinned, hashed file"
        assert len(hashed) == len([f for f in files if f]), f"{package['name']}: a file without hash"


def test_the_makefile_installs_from_the_lock_only() -> None:
    """Every Python install of the Makefile is a frozen sync of the lock, but the bootstrap of
    uv itself (pinned by hashes); the web client installs with npm ci from its lock."""
    makefile = (ROOT / "Makefile").read_text()
    installs = [line.strip() for line in makefile.splitlines()
                if re.search(r"\b(pip|uv)\b.*\b(install|sync)\b", line) and "test-latest" not in line
                and ".venv-latest" not in line]
    assert installs, "no install step found"
    for line in installs:
        if "pip install" in line:
            assert "--require-hashes -r requirements-uv.txt" in line, line
        else:
            assert line.startswith("$(UV_SYNC)") or "sync --frozen" in line, line
    assert "sync --frozen" in makefile
    pinned = (ROOT / "requirements-uv.txt").read_text()
    version = re.search(r"^uv==(\S+)", pinned, re.M)
    assert version and pinned.count("--hash=sha256:") >= 2
    got = subprocess.run([str(UV), "--version"], capture_output=True, text=True).stdout.split()[1]
    assert got == version.group(1), f"the virtualenv's uv is {got}, requirements-uv.txt pins {version.group(1)}"
    web = [line.strip() for line in makefile.splitlines() if "npm " in line and "cd web" in line]
    assert web and all("npm ci" in line or "npm run" in line for line in web), web
    assert (ROOT / "web" / "package-lock.json").exists()


def test_the_researchers_install_works_without_the_makefile(tmp_path: Path) -> None:
    """docs/envs.md's `pip install -e '.[envs]'` in a fresh virtualenv: the generated API comes
    with the build, an environment plays, and none of the service's runtime is installed. The
    versions are the lock's (as constraints), so the test does not change with the registry."""
    constraints = tmp_path / "constraints.txt"
    done = uv("export", "--frozen", "--all-extras", "--all-groups", "--no-emit-project",
              "--no-hashes", "-o", str(constraints))
    assert done.returncode == 0, done.stderr
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    pip = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", "-e",
         ".[envs]"],
        cwd=ROOT, env={**os.environ, "PIP_CONSTRAINT": str(constraints)},
        capture_output=True, text=True, timeout=600)
    assert pip.returncode == 0, pip.stderr[-3000:]
    script = """
import importlib.util
import numpy as np
from engines.envs.aec import env
e = env("dos", players=2)
e.reset(seed=7)
for _ in range(10):
    obs, reward, terminated, truncated, info = e.last()
    if terminated or truncated:
        break
    e.step(int(np.flatnonzero(obs["action_mask"])[0]))
print(sorted(m for m in ("grpc", "redis", "hypercorn", "matplotlib", "structlog")
             if importlib.util.find_spec(m)))
"""
    run = subprocess.run([str(venv / "bin" / "python"), "-c", script], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip() == "[]", f"the envs install brought the service's runtime: {run.stdout}"
    # the croupier command says what it lacks instead of a traceback
    cli = subprocess.run([str(venv / "bin" / "croupier"), "serve"], capture_output=True,
                         text=True, timeout=60)
    assert cli.returncode == 2 and "croupier[server]" in cli.stderr, cli.stderr


@pytest.mark.parametrize("extra", ["server", "envs"])
def test_the_extras_keep_apart(extra: str) -> None:
    """What the lock installs for an extra: the envs never pull the server's runtime."""
    done = uv("export", "--frozen", "--extra", extra, "--no-emit-project", "--no-hashes",
              "--no-default-groups")
    assert done.returncode == 0, done.stderr
    names = {line.split("==")[0].lower() for line in done.stdout.splitlines() if "==" in line}
    assert {"protobuf", "numpy"} <= names
    server_only = {"grpcio", "redis", "hypercorn", "matplotlib", "structlog"}
    if extra == "envs":
        assert not names & server_only, names & server_only
        assert {"pettingzoo", "open-spiel"} <= names
    else:
        assert server_only <= names and "pytest" not in names

"""Server settings: command-line flags whose defaults come from CROUPIER_* variables, so the
same image runs anywhere by environment alone (containers, CI) and by flags by hand."""

from __future__ import annotations

import os
from dataclasses import dataclass

DEFAULT_LISTEN = "127.0.0.1:50051"
DEFAULT_STORE = "sqlite:./var/croupier.db"


def env(name: str, default: str) -> str:
    """CROUPIER_<name> from the environment, else `default`."""
    return os.environ.get(f"CROUPIER_{name}", default)


def env_float(name: str, default: float) -> float:
    raw = env(name, "")
    if not raw:
        return default
    try:
        return float(raw)
    except ValueError:
        raise ValueError(f"CROUPIER_{name} must be a number, got {raw!r}") from None


@dataclass(frozen=True)
class ServeConfig:
    listen: str = DEFAULT_LISTEN
    store: str = DEFAULT_STORE
    log_level: str = "info"
    grace: float = 5.0  # seconds in-flight RPCs get on shutdown
    drain: float = 0.0  # seconds not ready but still answering before that
    fill_interval: float = 1.0  # seconds between looks for seats to hand to bots
    metrics_port: int = 0  # Prometheus /metrics; 0 = off

    @classmethod
    def from_env(cls) -> ServeConfig:
        return cls(
            listen=env("LISTEN", DEFAULT_LISTEN),
            store=env("STORE", DEFAULT_STORE),
            log_level=env("LOG_LEVEL", "info"),
            grace=env_float("GRACE", 5.0),
            drain=env_float("DRAIN", 0.0),
            fill_interval=env_float("FILL_INTERVAL", 1.0),
            metrics_port=int(env_float("METRICS_PORT", 0)),
        )


def client_address(listen: str) -> str:
    """Where a local client reaches a server listening on `listen` (wildcards -> loopback)."""
    host, _, port = listen.rpartition(":")
    if host in ("", "0.0.0.0", "[::]", "::"):
        host = "127.0.0.1"
    return f"{host}:{port}"

"""Server settings: command-line flags whose defaults come from CROUPIER_* variables, so the
same image runs anywhere by environment alone (containers, CI) and by flags by hand."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the server's parts load only when it starts, not to parse flags
    from service.abandon_policy import AbandonPolicy
    from service.identity import IdentitySettings
    from service.limits import Limits
    from service.matchmaking import MatchSettings
    from service.presence import PresencePolicy
    from service.security import ApiKeys, Tls

DEFAULT_LISTEN = "127.0.0.1:50051"
DEFAULT_STORE = "sqlite:./var/croupier.db"
DEFAULT_WEB_LISTEN = "127.0.0.1:8080"  # what `croupier run` serves browsers on


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
    log_level: str = "info"  # the console's (stderr's)
    log_file: str = ""  # every event as JSON lines, appended; "" = none
    grace: float = 5.0  # seconds in-flight RPCs get on shutdown
    drain: float = 0.0  # seconds not ready but still answering before that
    fill_interval: float = 1.0  # seconds between looks for seats to hand to bots
    # seconds between a deal's end and the next deal at tables where a person sits (all of
    # them ready ends it sooner; tables of bots alone never pause); 0 = no pause
    deal_pause_seconds: float = 8.0
    # seconds a waiting stream sleeps before it looks at its table again when no change
    # notification woke it (the fallback behind the store's notifications)
    poll_seconds: float = 1.0
    metrics_port: int = 0  # Prometheus /metrics; 0 = off
    web_listen: str = ""  # Connect / gRPC-Web and the web client; "" = off
    cors_origins: str = ""  # comma-separated origins allowed to call the web port
    web_root: str = ""  # the built web client; "" = web/dist of this checkout
    # limits (see service/limits.py); refusals are RESOURCE_EXHAUSTED
    max_message_bytes: int = 1 << 20
    tables_per_client: int = 0  # unfinished tables one client may create; 0 = no limit
    streams_per_table: int = 64  # 0 = no limit
    move_rate: str = ""  # SubmitMove calls per seat, e.g. "10/second"; "" = no limit
    # security (see service/security.py)
    api_keys: str = ""  # key file; "" = no keys needed
    tls_cert: str = ""
    tls_key: str = ""
    tls_client_ca: str = ""  # set: clients must present a certificate it signed
    # tables no person sat at or came back to this long are closed as abandoned; 0 = never
    abandon_waiting_seconds: float = 300.0
    abandon_playing_seconds: float = 1800.0
    # matchmaking (see service/matchmaking.py): seconds before bots fill, as "SECONDS" and/or
    # "GAME=SECONDS" entries (comma-separated); a ticket's lifetime without a heartbeat; the
    # rated window (base + growth per second waited); seconds between matcher rounds
    match_bots_after: str = "20"
    match_ticket_seconds: float = 60.0
    match_window_base: float = 5.0
    match_window_growth: float = 0.5
    match_interval: float = 0.25
    # seats' presence (service.presence): an open stream writes it every presence_seconds;
    # unseen for gone_seconds, a seat is gone. ListMyTables shows tables finished this recently
    presence_seconds: float = 5.0
    gone_seconds: float = 60.0
    my_tables_finished_days: float = 7.0
    # players (see service/identity.py, docs/players.md)
    identity_jwks: str = ""  # the provider's JWKS: https URL or file; "" = no provider
    identity_issuer: str = ""
    identity_audience: str = ""
    identity_algorithms: str = "RS256,ES256,EdDSA"
    identity_player_claim: str = "sub"
    identity_name_claim: str = "name"
    identity_dev_secret_file: str = ""  # HS256 secret, development only
    store_check_seconds: float = 2.0  # how often readiness asks the store whether it answers
    identity_refresh_seconds: float = 10.0  # least time between two JWKS fetches on unknown kids
    guests: bool = True
    guest_key_file: str = ""  # "" = the store's shared key (beside SQLite, in Redis)
    guest_days: float = 30.0

    @classmethod
    def from_env(cls) -> ServeConfig:
        return cls(
            listen=env("LISTEN", DEFAULT_LISTEN),
            store=env("STORE", DEFAULT_STORE),
            log_level=env("LOG_LEVEL", "info"),
            log_file=env("LOG_FILE", ""),
            grace=env_float("GRACE", 5.0),
            drain=env_float("DRAIN", 0.0),
            fill_interval=env_float("FILL_INTERVAL", 1.0),
            deal_pause_seconds=env_float("DEAL_PAUSE_SECONDS", 8.0),
            poll_seconds=env_float("POLL_SECONDS", 1.0),
            metrics_port=int(env_float("METRICS_PORT", 0)),
            web_listen=env("WEB_LISTEN", ""),
            cors_origins=env("CORS_ORIGINS", ""),
            web_root=env("WEB_ROOT", ""),
            max_message_bytes=int(env_float("MAX_MESSAGE_BYTES", 1 << 20)),
            tables_per_client=int(env_float("TABLES_PER_CLIENT", 0)),
            streams_per_table=int(env_float("STREAMS_PER_TABLE", 64)),
            move_rate=env("MOVE_RATE", ""),
            api_keys=env("API_KEYS_FILE", ""),
            tls_cert=env("TLS_CERT", ""),
            tls_key=env("TLS_KEY", ""),
            tls_client_ca=env("TLS_CLIENT_CA", ""),
            abandon_waiting_seconds=env_float("ABANDON_WAITING_SECONDS", 300.0),
            abandon_playing_seconds=env_float("ABANDON_PLAYING_SECONDS", 1800.0),
            match_bots_after=env("MATCH_BOTS_AFTER", "20"),
            match_ticket_seconds=env_float("MATCH_TICKET_SECONDS", 60.0),
            match_window_base=env_float("MATCH_WINDOW_BASE", 5.0),
            match_window_growth=env_float("MATCH_WINDOW_GROWTH", 0.5),
            match_interval=env_float("MATCH_INTERVAL", 0.25),
            presence_seconds=env_float("PRESENCE_SECONDS", 5.0),
            gone_seconds=env_float("GONE_SECONDS", 60.0),
            my_tables_finished_days=env_float("MY_TABLES_FINISHED_DAYS", 7.0),
            identity_jwks=env("IDENTITY_JWKS", ""),
            identity_issuer=env("IDENTITY_ISSUER", ""),
            identity_audience=env("IDENTITY_AUDIENCE", ""),
            identity_algorithms=env("IDENTITY_ALGORITHMS", "RS256,ES256,EdDSA"),
            identity_player_claim=env("IDENTITY_PLAYER_CLAIM", "sub"),
            identity_name_claim=env("IDENTITY_NAME_CLAIM", "name"),
            identity_dev_secret_file=env("IDENTITY_DEV_SECRET_FILE", ""),
            identity_refresh_seconds=env_float("IDENTITY_REFRESH_SECONDS", 10.0),
            store_check_seconds=env_float("STORE_CHECK_SECONDS", 2.0),
            guests=env("GUESTS", "on").lower() not in ("off", "0", "false", "no"),
            guest_key_file=env("GUEST_KEY_FILE", ""),
            guest_days=env_float("GUEST_DAYS", 30.0),
        )

    # the server's settings objects, built from these fields (ValueError if one is wrong)
    def limits(self) -> Limits:
        from service.limits import Limits

        return Limits(
            max_message_bytes=self.max_message_bytes,
            tables_per_client=self.tables_per_client,
            streams_per_table=self.streams_per_table,
            move_rate=self.move_rate,
        )

    def keys(self) -> ApiKeys:
        from service.security import ApiKeys

        return ApiKeys.load(self.api_keys)

    def tls(self) -> Tls:
        from service.security import Tls

        return Tls(self.tls_cert, self.tls_key, self.tls_client_ca)

    def abandon(self) -> AbandonPolicy:
        from service.abandon_policy import AbandonPolicy

        return AbandonPolicy(self.abandon_waiting_seconds, self.abandon_playing_seconds)

    def match_settings(self) -> MatchSettings:
        from service.matchmaking import MatchSettings, parse_bots_after

        default, per_game = parse_bots_after(self.match_bots_after)
        return MatchSettings(
            bots_after=default, bots_after_games=per_game,
            ticket_seconds=self.match_ticket_seconds, window_base=self.match_window_base,
            window_growth=self.match_window_growth, interval=self.match_interval,
        )
    def presence(self) -> PresencePolicy:
        from service.presence import PresencePolicy

        return PresencePolicy(self.presence_seconds, self.gone_seconds)

    def finished_within(self) -> float:
        """Seconds a finished table stays in its players' ListMyTables (include_finished)."""
        days = self.my_tables_finished_days
        if not days >= 0 or days == float("inf"):
            raise ValueError(f"my_tables_finished_days must be 0 or more days, got {days!r}")
        return days * 86_400

    def identity(self) -> IdentitySettings:
        if not 0 < self.store_check_seconds <= 300:
            raise ValueError("the store is checked 0 to 300 s apart (--store-check-seconds)")
        from pathlib import Path

        from service.identity import IdentitySettings

        secret = ""
        if self.identity_dev_secret_file:
            try:
                secret = Path(self.identity_dev_secret_file).read_text().strip()
            except OSError as e:
                raise ValueError(
                    f"cannot read the identity secret file {self.identity_dev_secret_file}: "
                    f"{e.strerror}"
                ) from None
        if not 0 < self.identity_refresh_seconds <= 3600:
            raise ValueError("the JWKS is fetched again 0 to 3600 s apart "
                             "(--identity-refresh-seconds)")
        if not 0 < self.guest_days <= 366:
            raise ValueError("guest tokens live 0 to 366 days (--guest-days)")
        return IdentitySettings(
            jwks=self.identity_jwks,
            issuer=self.identity_issuer,
            audience=self.identity_audience,
            algorithms=tuple(a.strip() for a in self.identity_algorithms.split(",") if a.strip()),
            player_claim=self.identity_player_claim,
            name_claim=self.identity_name_claim,
            dev_secret=secret,
            refresh_seconds=self.identity_refresh_seconds,
            guests=self.guests,
            guest_seconds=self.guest_days * 24 * 3600.0,
        )

    def origins(self) -> list[str]:
        return [o.strip() for o in self.cors_origins.split(",") if o.strip()]


def client_address(listen: str) -> str:
    """Where a local client reaches a server listening on `listen` (wildcards -> loopback)."""
    host, _, port = listen.rpartition(":")
    if host in ("", "0.0.0.0", "[::]", "::"):
        host = "127.0.0.1"
    return f"{host}:{port}"

"""The server's guest keys: kept beside the SQLite file (0600) or in Redis, shared by every
server on the store, rotated through a key file whose first key signs."""

from __future__ import annotations

import asyncio
import stat
import uuid
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from service.guest_keys import GuestKeys, file_beside, for_store, pem
from service.identity import Identities, IdentitySettings
from service.store_memory import MemoryStore
from service.store_redis import RedisStore
from service.table_errors import TableError


def test_the_key_beside_the_sqlite_file_is_private_and_kept(tmp_path: Path) -> None:
    first = file_beside(str(tmp_path / "croupier.db"))
    path = tmp_path / "guest-keys.pem"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = file_beside(str(tmp_path / "croupier.db"))
    assert first.signing[0] == again.signing[0]


def test_replicas_on_one_redis_share_one_key() -> None:
    prefix = f"test-guest-{uuid.uuid4().hex[:8]}:"

    async def go() -> tuple[str, str]:
        a = RedisStore(f"redis://127.0.0.1:6379/0?prefix={prefix}")
        b = RedisStore(f"redis://127.0.0.1:6379/0?prefix={prefix}")
        try:
            ka = await for_store(a, "redis://", "")
            kb = await for_store(b, "redis://", "")
            await a.client.delete(f"{prefix}guest-keys")
            return ka.signing[0], kb.signing[0]
        finally:
            await a.close()
            await b.close()

    one, two = asyncio.run(go())
    assert one == two


def test_rotation_keeps_old_tokens(tmp_path: Path) -> None:
    old, new = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    before = Identities(IdentitySettings(), GuestKeys.from_pem(pem(old), "old"))
    _, token = asyncio.run(before.issue_guest("Ana"))
    rotated = GuestKeys.from_pem(pem(new) + pem(old), "rotated")
    after = Identities(IdentitySettings(), rotated)
    assert asyncio.run(after.verify(token)).name == "Ana"
    _, newer = asyncio.run(after.issue_guest("Bob"))
    with pytest.raises(TableError):  # a server that never held the new key
        asyncio.run(before.verify(newer))
    dropped = Identities(IdentitySettings(), GuestKeys.from_pem(pem(new), "new only"))
    with pytest.raises(TableError):
        asyncio.run(dropped.verify(token))


def test_a_memory_store_gets_a_fresh_key() -> None:
    keys = asyncio.run(for_store(MemoryStore(), "memory", ""))
    assert keys.signing[0] in keys.public


def test_bad_key_files_say_what_is_wrong(tmp_path: Path) -> None:
    empty = tmp_path / "empty.pem"
    empty.write_text("nothing here")
    with pytest.raises(ValueError, match="no PEM private key"):
        GuestKeys.load(str(empty))
    with pytest.raises(ValueError, match="cannot read"):
        GuestKeys.load(str(tmp_path / "absent.pem"))

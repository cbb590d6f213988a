"""The server's own signing keys for guest identity tokens (Ed25519).

A key file holds one or more PEM private keys: the first signs new guest tokens, every one
verifies, so a key is rotated by putting a new one first and dropping the old once its tokens
have expired. Without a key file the key is kept where every replica of the store finds it:
beside the SQLite file (mode 0600), in Redis (created once, atomically, by whichever replica
starts first), or in memory only for the memory store (tests).
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from common.logging import get_logger

if TYPE_CHECKING:
    from service.store import Store
    from service.store_redis import RedisStore

log = get_logger("croupier.identity")

GUEST_ALGORITHM = "EdDSA"
_PEM_BLOCK = re.compile(
    r"-----BEGIN PRIVATE KEY-----.+?-----END PRIVATE KEY-----", re.DOTALL
)
GUEST_KEY_FILE_NAME = "guest-keys.pem"
REDIS_KEY = "guest-keys"


def key_id(public: Ed25519PublicKey) -> str:
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def pem(private: Ed25519PrivateKey) -> str:
    return private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


@dataclass(frozen=True)
class GuestKeys:
    """The signing key (with its id) and every verifying key by id."""

    signing: tuple[str, Ed25519PrivateKey]
    public: dict[str, Ed25519PublicKey] = field(default_factory=dict)

    @classmethod
    def from_keys(cls, keys: list[Ed25519PrivateKey]) -> GuestKeys:
        if not keys:
            raise ValueError("a guest key file needs at least one Ed25519 private key")
        public = {key_id(k.public_key()): k.public_key() for k in keys}
        return cls((key_id(keys[0].public_key()), keys[0]), public)

    @classmethod
    def generate(cls) -> GuestKeys:
        return cls.from_keys([Ed25519PrivateKey.generate()])

    @classmethod
    def from_pem(cls, text: str, where: str) -> GuestKeys:
        keys: list[Ed25519PrivateKey] = []
        for n, block in enumerate(_PEM_BLOCK.findall(text), 1):
            try:
                key = serialization.load_pem_private_key(block.encode(), password=None)
            except ValueError:
                raise ValueError(f"{where}: key {n} is not a readable PEM private key") from None
            if not isinstance(key, Ed25519PrivateKey):
                raise ValueError(f"{where}: key {n} is not an Ed25519 key")
            keys.append(key)
        if not keys:
            raise ValueError(f"{where} holds no PEM private key (BEGIN PRIVATE KEY)")
        return cls.from_keys(keys)

    @classmethod
    def load(cls, path: str) -> GuestKeys:
        try:
            text = Path(path).read_text()
        except OSError as e:
            raise ValueError(f"cannot read the guest key file {path}: {e.strerror}") from None
        return cls.from_pem(text, path)


def file_beside(db_path: str) -> GuestKeys:
    """The key kept beside a SQLite store's file, created (0600) on first start."""
    path = Path(db_path).parent / GUEST_KEY_FILE_NAME
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another server on the same file made it meanwhile
            pass
        else:
            with os.fdopen(fd, "w") as out:
                out.write(pem(Ed25519PrivateKey.generate()))
            log.info("guest_key_created", beside="store")
    return GuestKeys.load(str(path))


async def shared_in_redis(store: RedisStore) -> GuestKeys:
    """The key kept in the store's Redis (under its prefix), set once by the first replica."""
    from redis.exceptions import RedisClusterException, RedisError

    from service.store import StoreUnavailable

    name = f"{store.prefix}{REDIS_KEY}"
    try:
        await store.client.set(name, pem(Ed25519PrivateKey.generate()), nx=True)
        text = await store.client.get(name)
    except (RedisError, RedisClusterException, OSError) as e:
        raise StoreUnavailable(f"guest keys: {type(e).__name__}") from None
    return GuestKeys.from_pem(text.decode() if isinstance(text, bytes) else str(text), "Redis")


async def for_store(store: Store, store_url: str, key_file: str) -> GuestKeys:
    """The guest keys a server uses: the key file if given, else the store's shared key."""
    from service.store_redis import RedisStore

    if key_file:
        return GuestKeys.load(key_file)
    if store_url.startswith("sqlite:"):
        path = store_url.removeprefix("sqlite:").removeprefix("//") or "./var/croupier.db"
        return file_beside(path)
    if isinstance(store, RedisStore):
        return await shared_in_redis(store)
    return GuestKeys.generate()

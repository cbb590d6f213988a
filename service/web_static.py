"""The built web client's files, served for phones on slow networks.

- Compressed: the build puts `.br` and `.gz` copies beside each text file; the copy the
  browser accepts (Accept-Encoding, brotli first) is sent as is, with `Vary: Accept-Encoding`.
  Nothing is compressed per request.
- Cached: everything under `assets/` has a hash of its content in its name (web/build.mjs), so
  browsers keep it for a year without asking again (`immutable`). Anything else (index.html,
  which names those files) is `no-cache`: asked again each time, answered 304 while unchanged
  (ETag, Last-Modified).
- Never served: source maps (`.map`), hidden files, the compressed copies by their own names,
  anything outside the web root. Only GET and HEAD; anything else is 405.
"""

from __future__ import annotations

import asyncio
import email.utils
import mimetypes
from dataclasses import dataclass
from pathlib import Path

from starlette.types import Receive, Scope, Send

IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
HASHED_DIR = "assets"
# the copies of a file, by content coding, in the order a browser's equal preference picks them
ENCODINGS = (("br", ".br"), ("gzip", ".gz"))
NEVER = (".map", ".br", ".gz")
TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".json": "application/json",
    ".txt": "text/plain; charset=utf-8",
}


@dataclass(frozen=True)
class Chosen:
    """One representation of a requested file: what is sent and how it is described."""

    path: Path
    encoding: str  # "" for identity
    size: int
    mtime: float
    variants: bool  # other encodings of it exist (the answer then varies by Accept-Encoding)

    @property
    def etag(self) -> str:
        """Strong, and distinct per encoding: a 304 must match the bytes the browser holds."""
        suffix = f"-{self.encoding}" if self.encoding else ""
        return f'"{self.size:x}-{int(self.mtime * 1_000_000):x}{suffix}"'


def accepted(header: str) -> dict[str, float]:
    """Accept-Encoding as {coding: q}; a bad q counts as 0, '*' stands for codings unnamed."""
    out: dict[str, float] = {}
    for item in header.split(","):
        name, _, params = item.strip().partition(";")
        name = name.strip().lower()
        if not name:
            continue
        q = 1.0
        for p in params.split(";"):
            key, _, value = p.strip().partition("=")
            if key.strip().lower() == "q":
                try:
                    q = min(max(float(value), 0.0), 1.0)
                except ValueError:
                    q = 0.0
        out[name] = q
    return out


def resolve(root: Path, url_path: str) -> Path | None:
    """The file a URL path names inside `root`, or None (absent, hidden, a map, outside)."""
    parts = [p for p in url_path.split("/") if p]
    if any(p.startswith(".") or "\\" in p or "\x00" in p for p in parts):
        return None
    if not parts or url_path.endswith("/"):
        parts.append("index.html")
    if parts[-1].endswith(NEVER):
        return None
    base = root.resolve()
    path = base.joinpath(*parts).resolve()
    if not path.is_relative_to(base):
        return None
    if path.is_dir():
        path = path / "index.html"
    return path if path.is_file() else None


def choose(path: Path, accept_encoding: str) -> Chosen:
    """The best copy of `path` the browser takes: the highest q, brotli before gzip on a tie,
    identity when it is preferred or nothing else is acceptable."""
    accept = accepted(accept_encoding)
    present = [(enc, path.with_name(path.name + ext)) for enc, ext in ENCODINGS]
    present = [(enc, p) for enc, p in present if p.is_file()]
    best: tuple[str, Path] = ("", path)
    best_q = accept.get("identity", accept.get("*", 1.0))  # 0: still sent if nothing else is
    for enc, p in present:
        q = accept.get(enc, accept.get("*", 0.0))
        if q > 0 and (q > best_q or (q == best_q and best[0] == "")):
            best, best_q = (enc, p), q
    stat = best[1].stat()
    return Chosen(best[1], best[0], stat.st_size, stat.st_mtime, bool(present))


def _header(scope: Scope, name: bytes) -> str:
    return next(
        (v.decode("latin-1") for k, v in scope.get("headers", ()) if k == name), ""
    )


def _not_modified(scope: Scope, chosen: Chosen) -> bool:
    """If-None-Match decides when present (weak comparison, as for GET); else If-Modified-Since."""
    none_match = _header(scope, b"if-none-match")
    if none_match:
        tags = [t.strip().removeprefix("W/") for t in none_match.split(",")]
        return "*" in tags or chosen.etag in tags
    since = _header(scope, b"if-modified-since")
    if since:
        try:
            when = email.utils.parsedate_to_datetime(since).timestamp()
        except (TypeError, ValueError, IndexError, OverflowError):
            return False
        return int(chosen.mtime) <= when
    return False


def _headers(rel: str, original: Path, chosen: Chosen) -> list[tuple[bytes, bytes]]:
    kind = TYPES.get(original.suffix) or mimetypes.guess_type(original.name)[0]
    hashed = rel.split("/", 1)[0] == HASHED_DIR
    headers = [
        (b"content-type", (kind or "application/octet-stream").encode()),
        (b"cache-control", (IMMUTABLE if hashed else REVALIDATE).encode()),
        (b"etag", chosen.etag.encode()),
        (b"last-modified", email.utils.formatdate(chosen.mtime, usegmt=True).encode()),
        (b"x-content-type-options", b"nosniff"),
    ]
    if chosen.encoding:
        headers.append((b"content-encoding", chosen.encoding.encode()))
    if chosen.variants:
        headers.append((b"vary", b"Accept-Encoding"))
    return headers


async def serve(root: Path, scope: Scope, receive: Receive, send: Send) -> int:
    """Answers one request for a file of `root`; returns the status sent."""
    method = scope.get("method", "GET")
    if method not in ("GET", "HEAD"):
        await _simple(send, 405, "method not allowed\n", [(b"allow", b"GET, HEAD")])
        return 405
    try:
        path = resolve(root, scope["path"])
    except (OSError, ValueError):  # a name too long for the file system, and the like
        path = None
    if path is None:
        await _simple(send, 404, "not found\n")
        return 404
    try:
        chosen = choose(path, _header(scope, b"accept-encoding"))
        rel = path.relative_to(root.resolve()).as_posix()
        headers = _headers(rel, path, chosen)
        if _not_modified(scope, chosen):
            keep = (b"cache-control", b"etag", b"last-modified", b"vary")
            await send({"type": "http.response.start", "status": 304,
                        "headers": [h for h in headers if h[0] in keep]})
            await send({"type": "http.response.body", "body": b""})
            return 304
        body = b"" if method == "HEAD" else await asyncio.to_thread(chosen.path.read_bytes)
    except OSError:  # removed or replaced between the lookup and the read (a rebuild)
        await _simple(send, 404, "not found\n")
        return 404
    size = chosen.size if method == "HEAD" else len(body)
    headers.append((b"content-length", str(size).encode()))
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})
    return 200


async def _simple(
    send: Send, status: int, text: str, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    body = text.encode()
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", REVALIDATE.encode()),
        *(extra or []),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


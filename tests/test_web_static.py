"""The web port's files, over HTTP/1.1 from a real `croupier serve`: the encoding a browser
accepts (brotli, gzip, or none), a year's cache for the content-hashed files and revalidation
(304) for index.html, no source maps, clean refusals; and the built client's own index.html
naming files that exist, with their compressed copies served."""

from __future__ import annotations

import gzip
import http.client
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import REPO, ServerProcess, free_port

pytestmark = pytest.mark.e2e
DIST = REPO / "web" / "dist"
IMMUTABLE = "public, max-age=31536000, immutable"
JS = b"export const x = 1;\n" * 200


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A web root as the build leaves it: index.html, hashed assets with .gz and .br, a map."""
    root = tmp_path_factory.mktemp("site")
    (root / "assets").mkdir()
    (root / "index.html").write_text('<script src="assets/app-ABC123.js"></script>')
    (root / "assets" / "app-ABC123.js").write_bytes(JS)
    (root / "assets" / "app-ABC123.js.gz").write_bytes(gzip.compress(JS))
    (root / "assets" / "app-ABC123.js.br").write_bytes(b"brotli stand-in: sent as is")
    (root / "assets" / "app-ABC123.js.map").write_text("{}")
    (root / "assets" / "plain-DEF456.svg").write_text("<svg/>")  # no compressed copy
    (root / ".secret").write_text("hidden")
    return root


@pytest.fixture(scope="module")
def server(site: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    db = tmp_path_factory.mktemp("static") / "c.db"
    proc = ServerProcess(db=db, web_port=free_port(), extra=("--web-root", str(site))).start()
    yield proc
    proc.stop()


def get(
    port: int, path: str, method: str = "GET", **headers: str
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, path, headers={k.replace("_", "-"): v for k, v in headers.items()})
        reply = conn.getresponse()
        return reply.status, {k.lower(): v for k, v in reply.getheaders()}, reply.read()
    finally:
        conn.close()


def test_the_encoding_follows_accept_encoding(server: ServerProcess, site: Path) -> None:
    port, path = server.web_port, "/assets/app-ABC123.js"
    cases = {
        "gzip, deflate, br, zstd": ("br", (site / "assets/app-ABC123.js.br").read_bytes()),
        "gzip": ("gzip", (site / "assets/app-ABC123.js.gz").read_bytes()),
        "br;q=0.5, gzip": ("gzip", (site / "assets/app-ABC123.js.gz").read_bytes()),
        "br;q=0, gzip;q=0": (None, JS),
        "identity": (None, JS),
        "*": ("br", (site / "assets/app-ABC123.js.br").read_bytes()),
        "*;q=0, gzip": ("gzip", (site / "assets/app-ABC123.js.gz").read_bytes()),
        "deflate;q=x, br;q=nonsense": (None, JS),  # a bad q refuses that coding, nothing more
        "": (None, JS),
    }
    for accept, (encoding, body) in cases.items():
        status, headers, got = get(port, path, accept_encoding=accept)
        assert status == 200, accept
        assert headers.get("content-encoding") == encoding, accept
        assert got == body, accept
        assert headers["content-length"] == str(len(body)), accept
        assert headers["content-type"] == "text/javascript; charset=utf-8"
        assert headers["vary"] == "Accept-Encoding"
    assert gzip.decompress(get(port, path, accept_encoding="gzip")[2]) == JS
    # without any compressed copy: no Vary, the file as it is
    status, headers, body = get(port, "/assets/plain-DEF456.svg", accept_encoding="gzip, br")
    assert (status, body) == (200, b"<svg/>")
    assert "content-encoding" not in headers and "vary" not in headers
    assert headers["content-type"] == "image/svg+xml"


def test_cache_headers_by_kind_and_revalidation(server: ServerProcess) -> None:
    port = server.web_port
    status, headers, _ = get(port, "/assets/app-ABC123.js", accept_encoding="br")
    assert status == 200 and headers["cache-control"] == IMMUTABLE
    for path in ("/", "/index.html"):
        status, headers, body = get(port, path)
        assert status == 200 and headers["cache-control"] == "no-cache", path
        assert b"app-ABC123.js" in body
        assert headers["etag"] and headers["last-modified"]
        assert headers["content-type"] == "text/html; charset=utf-8"
        etag = headers["etag"]
        status, again, body = get(port, path, if_none_match=etag)
        assert (status, body) == (304, b"") and again["etag"] == etag
        assert again["cache-control"] == "no-cache"
        assert get(port, path, if_none_match=f'W/{etag}, "other"')[0] == 304
        assert get(port, path, if_none_match='"other"')[0] == 200
        modified = headers["last-modified"]
        assert get(port, path, if_modified_since=modified)[0] == 304
        assert get(port, path, if_modified_since="Thu, 01 Jan 1970 00:00:00 GMT")[0] == 200
        assert get(port, path, if_modified_since="not a date")[0] == 200
    # each encoding has its own tag: a gzip copy held does not answer for the brotli one
    _, br, _ = get(port, "/assets/app-ABC123.js", accept_encoding="br")
    _, gz, _ = get(port, "/assets/app-ABC123.js", accept_encoding="gzip")
    assert br["etag"] != gz["etag"]
    status, _, _ = get(port, "/assets/app-ABC123.js", accept_encoding="br", if_none_match=gz["etag"])
    assert status == 200
    status, headers, _ = get(
        port, "/assets/app-ABC123.js", accept_encoding="br", if_none_match=br["etag"]
    )
    assert status == 304 and headers["cache-control"] == IMMUTABLE


def test_maps_hidden_files_and_copies_are_not_served(server: ServerProcess) -> None:
    port = server.web_port
    for path in (
        "/assets/app-ABC123.js.map", "/assets/app-ABC123.js.gz", "/assets/app-ABC123.js.br",
        "/.secret", "/assets/../.secret", "/%2e%2e/etc/passwd", "/nothing.js",
        "/assets/" + "x" * 5000, "/assets/a%00b.js",
    ):  # fmt: skip
        status, headers, body = get(port, path)
        assert status == 404, (path, status)
        assert body == b"not found\n" and headers["cache-control"] == "no-cache"


def test_other_methods_and_head(server: ServerProcess) -> None:
    port = server.web_port
    status, headers, body = get(port, "/index.html", method="POST")
    assert status == 405 and headers["allow"] == "GET, HEAD"
    status, headers, body = get(port, "/assets/app-ABC123.js", method="HEAD", accept_encoding="gzip")
    assert status == 200 and body == b""
    assert headers["content-encoding"] == "gzip"
    assert headers["content-length"] == str(len(gzip.compress(JS)))
    # the server still answers the API after all of the above
    assert get(port, "/index.html")[0] == 200


@pytest.mark.skipif(not (DIST / "index.html").exists(), reason="web client not built (make web)")
def test_the_built_client_names_files_that_exist_and_ships_no_map(tmp_path: Path) -> None:
    html = (DIST / "index.html").read_text()
    names = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert len(names) >= 3 and all(n.startswith("assets/") for n in names), names
    assert not list(DIST.rglob("*.map")), "a production build has no source maps"
    server = ServerProcess(db=tmp_path / "c.db", web_port=free_port()).start()
    try:
        for name in names:
            status, headers, body = get(server.web_port, f"/{name}", accept_encoding="br, gzip")
            assert status == 200, name
            assert headers["cache-control"] == IMMUTABLE
            assert headers["content-encoding"] == "br"
            assert body == (DIST / f"{name}.br").read_bytes()
            status, headers, body = get(server.web_port, f"/{name}", accept_encoding="gzip")
            assert gzip.decompress(body) == (DIST / name).read_bytes()
        # every card face is a file of its own, far smaller than the package's one sprite
        faces = [p for p in (DIST / "assets" / "cards").glob("*.svg")]
        assert len(faces) == 55
        assert max(p.stat().st_size for p in faces) < 100_000
        status, headers, _ = get(server.web_port, "/")
        assert status == 200 and headers["cache-control"] == "no-cache"
    finally:
        server.stop()

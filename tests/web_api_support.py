"""Web API test helpers: raw HTTP calls to the web port."""

from __future__ import annotations

import urllib.error
import urllib.request


def http_post(url: str, body: bytes, content_type: str) -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(url, data=body, headers={"content-type": content_type})
    try:
        with urllib.request.urlopen(req, timeout=5) as reply:
            return reply.status, dict(reply.headers.items()), reply.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers.items()), e.read()

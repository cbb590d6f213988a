"""Credentials out of what is logged or shown: a store URL like `redis://:PASSWORD@host/0`
is a setting an operator prints, logs and pastes into bug reports, and its password must not
travel with it.

`masked` is the one function for that: the start-up events, `--help`'s defaults, errors that
quote a setting, and the logging set-up's last guard over every field of every event all use
it. It masks a URL's user information (the password; the user name too when it may be a
password written without its colon) and the values of query parameters named like
credentials, wherever such a URL appears in a text; the rest stays as written, so an operator
still sees which host, port and database a setting names.
"""

from __future__ import annotations

import re

MASK = "***"
# scheme://userinfo@ : greedy to the last '@' of the URL, as URL parsers split the netloc
# (a password holding an unescaped '@' or '/' is still masked whole)
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)([^\s'\"<>@]*(?:@[^\s'\"<>@/]*)*)@")
# ?password=... and the like (redis-py takes any query parameter as a connection option)
_SECRET_PARAMETER = re.compile(
    r"(?i)([?&](?:[a-z_]*password|passwd|pass|secret|[a-z_]*token|api_?key|key|auth)=)"
    r"[^&\s'\"#<>]*"
)


def _mask_userinfo(found: re.Match[str]) -> str:
    scheme, userinfo = found.group(1), found.group(2)
    user, colon, _ = userinfo.partition(":")
    if colon and "/" not in user and "@" not in user:
        return f"{scheme}{user}:{MASK}@"  # a user name is not a secret, its password is
    return f"{scheme}{MASK}@"


def masked(text: str) -> str:
    """`text` with the credentials of every URL in it replaced by ***."""
    if "@" not in text and "=" not in text:  # the common case, checked cheaply
        return text
    text = _USERINFO.sub(_mask_userinfo, text)
    return _SECRET_PARAMETER.sub(rf"\1{MASK}", text)

"""Paths of a release directory that become links or fetches, judged as a browser resolves them.

A browser parses a link by the WHATWG URL standard (https://url.spec.whatwg.org/#concept-basic-url-parser), not
as a file name: it strips leading and trailing C0 control-or-space, removes every tab and newline, reads ``\\`` as
``/`` in http(s) URLs, takes ``//host`` as another host, ``https:host`` (on an http page) as another host, and
``%2e%2e`` as ``..``. So a path from a release directory becomes a link only when the browser would fetch exactly
that file of the site: after the standard's preprocessing it is unchanged, has no scheme, is not absolute, has no
query, fragment, percent-escape, backslash or dot segment, and uses only characters a URL path keeps as they are.
``browser_target`` is the port of the standard's relevant steps used to name where a refused path would go.
"""

from __future__ import annotations

import re
import urllib.parse

_C0_OR_SPACE = "".join(chr(c) for c in range(0x21))
_TAB_NEWLINE = str.maketrans("", "", "\t\n\r")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
_SEGMENT = re.compile(r"^[A-Za-z0-9_~+@=,\-][A-Za-z0-9._~+@=,\-]*$")
SITE_BASE = "https://release.invalid/"  # where the site is assumed to be served, for messages only


def whatwg_prepare(text: str) -> str:
    """The URL standard's input preprocessing: strip C0 control-or-space at both ends, remove tab/LF/CR."""
    return text.strip(_C0_OR_SPACE).translate(_TAB_NEWLINE)


def browser_target(base: str, ref: str) -> str:
    """Where a browser fetches ``ref`` found in a document at ``base`` (an http(s) URL)."""
    text = whatwg_prepare(ref).replace("\\", "/")
    m = _SCHEME.match(text)
    if m and m.group(0)[:-1].lower() in ("http", "https") and not text[m.end():].startswith("/"):
        scheme = m.group(0)[:-1].lower()
        # scheme-relative: same scheme as the base is a relative reference, another special scheme an authority
        text = text[m.end():] if scheme == urllib.parse.urlsplit(base).scheme else f"{scheme}://{text[m.end():]}"
    return urllib.parse.urljoin(base, text)


def link_problem(path: str) -> str | None:
    """Why ``path`` (relative, ``/``-separated) would not be fetched as that very file by a browser, or None."""
    if whatwg_prepare(path) != path:
        return "has leading/trailing control characters or spaces, or a tab/newline, which a browser drops"
    if "\\" in path:
        return "has a backslash, which a browser reads as /"
    if _SCHEME.match(path):
        return "starts with a URL scheme"
    if path.startswith("/"):
        return "is not relative (a leading / is the site root, // another host)"
    for segment in path.split("/"):
        if segment in ("", ".", ".."):
            return "has an empty, . or .. segment"
        if not _SEGMENT.match(segment):
            return ("has a character a URL path does not keep as is (only letters, digits and . _ ~ + @ = , - "
                    "are allowed in a release file name)")
    return None

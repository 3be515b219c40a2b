"""Every commit id the repository names is one GitHub has: the firmware pin, the docs, the PROVENANCE files,
the tests, bench/ and the workflows name upstream xiaozhi-esp32 commits by upstream's own ids, so each one
resolves in upstream's shallow clone (../shared/fixtures/upstream/xiaozhi-esp32-shallow.git, a ``git clone
--depth 301`` of github.com/78/xiaozhi-esp32). An id copied from the re-parented history bundle resolves nowhere
else, and ``actions/checkout`` of it fails on GitHub (issue 38).

Collected: every 7–40 character lower-case hex token standing alone (not inside a longer word or hash) in every
text file git lists (tracked and untracked, not ignored). A token that is not an upstream commit must be
explained: an all-decimal number, an upstream tree or blob id (checked to be one), or an entry of
``NOT_COMMITS`` with its reason.
"""

from __future__ import annotations

import re
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

from tests.conftest import REPO, _missing_oracle
from tests.upstream_repo import UPSTREAM_PIN, UpstreamUnavailable, bare_copy

TOKEN = re.compile(r"(?<![0-9A-Za-z_])[0-9a-f]{7,40}(?![0-9A-Za-z_])")

#: Hex tokens that are not upstream commit ids, each with the reason (a new one needs its own line here).
NOT_COMMITS: dict[str, str] = {
    # commits of other repositories
    "7101770dc6db2667b3c477cc31365dd1acd6db4e": "espressif/esp-idf v6.0.2 (partition generator provenance)",
    "102122904ade11fd1ae373848f34ffd7dfb18aeb": "espressif/esp-idf (otadata generator provenance)",
    "c420999": "78/lv_font_conv, the reference font converter",
    "c5e3235": "78/xiaozhi-mqtt-gateway, the peer gateway fixture's version",
    # this repository's own history (docs/testing.md says on which commits a measurement ran)
    "ad95c49": "xzbuild commit the slow run of docs/testing.md ran on",
    "0d9f50d": "xzbuild commit range start in docs/testing.md (own-server install work)",
    "61a075d": "xzbuild commit range end in docs/testing.md (own-server install work)",
    # test data: MAC addresses, UUID parts, keys, magic numbers
    "00112233445566778899aabbccddeeff": "128-bit test key (tests/server/test_mqtt_udp.py)",
    "01000000deadbeef0000000000000000": "AES-CTR nonce test vector (tests/server/test_mqtt_udp.py)",
    "0123456789abcdef0123456789abcdef": "made-up cache key (tests/matrix/test_listing_cache.py)",
    "0123456789ab": "UUID tail / MAC-like test value",
    "123456789abc": "made-up MAC address (tests/hostile/test_server_table.py)",
    "1b4e28ba": "UUID head of a test device id (tests/hil/test_field_update.py)",
    "24ec4a010203": "made-up Espressif MAC address (tests/hil)",
    "24ec4a0a0b0c": "made-up Espressif MAC address (tests/hil)",
    "34b7da040506": "made-up Espressif MAC address (tests/hil)",
    "a0b1c2d3e4f5": "made-up MAC address (tests/hil/test_vboard_flash.py)",
    "aabbccddee01": "made-up MAC address (tests/hostile)",
    "aabbccddee25": "made-up MAC address (tests/hostile)",
    "aabbccddee26": "made-up MAC address (tests/hostile)",
    "aabbccddeeff": "made-up MAC address (tests/hostile)",
    "303a1001": "USB VID:PID 303a:1001 written without the colon (a lab inventory error case)",
    "3254cdab": "ESP-IDF app description magic word 0xABCD5432, little-endian bytes",
    "99999999999d": "an over-long duration in a bounds test",
}


def _named_tokens() -> dict[str, set[str]]:
    """token → the files naming it."""
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z", "-co", "--exclude-standard"],
                            capture_output=True, check=True).stdout.decode().split("\0")
    found: dict[str, set[str]] = defaultdict(set)
    for rel in filter(None, listed):
        path = REPO / rel
        if path.is_symlink() or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # binary fixtures name no commits
        for m in TOKEN.finditer(text):
            found[m.group()].add(rel)
    return found


def _object_types(gitdir: Path, tokens: list[str]) -> dict[str, str]:
    """token → upstream object type ('commit', 'tree', 'blob', ...) or 'missing' / 'ambiguous'."""
    out = subprocess.run(["git", "--git-dir", str(gitdir), "cat-file", "--batch-check=%(objecttype)"],
                         input="".join(t + "\n" for t in tokens), capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert len(out) == len(tokens)
    return {t: (line.split()[-1] if line.endswith(("missing", "ambiguous")) else line)
            for t, line in zip(tokens, out, strict=True)}


@pytest.fixture(scope="module")
def upstream_git(tmp_path_factory: pytest.TempPathFactory) -> Path:
    try:
        return bare_copy(tmp_path_factory.mktemp("upstream-ids"))
    except UpstreamUnavailable as exc:
        _missing_oracle(str(exc))
        raise


def test_every_commit_id_the_repository_names_is_upstreams(upstream_git: Path) -> None:
    named = _named_tokens()
    types = _object_types(upstream_git, sorted(named))
    commits = {t for t, kind in types.items() if kind == "commit"}
    unexplained = {t: sorted(named[t]) for t, kind in types.items()
                   if kind not in ("commit", "tree", "blob") and not t.isdecimal() and t not in NOT_COMMITS}
    assert not unexplained, (
        "hex ids that are not upstream commits (GitHub's actions/checkout cannot find them; map bundle ids to "
        "upstream's by the 'upstream-commit:' trailer, or add a non-commit token to NOT_COMMITS with a reason): "
        f"{unexplained}")
    # the list of exceptions stays honest: each entry is named somewhere and is not an upstream commit after all
    assert not (set(NOT_COMMITS) - set(named)), sorted(set(NOT_COMMITS) - set(named))
    assert not (set(NOT_COMMITS) & commits), sorted(set(NOT_COMMITS) & commits)
    assert UPSTREAM_PIN in commits and len(commits) >= 10


def test_the_pin_is_upstream_main(upstream_git: Path) -> None:
    """boards/_firmware.yaml pins the commit the shallow clone's main is (the tree boards/ were imported from)."""
    m = re.search(r"^upstream_commit: *([0-9a-f]{40}) *$", (REPO / "boards" / "_firmware.yaml").read_text(), re.M)
    assert m, "boards/_firmware.yaml: no 40-hex upstream_commit line"
    main = subprocess.run(["git", "--git-dir", str(upstream_git), "rev-parse", "main^{commit}"],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert m.group(1) == main == UPSTREAM_PIN

"""Release-directory paths that become links or fetches, judged by the browser (issue 39).

A manifest part path is resolved by Debian's chromium with the same `new URL(part.path, manifestURL)` ESP Web
Tools uses (src/flash.ts; `check_url_resolution` pins it), against the board page's manifest URL on an http
(loopback) and an https origin. Every path the browser resolves off-site, or to anything but the file of that
variant the site copies, must make `release site` refuse with one line; the paths it resolves to the file itself
must pass. The browser is the reference, not xzbuild's own parser.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.hostile.conftest import run_cli
from tests.release.browser import check_url_resolution, chromium
from tests.release.factory import REPO, build_release, site_args

VARIANT = "bread-compact-wifi"
# The two examples first, then the other WHATWG preprocessing and special-scheme tricks.
HOSTILE = [" //evil.example/fw.bin", "https:evil.example/fw.bin", "http:evil.example/fw.bin",
           "\t//evil.example/fw.bin", "\\\\evil.example\\fw.bin", "/\\evil.example/fw.bin", "\x00//evil.example/x.bin",
           "//evil.example/fw.bin", "/fw.bin", "ht\ntps://evil.example/fw.bin", "%2e%2e/%2e%2e/x.bin",
           ".%2E/other/fw.bin", "../other/fw.bin", "fw.bin?x=1", "fw.bin#x", "a\\..\\..\\x.bin"]
BASES = ["http://127.0.0.1:8000/", "https://release.example/"]
MANIFEST = f"{VARIANT}/webtools-factory.json"


@pytest.fixture(scope="module")
def one_variant(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_release(tmp_path_factory.mktemp("links"), [VARIANT])


@pytest.fixture(scope="module")
def one_board(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A boards/ directory holding just the variant's board (the site reads no other; loading all 148 per case
    was most of this module's time)."""
    boards = tmp_path_factory.mktemp("boards")
    for name in ("_firmware.yaml", f"{VARIANT}.yaml"):
        shutil.copyfile(REPO / "boards" / name, boards / name)
    return boards


def _site_args(dist: Path, out: Path, boards: Path) -> list[str]:
    args = site_args(dist, out)
    args[args.index("--boards") + 1] = str(boards)
    return args


@pytest.fixture(scope="module")
def resolved() -> dict[str, list[str]]:
    """Each path (and the real part path) as chromium resolves it against the manifest URL on each base."""
    check_url_resolution()
    with chromium() as browser:
        page = browser.new_page()
        out: dict[str, list[str]] = {}
        for path in [*HOSTILE, "PART"]:
            out[path] = page.evaluate("([p, bases, m]) => bases.map(b => new URL(p, new URL('fw/' + m, b)).href)",
                                      [path, BASES, MANIFEST])
    return out


def _set_part(dist: Path, path: str) -> str:
    manifest = dist / MANIFEST
    data = json.loads(manifest.read_text())
    real = data["builds"][0]["parts"][0]["path"]
    data["builds"][0]["parts"][0]["path"] = path
    manifest.write_text(json.dumps(data))
    target = dist / VARIANT / path  # the file the old check copied: give it one, so only the link is wrong
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            shutil.copyfile(dist / VARIANT / real, target)
    except (OSError, ValueError):
        pass
    return str(real)


def _own_file(url: str, base: str, real: str) -> bool:
    return url == f"{base}fw/{VARIANT}/{real}"


@pytest.mark.parametrize("path", HOSTILE)
def test_part_the_browser_resolves_elsewhere_is_refused(one_variant: Path, one_board: Path, resolved: dict[str, Any],
                                                        tmp_path: Path, path: str,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    dist = tmp_path / "dist"
    shutil.copytree(one_variant, dist)
    real = _set_part(dist, path)
    urls = resolved[path]
    elsewhere = [u for u, b in zip(urls, BASES, strict=True) if not _own_file(u, b, real)]
    assert elsewhere, f"chromium resolves {path!r} to the variant's own file: not a hostile case"
    out = tmp_path / "site"
    code, _, err = run_cli(_site_args(dist, out, one_board), capsys)
    assert code != 0, f"{path!r} passed although chromium fetches {elsewhere}"
    assert "part path" in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()


def test_the_real_part_resolves_to_its_file_and_passes(one_variant: Path, resolved: dict[str, Any],
                                                       tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads((one_variant / MANIFEST).read_text())
    real = data["builds"][0]["parts"][0]["path"]
    with chromium() as browser:
        page = browser.new_page()
        urls = page.evaluate("([p, bases, m]) => bases.map(b => new URL(p, new URL('fw/' + m, b)).href)",
                             [real, BASES, MANIFEST])
    assert all(_own_file(u, b, real) for u, b in zip(urls, BASES, strict=True))
    code, _, err = run_cli(site_args(one_variant, tmp_path / "site"), capsys)
    assert code == 0, err

"""The site's in-browser NVS writer (templates/site/nvsgen.js, run by Node) against Espressif's
esp-idf-nvs-partition-gen 0.3.0 (the library `xzbuild provision` uses): the same input gives the same bytes."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
NVSGEN = REPO / "templates" / "site" / "nvsgen.js"

CASES: list[dict[str, Any]] = [
    {"otaUrl": "http://192.168.1.10:8002/xiaozhi/ota/", "networks": [["home", "secret123"]]},
    {"otaUrl": "https://example.org/xiaozhi/ota/", "networks": []},
    {"otaUrl": "", "networks": [["café ☕", ""], ["office", "p:w"], ["Ω" * 16, "x" * 64]]},
    # ten networks at their size limits and a 3000-byte URL: the URL no longer fits the first page
    {"otaUrl": "http://h/" + "u" * 2991, "networks": [[f"{'s' * 31}{i}", "p" * 64] for i in range(10)]},
    {"otaUrl": "http://h/" + "v" * 3990, "networks": []},  # 4000 bytes with its NUL: needs more than a page
    # 3950 bytes = 124 data entries: after the namespace entry it would end exactly on the page's last entry,
    # which the library never fills, so it opens a second page
    {"otaUrl": "http://h/" + "w" * 3940, "networks": []},
    # "assets over Wi-Fi" (issue 42): namespace assets, key download_url, after the wifi namespace
    {"otaUrl": "http://192.168.1.10:8002/xiaozhi/ota/", "networks": [["home", "secret123"]],
     "assetsUrl": "https://firmware.example/xiaozhi/bread-compact-wifi/generated_assets.bin"},
    {"otaUrl": "", "networks": [["lab", ""]], "assetsUrl": "http://h/" + "a" * 3000},
]
SIZES = [0x4000, 0x3000, 0x6000]


def library_image(case: dict[str, Any], size: int) -> bytes | None:
    """Espressif's writer, driven as its own CLI does (VERSION2, the last page reserved); None if it refuses."""
    from esp_idf_nvs_partition_gen import nvs_partition_gen as gen

    out = io.BytesIO()
    try:
        nvs = gen.nvs_open(out, size - 0x1000, gen.Page.VERSION2)
        gen.write_entry(nvs, "wifi", "namespace", "", "")
        for i, (ssid, password) in enumerate(case["networks"]):
            gen.write_entry(nvs, f"ssid{i or ''}", "data", "string", ssid)
            gen.write_entry(nvs, f"password{i or ''}", "data", "string", password)
        if case["otaUrl"]:
            gen.write_entry(nvs, "ota_url", "data", "string", case["otaUrl"])
        if case.get("assetsUrl"):
            gen.write_entry(nvs, "assets", "namespace", "", "")
            gen.write_entry(nvs, "download_url", "data", "string", case["assetsUrl"])
        gen.nvs_close(nvs)
    except (gen.PageFullError, gen.InsufficientSizeError, gen.InputError):
        return None
    return out.getvalue()


def node_images(tmp_path: Path, cases: list[dict[str, Any]] = CASES,
                sizes: list[int] = SIZES) -> list[list[str | None]]:
    node = shutil.which("node")
    assert node, "node is required (Debian's nodejs, which npm comes with)"
    module = tmp_path / "nvsgen.mjs"
    module.write_bytes(NVSGEN.read_bytes())
    script = tmp_path / "run.mjs"
    script.write_text(
        "import { buildNvs, provisionEntries } from './nvsgen.mjs';\n"
        f"const cases = {json.dumps(cases)}; const sizes = {json.dumps(sizes)};\n"
        "const out = cases.map((c) => sizes.map((size) => {\n"
        "  try { return Buffer.from(buildNvs(provisionEntries(c), size)).toString('hex'); }\n"
        "  catch (e) { return null; }\n"
        "}));\n"
        "process.stdout.write(JSON.stringify(out));\n")
    proc = subprocess.run([node, str(script)], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_browser_nvs_images_equal_the_library(tmp_path: Path) -> None:
    refused = compare(tmp_path, CASES, SIZES)
    assert 0 < refused < len(CASES) * len(SIZES)  # the table holds both outcomes


def compare(tmp_path: Path, cases: list[dict[str, Any]], sizes: list[int]) -> int:
    """Assert the page writes what the library writes for every case and size; how many both refused."""
    results = node_images(tmp_path, cases, sizes)
    refused = 0
    for case, row in zip(cases, results, strict=True):
        for size, got in zip(sizes, row, strict=True):
            want = library_image(case, size)
            if want is None:
                refused += 1
                assert got is None, f"the library refuses {case['otaUrl'][:30]}… at {size:#x}, the page did not"
            else:
                same = got is not None and bytes.fromhex(got) == want  # (not compared inside assert: 24 KiB diffs)
                assert same, (case["otaUrl"][:40], [[len(s), len(p)] for s, p in case["networks"]], hex(size))
    return refused


# Every string length at the 32-byte entry boundaries: passwords of 0-64 bytes (the Wi-Fi maximum 63 is 64 with
# its NUL, two entries exactly), SSIDs of 1-32 bytes (31 + NUL = one entry exactly), and URLs whose NUL-terminated
# length is around 123 and 124 entries and at 4000 bytes (NVS's largest string; with its header entry it would
# take the page's last entry, so the library refuses it on a format-version-2 page, as it refuses 4001).
BOUNDARY_CASES: list[dict[str, Any]] = (
    [{"otaUrl": "", "networks": [["s", "p" * n]]} for n in range(65)]
    + [{"otaUrl": "", "networks": [["s" * n, "pw"]]} for n in range(1, 33)]
    + [{"otaUrl": "", "networks": [["s" * 31, "p" * 63], ["t" * 32, "q" * 31]]}]
    + [{"otaUrl": "http://h/" + "u" * (n - 10), "networks": []} for n in (3935, 3936, 3937, 3967, 3968, 3999, 4000,
                                                                            4001)]
)


def test_browser_nvs_images_at_entry_boundaries_equal_the_library(tmp_path: Path) -> None:
    """Values whose length with the NUL is a multiple of 32 bytes fill their data entries exactly; the page
    must span them as esp-idf-nvs-partition-gen does (ceil(len / 32) data entries), at every length 0-64."""
    refused = compare(tmp_path, BOUNDARY_CASES, [0x6000, 0x3000])
    assert refused == 3 * 2  # the library refuses the 3999-, 4000- and 4001-byte URLs, at both sizes


@pytest.mark.parametrize("case, message", [
    ({"otaUrl": "192.168.1.10:8002/ota/"}, "is not an http:// or https:// URL"),
    ({"networks": [["x" * 33, "pw"]]}, "is 33 bytes"),
    ({"otaUrl": "http://192.168.1.10:8002/ota/", "assetsUrl": "http://h/a.bin"}, "needs a Wi-Fi network"),
])
def test_browser_refuses_what_the_cli_refuses(tmp_path: Path, case: dict[str, Any], message: str) -> None:
    module = tmp_path / "nvsgen.mjs"
    module.write_bytes(NVSGEN.read_bytes())
    code = (f"import {{ provisionEntries }} from './nvsgen.mjs';\n"
            f"try {{ provisionEntries({json.dumps(case)}); console.log('accepted'); }}\n"
            "catch (e) { console.log(e.message); }\n")
    (tmp_path / "run.mjs").write_text(code)
    proc = subprocess.run([shutil.which("node") or "node", "run.mjs"], capture_output=True, text=True, timeout=60,
                          cwd=tmp_path)
    assert message in proc.stdout, proc.stdout + proc.stderr

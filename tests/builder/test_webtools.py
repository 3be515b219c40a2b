"""ESP Web Tools manifests against what the installer really does (npm esp-web-tools 10.4.0, installed by the
Makefile into .venv/npm). The facts are read from its dist/ sources; each is located by pattern and its line
number is reported, so a new release that changes the logic fails here instead of bricking devices."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.builder.firmware import make_project, standin_env
from xzbuild.builder.webtools import CHIP_FAMILIES, MANIFEST_SCHEMA
from xzbuild.cli.main import main

REPO = Path(__file__).resolve().parents[2]
NPM = REPO / ".venv" / "npm" / "node_modules"
EWT = NPM / "esp-web-tools"

# (file under dist/, fact, pattern). Line numbers at 10.4.0 in comments.
FACTS = {
    "skip_improv": ("install-dialog.js", "new_install_improv_wait_time 0: no Improv client",  # l.875-876
                    r"if \(this\._manifest\.new_install_improv_wait_time === 0\) \{\s*this\._client = null;"),
    "no_improv_dashboard": ("install-dialog.js", "without a client the no-Improv dashboard renders",  # l.97-99
                            r"this\._client\s*\? this\._renderDashboard\(\)\s*: this\._renderDashboardNoImprov\(\)"),
    "no_improv_install": ("install-dialog.js", "no-Improv Install: ask if prompt_erase, else erase",  # l.284-289
                          r"_renderDashboardNoImprov\(\) \{[\s\S]*?if \(this\._manifest\.new_install_prompt_erase\) "
                          r"\{\s*this\._state = \"ASK_ERASE\";\s*\}\s*else \{[^}]*?this\._startInstall\(true\);"),
    "box_unticked": ("install-dialog.js", "the 'Erase device' box starts unticked",  # l.535
                     r'<ew-checkbox touch-target="wrapper" class="danger"></ew-checkbox>\s*Erase device'),
    "box_decides": ("install-dialog.js", "Next installs with erase = the box",  # l.551
                    r"this\._startInstall\(checkbox\.checked\);"),
    "erase_to_flash": ("install-dialog.js", "the choice is passed to flash()",  # l.942
                       r"this\.port, this\.manifestPath, this\._manifest, this\._installErase\);"),
    "erase_whole_chip": ("flash.js", "eraseFirst erases the whole chip",  # l.124-130
                         r"if \(eraseFirst\) \{[\s\S]*?await esploader\.eraseFlash\(\);"),
    "parts_at_offsets": ("flash.js", "each part is written at its offset",  # l.102
                         r"fileArray\.push\(\{ data, address: build\.parts\[part\]\.offset \}\);"),
    "no_erase_all": ("flash.js", "writing never erases the rest", r"eraseAll: false,"),  # l.153
    "by_family": ("flash.js", "the build is chosen by chipFamily (and serialType) only",  # l.62-64
                  r"manifest\.builds\.find\(\(b\) => b\.chipFamily === chipFamily && b\.serialType === "
                  r"detectedSerialType\)\s*\|\|\s*manifest\.builds\.find\(\(b\) => b\.chipFamily === chipFamily && "
                  r"b\.serialType === undefined\)"),
    "family_is_chip_name": ("flash.js", "chipFamily is esptool-js's CHIP_NAME",  # l.55
                            r"chipFamily = esploader\.chip\.CHIP_NAME;"),
}


def locate(fact: str) -> int:
    """Line number of ``fact`` in the installed esp-web-tools (fails when the source no longer says it)."""
    name, what, pattern = FACTS[fact]
    path = EWT / "dist" / name
    assert path.is_file(), f"{path} missing: run `make install` (npm esp-web-tools)"
    text = path.read_text(encoding="utf-8")
    m = re.search(pattern, text)
    assert m, f"esp-web-tools {name} no longer shows: {what}"
    return text.count("\n", 0, m.start()) + 1


def test_esp_web_tools_version_and_facts() -> None:
    assert json.loads((EWT / "package.json").read_text())["version"] == "10.4.0"
    lines = {fact: locate(fact) for fact in FACTS}
    print("esp-web-tools 10.4.0 facts:", ", ".join(f"{FACTS[f][0]}:{n} {f}" for f, n in lines.items()))


def installer(manifest: dict[str, object], tick_erase: bool = False) -> bool:
    """Whether the installer erases the chip, from the facts above (xiaozhi manifests skip Improv)."""
    locate("skip_improv"), locate("no_improv_dashboard")
    assert manifest["new_install_improv_wait_time"] == 0
    locate("no_improv_install")
    if not manifest.get("new_install_prompt_erase"):
        return True
    locate("box_unticked"), locate("box_decides"), locate("erase_to_flash")
    return tick_erase


def flash(device: bytearray, out: Path, manifest: dict[str, object], erase: bool, manifest_dir: Path) -> None:
    """flash(): whole-chip erase when asked, then each part at its offset; nothing else is touched."""
    locate("erase_whole_chip"), locate("parts_at_offsets"), locate("no_erase_all")
    if erase:
        device[:] = b"\xff" * len(device)
    (build,) = manifest["builds"]  # type: ignore[misc]
    for part in build["parts"]:
        data = (manifest_dir / part["path"]).read_bytes()
        device[part["offset"] : part["offset"] + len(data)] = data


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("webtools")
    boards, firmware = make_project(root, ["bread-compact-wifi.yaml", "espressif/esp32-p4-function-ev-board.yaml"])
    mp = pytest.MonkeyPatch()
    for key, value in standin_env(root / "standin.jsonl", XZ_STANDIN_ASSETS="bread-compact-wifi").items():
        mp.setenv(key, value)
    try:
        assert main(["matrix", "build", "--all", "--boards", str(boards), "--firmware", str(firmware), "--out",
                     str(root / "dist"), "--cache-dir", str(root / "cache"), "--base-url",
                     "https://example.com/fw/v2.4.2"]) == 0
    finally:
        mp.undo()
    return root / "dist"


def boots(device: bytes, vdir: Path) -> bool:
    """The device holds this build's bootloader, partition table and app where flasher_args.json puts them."""
    args = json.loads((vdir / "flasher_args.json").read_text())
    for role in ("bootloader", "partition-table", "app"):
        data = (vdir / args[role]["file"]).read_bytes()
        offset = int(args[role]["offset"], 16)
        if device[offset : offset + len(data)] != data:
            return False
    otadata = args.get("otadata")
    return otadata is None or set(device[int(otadata["offset"], 16) : int(otadata["offset"], 16) + 0x2000]) == {0xFF}


@pytest.mark.parametrize("kind, tick, erased, nvs_kept", [
    ("factory", False, True, False),
    ("update", False, False, True),  # the default: box unticked
    ("update", True, True, False),  # the person ticks "Erase device": still boots, settings gone
])
def test_manifests_do_what_they_say(dist: Path, kind: str, tick: bool, erased: bool, nvs_kept: bool) -> None:
    vdir = dist / "bread-compact-wifi"
    manifest = json.loads((vdir / f"webtools-{kind}.json").read_text())
    size = 16 << 20
    device = bytearray(b"\xa5" * size)  # an older firmware everywhere ...
    nvs = slice(0x9000, 0xD000)
    device[nvs] = b"settings" * (0x4000 // 8)  # ... and the person's Wi-Fi settings in NVS
    erase = installer(manifest, tick_erase=tick)
    assert erase is erased
    flash(device, dist, manifest, erase, vdir)
    assert boots(bytes(device), vdir), kind
    assert (device[nvs] == b"settings" * (0x4000 // 8)) is nvs_kept
    if kind == "update":
        assert all(not (0x9000 <= p["offset"] < 0xD000) for p in manifest["builds"][0]["parts"])


def test_p4_and_p4x_cannot_be_confused(dist: Path) -> None:
    locate("by_family"), locate("family_is_chip_name")
    chip_name = re.search(r'this\.CHIP_NAME = "([^"]+)"', (NPM / "esptool-js" / "lib" / "targets" / "esp32p4.js")
                          .read_text()).group(1)  # type: ignore[union-attr]
    names = {}
    for full in ("espressif-esp32-p4-function-ev-board", "espressif-esp32-p4x-function-ev-board"):
        release = json.loads((dist / full / "release.json").read_text())
        factory = json.loads((dist / full / "webtools-factory.json").read_text())
        update = json.loads((dist / full / "webtools-update.json").read_text())
        # one chip family for both: the installer cannot tell them apart, so the name must
        assert factory["builds"][0]["chipFamily"] == update["builds"][0]["chipFamily"] == chip_name == "ESP32-P4"
        rev = release["chip_revision"]  # from the app image header
        assert f"chip revision {rev['min']} to {rev['max']}" in factory["name"] and update["name"].startswith(
            factory["name"])
        assert "does not boot on other revisions" in release["webtools_note"]
        names[full] = factory["name"]
    assert "ESP32-P4 (chip revision v1.0 to v2.99)" in names["espressif-esp32-p4-function-ev-board"]
    assert "ESP32-P4X (chip revision v3.0 to v3.99)" in names["espressif-esp32-p4x-function-ev-board"]


def test_schema_and_chip_families_match_esp_web_tools() -> None:
    const = (EWT / "dist" / "const.d.ts").read_text()
    build = re.search(r"export interface Build \{(.*?)\n\}", const, re.S).group(1)  # type: ignore[union-attr]
    manifest = re.search(r"export interface Manifest \{(.*?)\n\}", const, re.S).group(1)  # type: ignore[union-attr]
    build_keys = set(re.findall(r"^    (\w+)\??:", build, re.M))
    manifest_keys = set(re.findall(r"^    (\w+)\??:", manifest, re.M))
    item = MANIFEST_SCHEMA["properties"]["builds"]["items"]
    assert set(item["properties"]) == build_keys == {"chipFamily", "parts", "serialType"}
    assert set(MANIFEST_SCHEMA["properties"]) == manifest_keys
    families = set(re.findall(r'"(ESP[\w-]+)"', build.split("parts")[0]))
    assert set(CHIP_FAMILIES.values()) == families
    for target, family in CHIP_FAMILIES.items():
        js = (NPM / "esptool-js" / "lib" / "targets" / f"{target}.js").read_text()
        assert f'this.CHIP_NAME = "{family}"' in js, target


def test_ota_record_uses_the_base_url(dist: Path) -> None:
    ota = json.loads((dist / "bread-compact-wifi" / "ota.json").read_text())
    assert ota["firmware"]["url"] == "https://example.com/fw/v2.4.2/bread-compact-wifi/xiaozhi.bin"

"""The MCP tool table (hil/protocol/tools_table.py) against its outside references, and the stand-in → app
facts → virtual board path that makes virtual runs register the hardware-dependent tools.

Oracles: upstream ``main/mcp_server.cc`` at 48142026 (``upstream_at_pin``), read by a scanner written here
(tool names, order, user-only, ``Property(...)`` lists and the ``#if``/``if (...)`` conditions around each
registration); ``../shared/specs/device-protocol.md`` §6.4's table (names and kinds).
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from hil.device.mcp import McpServer
from hil.device.tools import register_all
from hil.protocol.app_facts import Hardware, decode_facts
from hil.protocol.tools_table import FIRMWARE_TOOLS, expected_tool_names
from tests.builder.firmware import standin_env

# Words of upstream's conditions -> the Hardware fact each one tests.
_CONDITION_FACTS = {"backlight": "backlight", "HAVE_LVGL": "lvgl", "camera": "camera", "display": "lvgl_display",
                    "CONFIG_LV_USE_SNAPSHOT": "lv_use_snapshot"}
_ADD = re.compile(r"\bAdd(User)?(?:Only)?Tool\(\s*\"([\w.]+)\"")
_PROP = re.compile(r"Property\(\"(\w+)\",\s*kPropertyType(\w+)((?:,\s*[^,()]+)*)\)")


def _upstream_tools(source: str) -> list[dict[str, Any]]:
    """Registrations in McpServer::AddCommonTools / AddUserOnlyTools, in order, with their conditions."""
    text = re.sub(r"//[^\n]*", "", source)
    body = text[text.index("void McpServer::AddCommonTools()") : text.index("void McpServer::AddTool(McpTool*")]
    out: list[dict[str, Any]] = []
    pp: list[str] = []
    braces: list[str | None] = []
    for line in body.splitlines():
        stripped = line.strip()
        if m := re.match(r"#\s*(?:ifdef|if)\s+(\w+)", stripped):
            pp.append(m.group(1))
            continue
        if stripped.startswith("#endif"):
            pp.pop()
            continue
        if m := _ADD.search(line):
            out.append({"name": m.group(2), "user_only": bool(m.group(1)), "props": [],
                        "facts": {_CONDITION_FACTS[w] for c in pp + [b for b in braces if b]
                                  for w in re.findall(r"\w+", c) if w in _CONDITION_FACTS}})
        for name, kind, extra in _PROP.findall(line):
            if out:
                out[-1]["props"].append((name, kind.lower(), [x.strip() for x in extra.split(",") if x.strip()]))
        code = re.sub(r'"(?:\\.|[^"\\])*"', '""', line)
        cond = re.match(r"\s*if\s*\((.*)\)\s*\{", code)
        for ch in code:
            if ch == "{":
                braces.append(cond.group(1) if cond else None)
                cond = None
            elif ch == "}":
                braces.pop()
    return out


@pytest.fixture(scope="module")
def upstream_tools(upstream_at_pin: Path) -> list[dict[str, Any]]:
    return _upstream_tools((upstream_at_pin / "main" / "mcp_server.cc").read_text(encoding="utf-8"))


def test_table_names_order_and_kind_equal_upstream(upstream_tools: list[dict[str, Any]]) -> None:
    """Oracle: upstream mcp_server.cc's AddTool/AddUserOnlyTool calls, in source order."""
    assert [(t["name"], t["user_only"]) for t in upstream_tools] == [(t.name, t.user_only) for t in FIRMWARE_TOOLS]


def test_table_conditions_equal_upstream(upstream_tools: list[dict[str, Any]]) -> None:
    """Oracle: the #if / if (...) blocks around each registration in mcp_server.cc. Each table entry is
    registered exactly when all facts its upstream conditions test hold (checked over all 32 fact sets)."""
    names = ["lvgl", "lvgl_display", "lv_use_snapshot", "camera", "backlight"]
    for spec, theirs in zip(FIRMWARE_TOOLS, upstream_tools, strict=True):
        for values in itertools.product([False, True], repeat=len(names)):
            hw = Hardware(**dict(zip(names, values, strict=True)))
            assert spec.when(hw) == all(getattr(hw, f) for f in theirs["facts"]), (spec.name, hw)


def test_table_properties_equal_upstream(upstream_tools: list[dict[str, Any]]) -> None:
    """Oracle: the Property(...) lists of mcp_server.cc (name, type, default, range)."""
    for spec, theirs in zip(FIRMWARE_TOOLS, upstream_tools, strict=True):
        ours = []
        for p in spec.properties:
            extra = [] if p.default is None else [json.dumps(p.default) if isinstance(p.default, str) else str(p.default)]
            extra += [] if p.minimum is None else [str(p.minimum), str(p.maximum)]
            ours.append((p.name, p.type, extra))
        assert ours == theirs["props"], spec.name


def test_table_equals_spec_section_6_4(shared_fixtures: Path) -> None:
    """Oracle: the tool table of specs/device-protocol.md §6.4 (names, common vs user-only, order)."""
    spec = (shared_fixtures.parent / "specs" / "device-protocol.md").read_text(encoding="utf-8")
    section = spec[spec.index("### 6.4") : spec.index("## 7.")]
    rows = re.findall(r"^\| `([\w.]+)` \| (common|user-only) \|", section, re.M)
    assert rows == [(t.name, "user-only" if t.user_only else "common") for t in FIRMWARE_TOOLS]


# (board symbol, target) -> tools that must (and must not) be listed with user tools.
STANDIN_CASES = [
    ("CONFIG_BOARD_TYPE_BREAD_COMPACT_WIFI_CAM", "esp32s3",
     {"self.camera.take_photo", "self.screen.set_theme", "self.screen.snapshot", "self.screen.preview_image"}, set()),
    ("CONFIG_BOARD_TYPE_ESP32_S3_BOX_3", "esp32s3",
     {"self.screen.set_brightness", "self.screen.get_info", "self.screen.snapshot"}, set()),
    ("CONFIG_BOARD_TYPE_XMINI_C3_V3", "esp32c3", {"self.screen.get_info"},
     {"self.screen.snapshot", "self.screen.preview_image", "self.camera.take_photo"}),
]


@pytest.mark.parametrize("symbol, target, present, absent", STANDIN_CASES)
def test_standin_embeds_facts_and_the_virtual_board_registers_the_table(
        upstream_at_pin: Path, tmp_path: Path, symbol: str, target: str, present: set[str], absent: set[str]) -> None:
    """Oracle: upstream's own board sources and sdkconfig.defaults.<target> (CONFIG_LV_USE_SNAPSHOT on for
    S3/P4) decide the facts; the tool list follows the table checked above."""
    fragment = tmp_path / "fragment.defaults"
    fragment.write_text(f"{symbol}=y\n", encoding="utf-8")
    build = tmp_path / "build"
    proc = subprocess.run(["idf.py", "-C", str(upstream_at_pin), "-B", str(build), f"-DSDKCONFIG={build}/sdkconfig",
                           f"-DSDKCONFIG_DEFAULTS={upstream_at_pin}/sdkconfig.defaults;{fragment}",
                           f"-DIDF_TARGET={target}", "-DBOARD_NAME=probe", "build"],
                          env=standin_env(tmp_path / "log.jsonl", XZ_STANDIN_ASSETS="0"), capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    facts = decode_facts((build / "xiaozhi.bin").read_bytes())
    assert facts["display"]["kind"] in ("lcd", "oled") and facts["lvgl"] is True
    assert facts["lv_use_snapshot"] is (target in ("esp32s3", "esp32p4"))
    mcp = McpServer(lambda level, msg: None, ("probe", "2.4.2"))
    register_all(mcp, facts, {"volume": 70}, lambda level, tag, msg: None, lambda: None)
    listed = json.loads(mcp.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                                    "params": {"withUserTools": True}}) or "{}")
    names = [t["name"] for t in listed["result"]["tools"]]
    assert names == expected_tool_names(facts, user=True)
    assert present <= set(names) and not absent & set(names), names

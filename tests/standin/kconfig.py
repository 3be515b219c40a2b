"""The stand-in's sdkconfig step, done the way ESP-IDF's build does it: kconfgen over the project's Kconfig tree.

ESP-IDF (``tools/cmake/kconfig.cmake``) runs ``python -m kconfgen --kconfig <root Kconfig> --config <sdkconfig>
--defaults F [--defaults F.<target>] ... --output config <sdkconfig> --output json config/sdkconfig.json ...``.
Here the same ``kconfgen`` from esp-idf-kconfig runs in-process over a root Kconfig made of:

- ``idf_core(target)``: the ESP-IDF options the build reads back (target, flash mode/frequency/size choices,
  partition table choice, ESP32-P4 revision choice, the chip capabilities the firmware tests),
- component declarations for symbols in ESP-IDF's and the managed components' namespaces
  (``COMPONENT_NAMESPACES``) that the inputs assign or the firmware Kconfig references — real ESP-IDF
  declares thousands of these; the stand-in declares the ones a build mentions, typed by their value,
- the firmware's own ``main/Kconfig.projbuild``, unchanged.

So a symbol neither ESP-IDF nor the firmware declares (``CONFIG_BOARD_TYPE_NEW`` before ``generate`` ran) is
dropped with kconfgen's "unknown kconfig symbol" note, a choice member whose ``depends on`` fails (a board of
another target) is not selected, and the choice falls back to its default — what ESP-IDF does.
Nothing here uses xzbuild: the stand-in must not share code with what it checks.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

TARGETS = ("esp32", "esp32s2", "esp32s3", "esp32c2", "esp32c3", "esp32c5", "esp32c6", "esp32c61", "esp32h2",
           "esp32p4", "esp32s31")
# Chip capabilities (ESP-IDF's soc_caps.h → Kconfig.soc_caps.in) the firmware Kconfig tests.
SOC_CAPS = {"esp32p4": ("SOC_JPEG_DECODE_SUPPORTED", "SOC_JPEG_ENCODE_SUPPORTED")}
SOC_ALL = ("SOC_ADC_SUPPORTED",)
# Namespaces of ESP-IDF components and of the managed components the firmware pulls in (lvgl LV_,
# esp32-camera CAMERA_, esp_codec_dev CODEC_, esp-sr SR_, esp_mmap_assets MMAP_, esp_hosted SLAVE_).
COMPONENT_NAMESPACES = ("BOOTLOADER_", "BT_", "CAMERA_", "CODEC_", "COMPILER_", "ESP_", "ESP32", "ESPTOOLPY_",
                        "ETH_", "FREERTOS_", "HTTPD_", "IDF_", "LV_", "LWIP_", "MBEDTLS_", "MMAP_", "NEWLIB_",
                        "PARTITION_TABLE_", "PM_", "SLAVE_", "SOC_", "SPI_", "SPIRAM", "SR_", "UART_", "USB_",
                        "LOG_", "HEAP_", "NVS_", "VFS_")
FLASH_SIZES = ("1MB", "2MB", "4MB", "8MB", "16MB", "32MB", "64MB", "128MB")
FLASH_MODES = ("QIO", "QOUT", "DIO", "DOUT", "OPI")
FLASH_FREQS = ("120M", "80M", "64M", "60M", "48M", "40M", "32M", "30M", "26M", "24M", "20M", "16M", "15M")
_ASSIGN = re.compile(r"^(?:# )?CONFIG_([A-Za-z0-9_]+)(?:=(.*)| is not set)$")


def _choice(name: str, prompt: str, members: list[tuple[str, str]], default: str) -> str:
    body = "".join(f"    config {sym}\n        bool \"{label}\"\n" for sym, label in members)
    return f"choice {name}\n    prompt \"{prompt}\"\n    default {default}\n{body}endchoice\n"


def idf_core(target: str) -> str:
    """Kconfig text for the ESP-IDF options the stand-in's build reads, with ``target`` fixed."""
    parts = [f"config IDF_TARGET\n    string\n    default \"{target}\"\n"]
    parts += [f"config IDF_TARGET_{t.upper()}\n    bool\n    default {'y' if t == target else 'n'}\n"
              for t in TARGETS]
    caps = set(SOC_CAPS.get(target, ())) | set(SOC_ALL)
    parts += [f"config {cap}\n    bool\n    default {'y' if cap in caps else 'n'}\n"
              for cap in sorted({c for cs in SOC_CAPS.values() for c in cs} | set(SOC_ALL))]
    parts.append('menu "Serial flasher config"\n')
    parts.append(_choice("ESPTOOLPY_FLASHMODE", "Flash SPI mode",
                         [(f"ESPTOOLPY_FLASHMODE_{m}", m) for m in FLASH_MODES], "ESPTOOLPY_FLASHMODE_DIO"))
    parts.append(_choice("ESPTOOLPY_FLASHFREQ", "Flash SPI speed",
                         [(f"ESPTOOLPY_FLASHFREQ_{f}", f) for f in FLASH_FREQS], "ESPTOOLPY_FLASHFREQ_80M"))
    parts.append(_choice("ESPTOOLPY_FLASHSIZE", "Flash size",
                         [(f"ESPTOOLPY_FLASHSIZE_{s}", s) for s in FLASH_SIZES], "ESPTOOLPY_FLASHSIZE_2MB"))
    parts.append('endmenu\nmenu "Partition Table"\n')
    parts.append(_choice("PARTITION_TABLE_TYPE", "Partition Table",
                         [("PARTITION_TABLE_SINGLE_APP", "Single factory app, no OTA"),
                          ("PARTITION_TABLE_TWO_OTA", "Factory app, two OTA definitions"),
                          ("PARTITION_TABLE_CUSTOM", "Custom partition table CSV")], "PARTITION_TABLE_SINGLE_APP"))
    parts.append('config PARTITION_TABLE_CUSTOM_FILENAME\n    string "Custom partition CSV file"\n'
                 '    depends on PARTITION_TABLE_CUSTOM\n    default "partitions.csv"\n'
                 'config PARTITION_TABLE_OFFSET\n    hex "Offset of partition table"\n    default 0x8000\nendmenu\n')
    if target == "esp32p4":
        # ESP-IDF 6: P4 builds target chip revision v3.x unless the "< v3.0" option is selected.
        parts.append('config ESP32P4_SELECTS_REV_LESS_V3\n    bool "Select ESP32-P4 revisions <3.0"\n'
                     "    default n\n"
                     'choice ESP32P4_REV_MIN\n    prompt "Minimum Supported ESP32-P4 Revision"\n'
                     "    default ESP32P4_REV_MIN_0 if ESP32P4_SELECTS_REV_LESS_V3\n"
                     "    default ESP32P4_REV_MIN_300\n"
                     + "".join(f'    config ESP32P4_REV_MIN_{n}\n        bool "Rev v{n // 100}.{n % 100}"\n'
                               f"        depends on {'' if n < 300 else '!'}ESP32P4_SELECTS_REV_LESS_V3\n"
                               for n in (0, 1, 100, 300))
                     + "endchoice\n")
    return "".join(parts)


def _assigned(paths: list[Path]) -> dict[str, str]:
    """Symbol → last raw value over the given config files (``is not set`` reads as ``n``)."""
    out: dict[str, str] = {}
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            m = _ASSIGN.match(line.strip())
            if m:
                out[m.group(1)] = "n" if m.group(2) is None else m.group(2)
    return out


def _declaration(name: str, value: str | None) -> str:
    if value is None or value in ("y", "n"):
        return f'config {name}\n    bool "{name}"\n'
    if value.startswith('"'):
        return f'config {name}\n    string "{name}"\n'
    if value.lower().startswith("0x"):
        return f'config {name}\n    hex "{name}"\n'
    if re.fullmatch(r"-?\d+", value):
        return f'config {name}\n    int "{name}"\n'
    return f'config {name}\n    string "{name}"\n'


def _in_namespace(name: str) -> bool:
    return name.startswith(COMPONENT_NAMESPACES)


def _load(top: Path):  # type: ignore[no-untyped-def]
    import esp_kconfiglib

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return esp_kconfiglib.Kconfig(str(top), warn=False)


def root_kconfig(project: Path, build: Path, target: str, inputs: list[Path]) -> Path:
    """Write ``build/kconfigs/`` (core, component declarations, root) and return the root Kconfig."""
    kdir = build / "kconfigs"
    kdir.mkdir(parents=True, exist_ok=True)
    core = kdir / "Kconfig.idf"
    core.write_text(idf_core(target), encoding="utf-8")
    projbuild = project / "main" / "Kconfig.projbuild"
    sources = [f'source "{core}"\n'] + ([f'source "{projbuild}"\n'] if projbuild.is_file() else [])
    probe = kdir / "Kconfig.probe"
    probe.write_text('mainmenu "probe"\n' + "".join(sources), encoding="utf-8")
    kconf = _load(probe)
    declared = {n for n, s in kconf.syms.items() if s.nodes}
    referenced = {n for n, s in kconf.syms.items() if not s.nodes and re.fullmatch(r"[A-Z][A-Z0-9_]*", n)}
    assigned = _assigned(inputs)
    wanted = {n: assigned.get(n) for n in (set(assigned) | referenced) - declared if _in_namespace(n)}
    components = kdir / "Kconfig.components"
    components.write_text('menu "Component config"\n' + "".join(_declaration(n, v) for n, v in sorted(wanted.items()))
                          + "endmenu\n", encoding="utf-8")
    root = kdir / "Kconfig"
    root.write_text('mainmenu "Espressif IoT Development Framework Configuration"\n'
                    f'source "{core}"\nsource "{components}"\n' + "".join(sources[1:]), encoding="utf-8")
    return root


def resolve_sdkconfig(project: Path, build: Path, target: str, defaults: list[Path], sdkconfig: Path) -> str:
    """Run kconfgen like ESP-IDF: defaults then the existing sdkconfig; write sdkconfig, config/sdkconfig.json,
    sdkconfig.h and sdkconfig.cmake. Returns kconfgen's notes (unknown symbols), which idf.py prints."""
    from kconfgen.core import main as kconfgen

    existing = [sdkconfig] if sdkconfig.is_file() else []
    root = root_kconfig(project, build, target, [*defaults, *existing])
    config_dir = build / "config"
    config_dir.mkdir(parents=True, exist_ok=True)
    sdkconfig.parent.mkdir(parents=True, exist_ok=True)
    args = ["--kconfig", str(root), "--config", str(sdkconfig), *[a for d in defaults for a in ("--defaults", str(d))],
            "--env", f"IDF_TARGET={target}", "--output", "config", str(sdkconfig),
            "--output", "json", str(config_dir / "sdkconfig.json"), "--output", "header",
            str(config_dir / "sdkconfig.h"), "--output", "cmake", str(config_dir / "sdkconfig.cmake")]
    notes = io.StringIO()
    with contextlib.redirect_stdout(notes), contextlib.redirect_stderr(notes):
        kconfgen.main(args=args, standalone_mode=False)
    return notes.getvalue()

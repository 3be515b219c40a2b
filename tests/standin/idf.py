#!/usr/bin/env python3
"""Stand-in for ESP-IDF's ``idf.py`` (tests only): honours the command line xzbuild uses, writes valid outputs.

    idf.py [--preview] [-C PROJECT] -B BUILD -DSDKCONFIG=BUILD/sdkconfig -DSDKCONFIG_DEFAULTS="a;b"
           -DIDF_TARGET=esp32s3 -DBOARD_NAME=name build
    idf.py -B BUILD merge-bin            # BUILD/merged-binary.bin from flasher_args.json
    idf.py --version

``build`` resolves the sdkconfig like ESP-IDF: kconfgen (esp-idf-kconfig) over the firmware's
``main/Kconfig.projbuild`` plus the ESP-IDF options in ``kconfig.py`` (defaults files in order, each F followed
by F.<target>, then the existing sdkconfig; undeclared symbols are dropped), then writes, with esptool's image classes, ``bootloader/bootloader.bin`` and ``<project>.bin``
(real ``esp_app_desc_t``, checksum, SHA-256), ``partition_table/partition-table.bin`` from the configured CSV
(``partitions.py``, gen_esp32part's rules), ``ota_data_initial.bin``, ``generated_assets.bin`` when the table has
``assets`` (or, with ``CONFIG_FLASH_CUSTOM_ASSETS=y``, the ``CONFIG_CUSTOM_ASSETS_FILE`` bundle, as upstream's CMake
does),
``flasher_args.json``, ``config/sdkconfig.json``, ``project_description.json`` and the app's ``<project>.elf``
and ``<project>.map`` (``elfmap.py``: a symbol table and a GNU ld map `esp-idf-size` reads). Before writing
anything, ``build`` runs the firmware's real ``main/CMakeLists.txt`` with ``cmake -P`` through
``idf_shim.cmake`` (``cmake_step.py``) and fails where the real build would: CMake's own errors, no board
source compiled, a missing board dir, a font or emoji collection the pinned components lack
(``components.py``); what CMake selected goes to ``<build>/xzbuild-cmake.json``.

Knobs (environment; PATTERN is an fnmatch pattern on BOARD_NAME, lists are comma-separated):
  XZ_STANDIN_LOG=FILE            append one JSON line per invocation (argv, action, board, pid, times)
  XZ_STANDIN_FAIL=PATTERN,...    fail ``build`` for these boards with a compiler-style error
  XZ_STANDIN_DELAY=PATTERN=S,... make ``build`` take S seconds from process start (first matching pattern)
  XZ_STANDIN_APP_SIZE=PATTERN=N  make the app at least N bytes (partition-fit tests)
  XZ_STANDIN_APP_FILL=FILE       the app's code segment is FILE's bytes, repeated (benchmarks: as compressible
                                 as a real app), instead of hash output
  XZ_STANDIN_ASSETS_FILE=PATTERN=FILE,..  the assets image of these boards is FILE (benchmarks: a bundle of a
                                 given size and content)
  XZ_STANDIN_ASSETS=0|PATTERN,.. write generated_assets.bin for no / only these boards (default: all;
                                 assets at 0x800000 make merged images 8 MB, so tests limit them)
  XZ_STANDIN_IDF_VERSION=6.0.2   the IDF version reported and stamped into images
  XZ_STANDIN_SELF_CHECK_FAIL=PATTERN,...  build an app for these boards that fails its self-check: it crashes
                                 at start, before confirming itself, so an OTA to it is rolled back
  XZ_STANDIN_PEER_DEVIATION=PATTERN,...  build an app for these boards whose MCP replies lack session_id, as
                                 the firmware author's MQTT gateway sends them (server-tolerance tests)
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
try:
    import esptool  # noqa: F401
except ImportError:  # started by a bare python3 from PATH: re-run with the project's virtualenv
    venv_python = REPO / ".venv" / "bin" / "python"
    if venv_python.exists() and not os.environ.get("XZ_STANDIN_REEXEC"):
        os.environ["XZ_STANDIN_REEXEC"] = "1"
        os.execv(str(venv_python), [str(venv_python), __file__, *sys.argv[1:]])
    raise
sys.path[:0] = [str(HERE), str(REPO)]

from board_facts import hardware_facts  # noqa: E402
from elfmap import write_elf_and_map  # noqa: E402
from images import make_app_image, make_bootloader_image  # noqa: E402

CHOICES = ("CONFIG_ESPTOOLPY_FLASHSIZE_", "CONFIG_ESPTOOLPY_FLASHMODE_", "CONFIG_ESPTOOLPY_FLASHFREQ_",
           "CONFIG_PARTITION_TABLE_SINGLE_APP", "CONFIG_PARTITION_TABLE_TWO_OTA", "CONFIG_PARTITION_TABLE_CUSTOM",
           "CONFIG_IDF_TARGET_")
SINGLE_APP_CSV = "nvs, data, nvs, , 0x6000,\nphy_init, data, phy, , 0x1000,\nfactory, app, factory, , 1M,\n"


class Failure(Exception):
    """Exit with an idf.py-like message."""


def process_age() -> float:
    """Seconds since this process started (so a build takes a fixed total time, interpreter start included)."""
    try:
        start_ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        return max(0.0, uptime - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return 0.0


def idf_version() -> str:
    return os.environ.get("XZ_STANDIN_IDF_VERSION", "6.0.2")


def knob(name: str, board: str) -> str | None:
    """Value of a PATTERN=VALUE list knob for this board (first match), or None."""
    for item in filter(None, os.environ.get(name, "").split(",")):
        pattern, _, value = item.partition("=")
        if fnmatch.fnmatchcase(board, pattern.strip()):
            return value.strip()
    return None


def parse_args(argv: list[str]) -> tuple[dict[str, str], list[str], dict[str, str]]:
    opts: dict[str, str] = {}
    defines: dict[str, str] = {}
    actions: list[str] = []
    it = iter(argv)
    for arg in it:
        if arg in ("-B", "--build-dir", "-C", "--project-dir", "-o", "--output"):
            opts[arg.lstrip("-")[0]] = next(it)
        elif arg.startswith("-D"):
            key, _, value = (arg[2:] or next(it)).partition("=")
            defines[key] = value
        elif arg in ("--preview", "-v", "--verbose", "--no-ccache", "--ccache"):
            opts[arg] = "1"
        elif arg == "--version":
            actions.append("--version")
        elif arg.startswith("-"):
            raise Failure(f"Error: No such option: {arg}")
        else:
            actions.append(arg)
    return opts, actions, defines


def read_sdkconfig(path: Path, into: dict[str, str]) -> None:
    """Apply a defaults/sdkconfig file: later assignments win, a choice member set to y clears its siblings."""
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        m = re.fullmatch(r"# (CONFIG_\w+) is not set", line)
        if m:
            into[m.group(1)] = "n"
            continue
        if not line.startswith("CONFIG_") or "=" not in line:
            continue
        key, value = line.split("=", 1)
        if value == "y":
            for prefix in CHOICES:
                if key.startswith(prefix):
                    for other in [k for k in into if k.startswith(prefix) and k != key]:
                        into[other] = "n"
        into[key] = value


def cache_file(build: Path) -> Path:
    return build / "CMakeCache.txt"


def load_cache(build: Path) -> dict[str, str]:
    try:
        return dict(line.split("=", 1) for line in cache_file(build).read_text().splitlines() if "=" in line)
    except FileNotFoundError:
        return {}


def project_facts(project: Path) -> tuple[str, str]:
    cmake = project / "CMakeLists.txt"
    if not cmake.is_file():
        raise Failure(f"{project} is not an ESP-IDF project: CMakeLists.txt not found")
    text = cmake.read_text(encoding="utf-8")
    version = re.search(r'^set\(PROJECT_VER\s+"([^"]+)"\)', text, re.M)
    name = re.search(r"^project\((\w+)\)", text, re.M)
    return (name.group(1) if name else "app"), (version.group(1) if version else "1")


def configure(project: Path, build: Path, defines: dict[str, str]) -> dict[str, str]:
    """Merge the -D values with CMakeCache.txt like CMake does, and refuse a target change."""
    cache = load_cache(build)
    target = defines.get("IDF_TARGET") or cache.get("IDF_TARGET") or os.environ.get("IDF_TARGET") or "esp32"
    if cache.get("IDF_TARGET") and cache["IDF_TARGET"] != target:
        raise Failure(f"Target settings are not consistent: '{target}' in the command line, "
                      f"'{cache['IDF_TARGET']}' in CMakeCache.txt. Run 'idf.py fullclean'.")
    merged = {**cache, **defines, "IDF_TARGET": target}
    merged.setdefault("SDKCONFIG", str(project / "sdkconfig"))
    build.mkdir(parents=True, exist_ok=True)
    cache_file(build).write_text("".join(f"{k}={v}\n" for k, v in sorted(merged.items())))
    return merged


def defaults_files(project: Path, cfg: dict[str, str]) -> list[Path]:
    """SDKCONFIG_DEFAULTS in order, each file F followed by F.<target> when it exists (ESP-IDF's rule)."""
    files = []
    for entry in filter(None, cfg.get("SDKCONFIG_DEFAULTS", "").split(";")):
        path = Path(entry) if Path(entry).is_absolute() else project / entry
        if not path.is_file():
            raise Failure(f"CMake Error: SDKCONFIG_DEFAULTS '{entry}' does not exist.")
        files.append(path)
        target_file = path.with_name(f"{path.name}.{cfg['IDF_TARGET']}")
        if target_file.is_file():
            files.append(target_file)
    return files


def configured_sdkconfig(project: Path, build: Path, cfg: dict[str, str]) -> dict[str, str]:
    """Resolve the sdkconfig through the project's Kconfig with kconfgen (tests/standin/kconfig.py), as ESP-IDF's
    configure step does, and return the values it wrote (``n`` for ``is not set``)."""
    from kconfig import resolve_sdkconfig

    sdkconfig = Path(cfg["SDKCONFIG"])
    notes = resolve_sdkconfig(project, build, cfg["IDF_TARGET"], defaults_files(project, cfg), sdkconfig)
    sys.stdout.write(notes)
    values: dict[str, str] = {}
    read_sdkconfig(sdkconfig, values)
    return values


def flash_settings(values: dict[str, str]) -> tuple[str, str, str]:
    def chosen(prefix: str, default: str) -> str:
        for key, value in values.items():
            if key.startswith(prefix) and value == "y":
                return key.removeprefix(prefix)
        return default

    size = chosen("CONFIG_ESPTOOLPY_FLASHSIZE_", "2MB")
    mode = chosen("CONFIG_ESPTOOLPY_FLASHMODE_", "DIO").lower()
    # ESP-IDF writes "dio" into the image header for QIO: the 2nd-stage bootloader switches to QIO itself.
    mode = {"qio": "dio", "qout": "dout"}.get(mode, mode)
    freq = chosen("CONFIG_ESPTOOLPY_FLASHFREQ_", "80M").lower()
    return mode, size, freq


def chip_revisions(target: str, values: dict[str, str]) -> tuple[int, int]:
    """(min, max) chip revision (major*100+minor) the app header carries: CONFIG_<CHIP>_REV_MIN_<N>=y sets the
    minimum; ESP32-P4 builds are rev >= v3.0 (P4X) unless CONFIG_ESP32P4_SELECTS_REV_LESS_V3=y."""
    prefix = f"CONFIG_{target.upper()}_REV_MIN_"
    chosen = [int(k.removeprefix(prefix)) for k, v in values.items()
              if k.startswith(prefix) and k.removeprefix(prefix).isdigit() and v == "y"]
    if target == "esp32p4":
        below_v3 = values.get("CONFIG_ESP32P4_SELECTS_REV_LESS_V3") == "y"
        return (chosen[0] if chosen else (0 if below_v3 else 300)), (299 if below_v3 else 399)
    return (chosen[0] if chosen else 0), 99


def build_action(project: Path, build: Path, defines: dict[str, str]) -> None:
    from partitions import TableError, check_app_fits, check_fits_flash, number, parse

    cfg = configure(project, build, defines)
    target, board = cfg["IDF_TARGET"], cfg.get("BOARD_NAME", "")
    if board and not re.fullmatch(r"[a-z0-9.-]+", board):
        raise Failure(f"CMake Error: Invalid BOARD_NAME '{board}': only lowercase letters, digits, '.' and '-'")
    project_name, version = project_facts(project)
    values = configured_sdkconfig(project, build, cfg)
    delay = float(knob("XZ_STANDIN_DELAY", board) or 0)
    time.sleep(max(0.0, delay / 2 - process_age()))
    if knob("XZ_STANDIN_FAIL", board) is not None:
        print(f"[412/1630] Building CXX object esp-idf/main/CMakeFiles/__idf_main.dir/boards/{board}.cc.obj")
        print(f"../main/boards/{board}/{board}.cc:42:5: error: 'AudioCodec' was not declared in this scope",
              file=sys.stderr)
        print("ninja: build stopped: subcommand failed.", file=sys.stderr)
        raise Failure("ninja failed with exit code 1")
    mode, size, freq = flash_settings(values)
    if values.get("CONFIG_PARTITION_TABLE_CUSTOM") == "y":
        csv_name = values.get("CONFIG_PARTITION_TABLE_CUSTOM_FILENAME", '"partitions.csv"').strip('"')
        csv_path = project / csv_name
        if not csv_path.is_file():
            raise Failure(f"CMake Error: partition table {csv_path} not found")
        csv_text, csv_source = csv_path.read_text(encoding="utf-8"), str(csv_path)
    else:
        csv_text, csv_source = SINGLE_APP_CSV, "partitions_singleapp.csv"
    try:
        table = parse(csv_text, csv_source, table_offset=number(values.get("CONFIG_PARTITION_TABLE_OFFSET", "0x8000")))
        check_fits_flash(table, size)
    except (TableError, ValueError) as exc:
        raise Failure(f"Partition table error: {exc}") from None
    main_cmake_step(project, build, cfg, board, table, csv_source)
    info = {"board_type": sorted(k for k, v in values.items() if k.startswith("CONFIG_BOARD_TYPE_") and v == "y"),
            "preview": bool(defines.get("_PREVIEW")), **hardware_facts(project, values)}
    if knob("XZ_STANDIN_SELF_CHECK_FAIL", board) is not None:
        info["self_check"] = "fail"
    if knob("XZ_STANDIN_PEER_DEVIATION", board) is not None:
        info["peer_deviation"] = "mcp-no-session-id"
    min_rev, max_rev = chip_revisions(target, values)
    app = make_app_image(target, version=version, board_name=board or project_name, project_name=project_name,
                         idf_ver=f"v{idf_version()}", info=info, size=int(knob("XZ_STANDIN_APP_SIZE", board) or 0),
                         flash_mode=mode, flash_size=size, flash_freq=freq, min_rev_full=min_rev,
                         max_rev_full=max_rev, fill=Path(os.environ["XZ_STANDIN_APP_FILL"]).read_bytes()
                         if os.environ.get("XZ_STANDIN_APP_FILL") else b"")
    try:
        check_app_fits(table, len(app), f"{project_name}.bin")
    except TableError as exc:
        raise Failure(f"Error: {exc}") from None
    boot = make_bootloader_image(target, idf_ver=f"v{idf_version()}", flash_mode=mode, flash_size=size,
                                 flash_freq=freq)
    time.sleep(max(0.0, delay - process_age()))  # the whole build takes `delay` (interpreter start included)
    if values.get("CONFIG_FLASH_CUSTOM_ASSETS") == "y":
        custom_assets_file(project, values)  # fail like CMake's configure step, before any output
    write_outputs(build, {**cfg, "PROJECT_DIR": str(project)}, project_name, version, table, app, boot, values,
                  (mode, size, freq))


def main_cmake_step(project: Path, build: Path, cfg: dict[str, str], board: str, table, csv_source: str) -> None:  # type: ignore[no-untyped-def]
    """Run the firmware's real main/CMakeLists.txt (cmake_step.py); refuse where the real build would."""
    from cmake_step import OUTPUT, CMakeRefused, run_main_cmake

    parts = {p.name: (p.offset, p.size) for p in table.partitions}
    try:
        selected = run_main_cmake(project, build, cfg["IDF_TARGET"], board, idf_version(), parts,
                                  Path(cfg["SDKCONFIG"]))
    except CMakeRefused as exc:
        raise Failure(f"CMake Error: {exc}") from None
    if selected is not None:
        selected["partition_table"] = csv_source
        (build / OUTPUT).write_text(json.dumps(selected, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def custom_assets_file(project: Path, values: dict[str, str]) -> Path | None:
    """``CONFIG_CUSTOM_ASSETS_FILE`` as upstream's CMake resolves it: absolute, or relative to ``main/``.
    None for a URL (upstream downloads it; the stand-in is offline and flashes a placeholder instead)."""
    source = values.get("CONFIG_CUSTOM_ASSETS_FILE", "").strip('"')
    if re.match(r"^https?://", source):
        return None
    local = Path(source) if Path(source).is_absolute() else project / "main" / source
    if not source or not local.is_file():
        raise Failure(f"CMake Error: Assets file not found: {local}")
    return local


def write_outputs(build: Path, cfg: dict[str, str], project_name: str, version: str, table, app: bytes,  # type: ignore[no-untyped-def]
                  boot: bytes, values: dict[str, str], flash: tuple[str, str, str]) -> None:
    from esptool.targets import CHIP_DEFS

    target = cfg["IDF_TARGET"]
    mode, size, freq = flash
    files: dict[str, tuple[int, str]] = {}
    (build / "bootloader").mkdir(parents=True, exist_ok=True)
    (build / "bootloader" / "bootloader.bin").write_bytes(boot)
    files["bootloader"] = (CHIP_DEFS[target].BOOTLOADER_FLASH_OFFSET, "bootloader/bootloader.bin")
    (build / "partition_table").mkdir(exist_ok=True)
    (build / "partition_table" / "partition-table.bin").write_bytes(table.to_binary())
    files["partition-table"] = (table.table_offset, "partition_table/partition-table.bin")
    otadata = table.find(type="data", subtype="ota")
    if otadata is not None:
        (build / "ota_data_initial.bin").write_bytes(b"\xff" * otadata.size)
        files["otadata"] = (otadata.offset, "ota_data_initial.bin")
    boot_app = table.boot_app()
    (build / f"{project_name}.bin").write_bytes(app)
    write_elf_and_map(build, project_name, target, app)  # <project>.elf and .map, as ESP-IDF's link step leaves
    if boot_app is not None:
        files["app"] = (boot_app.offset, f"{project_name}.bin")
    assets = table.find("assets")
    selected = os.environ.get("XZ_STANDIN_ASSETS")
    wants_assets = values.get("CONFIG_FLASH_NONE_ASSETS") != "y" and (
        selected is None or (selected != "0" and knob("XZ_STANDIN_ASSETS", cfg.get("BOARD_NAME", "")) is not None))
    local = custom_assets_file(Path(cfg.get("PROJECT_DIR", ".")), values) \
        if values.get("CONFIG_FLASH_CUSTOM_ASSETS") == "y" else None
    if assets is not None and local is not None:
        # Upstream's FLASH_CUSTOM_ASSETS: CONFIG_CUSTOM_ASSETS_FILE, absolute or relative to main/, is flashed
        # to the assets partition as is.
        shutil.copyfile(local, build / local.name)
        files["assets"] = (assets.offset, local.name)
    elif assets is not None and wants_assets and knob("XZ_STANDIN_ASSETS_FILE", cfg.get("BOARD_NAME", "")):
        shutil.copyfile(knob("XZ_STANDIN_ASSETS_FILE", cfg.get("BOARD_NAME", "")) or "", build / "generated_assets.bin")
        files["assets"] = (assets.offset, "generated_assets.bin")
    elif assets is not None and wants_assets:
        from assets_gen.container import pack_container

        index = json.dumps({"version": 1, "board": cfg.get("BOARD_NAME", ""), "target": target}).encode()
        (build / "generated_assets.bin").write_bytes(pack_container([("index.json", index)]))
        files["assets"] = (assets.offset, "generated_assets.bin")
    args = {
        "write_flash_args": ["--flash-mode", mode, "--flash-size", size, "--flash-freq", freq],
        "flash_settings": {"flash_mode": mode, "flash_size": size, "flash_freq": freq},
        "flash_files": {f"{off:#x}": path for off, path in sorted(files.values())},
        **{name: {"offset": f"{off:#x}", "file": path, "encrypted": "false"} for name, (off, path) in files.items()},
        "extra_esptool_args": {"after": "hard-reset", "before": "default-reset", "stub": True, "chip": target},
    }
    (build / "flasher_args.json").write_text(json.dumps(args, indent=4) + "\n")
    (build / "project_description.json").write_text(json.dumps({
        "project_name": project_name, "project_version": version, "target": target,
        "idf_ver": f"v{idf_version()}", "app_bin": f"{project_name}.bin", "app_elf": f"{project_name}.elf",
        "build_dir": str(build),
        "sdkconfig_file": cfg["SDKCONFIG"], "board_name": cfg.get("BOARD_NAME", ""),
    }, indent=4) + "\n")


def merge_bin_action(build: Path, output: str | None) -> None:
    from esptool.cmds import merge_bin

    try:
        args = json.loads((build / "flasher_args.json").read_text())
    except FileNotFoundError:
        raise Failure(f"{build}/flasher_args.json not found; run 'idf.py build' first") from None
    chip = args["extra_esptool_args"]["chip"]
    settings = args["flash_settings"]
    pairs = [(int(off, 16), str(build / path)) for off, path in args["flash_files"].items()]
    merge_bin(pairs, chip, output or str(build / "merged-binary.bin"), flash_freq=settings["flash_freq"],
              flash_mode=settings["flash_mode"], flash_size=settings["flash_size"])


def main(argv: list[str]) -> int:
    started = time.time()
    status = 0
    opts: dict[str, str] = {}
    actions: list[str] = []
    defines: dict[str, str] = {}
    try:
        opts, actions, defines = parse_args(argv)
        project = Path(opts.get("C", ".")).resolve()
        build = Path(opts.get("B", str(project / "build"))).resolve()
        if "--preview" in opts:
            defines["_PREVIEW"] = "1"
        for action in actions:
            if action == "--version":
                print(f"ESP-IDF v{idf_version()}")
            elif action in ("build", "all", "app"):
                build_action(project, build, defines)
            elif action == "reconfigure":
                configured_sdkconfig(project, build, configure(project, build, defines))
            elif action == "merge-bin":
                merge_bin_action(build, opts.get("o"))
            elif action == "fullclean":
                import shutil

                shutil.rmtree(build, ignore_errors=True)
            else:
                raise Failure(f"Error: No such command '{action}'.")
    except Failure as exc:
        print(exc, file=sys.stderr)
        status = 2
    log = os.environ.get("XZ_STANDIN_LOG")
    if log:
        record = {"argv": argv, "actions": actions, "board": defines.get("BOARD_NAME"), "pid": os.getpid(),
                  "start": started, "end": time.time(), "status": status}
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

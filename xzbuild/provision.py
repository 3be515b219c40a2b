"""NVS images that point a flashed xiaozhi board at a server and a Wi-Fi network without rebuilding.

What the firmware reads (upstream 48142026):

- ``main/ota.cc`` ``Ota::GetCheckVersionUrl``: ``Settings("wifi").GetString("ota_url")``, and
  ``CONFIG_OTA_URL`` only when that key is empty or missing.
- the Wi-Fi list of the ``78/esp-wifi-connect`` component (``~3.2.2``, ``ssid_manager.cc``): namespace
  ``wifi``, up to ``MAX_WIFI_SSID_COUNT`` = 10 networks under the keys ``ssid``/``password``,
  ``ssid1``/``password1`` … ``ssid9``/``password9`` (strings read into ``char ssid[33]`` and
  ``char password[65]``, so at most 32 and 64 bytes); ``SaveToNvs`` writes each ``ssid`` then its
  ``password``, and the first network is the preferred one.

The image is written by Espressif's ``esp-idf-nvs-partition-gen`` library, sized to the ``nvs``
partition of the variant's partition table (``nvs_flash_init`` opens the partition labelled ``nvs``).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from xzbuild.core.errors import Location, UserError
from xzbuild.partitions.table import Partition, PartitionTable

WIFI_NAMESPACE = "wifi"
#: ``Application::CheckAssetsVersion`` (main/application.cc): ``Settings("assets").GetString("download_url")``;
#: at the next boot the firmware erases the key, downloads the URL into the ``assets`` partition and applies it
ASSETS_NAMESPACE, ASSETS_KEY, ASSETS_LABEL = "assets", "download_url", "assets"
MAX_NETWORKS = 10  # esp-wifi-connect ssid_manager.cc MAX_WIFI_SSID_COUNT
MAX_SSID_BYTES = 32  # char ssid[33]
MAX_PASSWORD_BYTES = 64  # char password[65]
MAX_STRING_BYTES = 4000  # ESP-IDF NVS: a string value, terminating NUL included, spans one page at most
PAGE = 0x1000
MIN_NVS_SIZE = 0x3000  # a read-write NVS partition (ESP-IDF; smaller ones must be read-only)
NVS_TYPE, NVS_SUBTYPE = 0x01, 0x02
_SCHEMES = ("http", "https")


@dataclass
class Provision:
    """What one board is given: an OTA URL and/or Wi-Fi networks (first = preferred)."""

    ota_url: str | None = None
    networks: list[tuple[str, str]] = field(default_factory=list)
    assets_url: str | None = None  # NVS assets/download_url: the board fetches its assets over Wi-Fi

    def entries(self) -> list[tuple[str, str]]:
        """(key, string value) in namespace ``wifi``, in the order they are written."""
        out: list[tuple[str, str]] = []
        for index, (ssid, password) in enumerate(self.networks):
            suffix = str(index) if index else ""
            out += [(f"ssid{suffix}", ssid), (f"password{suffix}", password)]
        if self.ota_url:
            out.append(("ota_url", self.ota_url))
        return out


def _utf8(text: str, where: str, what: str) -> None:
    """Command-line text arrives as the OS's bytes; a byte that is not UTF-8 cannot go into an NVS string."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UserError(f"{where}: the {what} is not UTF-8 text (byte {ord(text[exc.start]) & 0xFF:#04x} at offset "
                        f"{exc.start}); give it as UTF-8") from None


def check_url(url: str, where: str = "--ota-url") -> str:
    """An OTA URL the firmware's HTTP client can open: http(s)://host[:port]/path."""
    _utf8(url, where, "URL")
    if any(c.isspace() for c in url) or any(ord(c) < 0x20 for c in url):
        raise UserError(f"{where}: {url!r} contains whitespace or control characters; percent-encode them")
    try:
        parts = urlsplit(url)
    except ValueError as exc:  # an unclosed IPv6 bracket ("http://[::1/")
        raise UserError(f"{where}: {url!r} is not a valid URL ({exc}); close the IPv6 address with ']'") from None
    if parts.scheme.lower() not in _SCHEMES or not parts.netloc:
        raise UserError(f"{where}: {url!r} is not an http:// or https:// URL; write it in full, e.g. "
                        "http://192.168.1.10:8002/xiaozhi/ota/")
    try:
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        raise UserError(f"{where}: {url!r} has an invalid port; use a number 1-65535") from None
    if len(url.encode()) + 1 > MAX_STRING_BYTES:
        raise UserError(f"{where}: the URL is {len(url.encode())} bytes; an NVS string holds at most "
                        f"{MAX_STRING_BYTES - 1}")
    # Ota::GetCheckVersionUrl falls back to CONFIG_OTA_URL for an empty value and Ota::CheckVersion refuses
    # a URL shorter than 10 characters ("Check version URL is not properly set").
    if len(url) < 10:
        raise UserError(f"{where}: {url!r} is shorter than 10 characters, which the firmware refuses")
    return url


def check_network(ssid: str, password: str, where: str = "--wifi") -> tuple[str, str]:
    _utf8(ssid, where, "SSID")
    _utf8(password, where, "password")
    size = len(ssid.encode())
    if size == 0:
        raise UserError(f"{where}: the SSID is empty; give SSID:PASSWORD")
    if size > MAX_SSID_BYTES:
        raise UserError(f"{where}: SSID {ssid!r} is {size} bytes; Wi-Fi SSIDs are at most {MAX_SSID_BYTES} bytes")
    if len(password.encode()) > MAX_PASSWORD_BYTES:
        raise UserError(f"{where}: the password for {ssid!r} is {len(password.encode())} bytes; at most "
                        f"{MAX_PASSWORD_BYTES}")
    if "\0" in ssid or "\0" in password:
        raise UserError(f"{where}: NUL characters cannot be stored in an NVS string")
    return ssid, password


def parse_wifi(text: str, where: str = "--wifi") -> tuple[str, str]:
    """``SSID:PASSWORD`` (split at the first colon; an open network is ``SSID:``)."""
    if ":" not in text:
        raise UserError(f"{where}: {text!r} has no ':'; write SSID:PASSWORD (SSID: for an open network)")
    ssid, password = text.split(":", 1)
    return check_network(ssid, password, where)


def make_provision(ota_url: str | None, networks: Sequence[tuple[str, str]], where: str = "") -> Provision:
    prefix = f"{where}: " if where else ""
    if not ota_url and not networks:
        raise UserError(f"{prefix}nothing to provision; give --ota-url and/or --wifi SSID:PASSWORD")
    if len(networks) > MAX_NETWORKS:
        raise UserError(f"{prefix}{len(networks)} Wi-Fi networks given; the firmware keeps at most {MAX_NETWORKS}")
    ssids = [s for s, _ in networks]
    dup = next((s for s in ssids if ssids.count(s) > 1), None)
    if dup is not None:
        raise UserError(f"{prefix}SSID {dup!r} is given twice; the firmware keeps one password per SSID")
    return Provision(ota_url, list(networks))


def check_assets_download(prov: Provision, table: PartitionTable, has_wifi: bool | None) -> None:
    """``--assets-url`` only where the firmware can act on it: a board with Wi-Fi (``has_wifi``: from its
    board file; None when unknown), networks in the same image (the image replaces the whole partition, so a
    board given only the URL would have no network to fetch it over), and a partition labelled ``assets``."""
    if not prov.assets_url:
        return
    if has_wifi is False:
        raise UserError("--assets-url: this board has no Wi-Fi (its network is cellular or Ethernet), so it cannot "
                        "download its assets; flash them over serial (the release's merged image)")
    if not prov.networks:
        raise UserError("--assets-url needs --wifi SSID:PASSWORD too: the image replaces the board's settings, "
                        "and the board downloads its assets over that network")
    if table.find(name=ASSETS_LABEL) is None:
        raise UserError("--assets-url: the partition table has no partition labelled 'assets' for the firmware to "
                        "download into", table.location())


#: The largest nvs partition provision writes an image for (an image is the partition's size, held in memory).
MAX_NVS_SIZE = 16 << 20


def nvs_partition(table: PartitionTable) -> Partition:
    """The partition ``nvs_flash_init`` opens: label ``nvs`` (type data, subtype nvs)."""
    part = table.find(name="nvs")
    if part is None or part.type != NVS_TYPE or part.subtype != NVS_SUBTYPE:
        raise UserError("the partition table has no data/nvs partition labelled 'nvs'", table.location())
    if part.size < MIN_NVS_SIZE or part.size % PAGE:
        raise UserError(f"the nvs partition is {part.size:#x} bytes; a read-write NVS needs a multiple of "
                        f"{PAGE:#x} of at least {MIN_NVS_SIZE:#x}", table.location(part))
    if part.size > MAX_NVS_SIZE:
        raise UserError(f"the nvs partition is {part.size:#x} bytes, over the {MAX_NVS_SIZE:#x} (16 MiB) bound for "
                        "an image provision writes; give the nvs partition its usual size (0x6000-0x100000)",
                        table.location(part))
    return part


def build_image(prov: Provision, size: int) -> bytes:
    """The NVS partition image (``size`` bytes) holding ``prov``, written by esp-idf-nvs-partition-gen."""
    from esp_idf_nvs_partition_gen import nvs_partition_gen as gen

    out = io.BytesIO()
    try:
        # Like the library's own CLI (check_size): the last page stays reserved for NVS's page rotation.
        nvs = gen.nvs_open(out, size - PAGE, gen.Page.VERSION2)
        gen.write_entry(nvs, WIFI_NAMESPACE, "namespace", "", "")
        for key, value in prov.entries():
            gen.write_entry(nvs, key, "data", "string", value)
        if prov.assets_url:
            gen.write_entry(nvs, ASSETS_NAMESPACE, "namespace", "", "")
            gen.write_entry(nvs, ASSETS_KEY, "data", "string", prov.assets_url)
        gen.nvs_close(nvs)
    except (gen.InsufficientSizeError, gen.PageFullError):
        raise UserError(f"the settings do not fit the {size:#x}-byte nvs partition; give fewer or shorter "
                        "values") from None
    except gen.InputError as exc:
        raise UserError(f"esp-idf-nvs-partition-gen refused the settings: {exc}") from None
    image = out.getvalue()
    if len(image) != size:
        raise UserError(f"the settings do not fit the {size:#x}-byte nvs partition (image is {len(image):#x} "
                        "bytes); give fewer or shorter values")
    return image


_OUT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


@dataclass
class CsvRow:
    name: str
    provision: Provision
    line: int


#: The largest devices CSV provision reads (10,000 boards of 10 networks is under 8 MiB).
MAX_DEVICES_CSV = 8 << 20


def read_devices_csv(path: Path) -> list[CsvRow]:
    """``name,ota_url,ssid,password[,ssid1,password1 … ssid9,password9]``: one image per row, written to
    ``<name>.bin`` (``name``: letters, digits, ``.``, ``_``, ``-``)."""
    from xzbuild.core.fsutil import read_bounded

    data = read_bounded(path, MAX_DEVICES_CSV, "a devices CSV")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UserError(f"not UTF-8 text ({exc.reason}); save the CSV as UTF-8",
                        Location(str(path), data.count(b"\n", 0, exc.start) + 1)) from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        rows = list(reader)
    except csv.Error as exc:
        raise UserError(f"not a CSV row ({exc}); a cell holds at most a URL, an SSID or a password",
                        Location(str(path), reader.line_num)) from None
    if not rows:
        raise UserError("empty CSV; the first line must be a header such as name,ota_url,ssid,password",
                        Location(str(path), 1))
    header = [h.strip() for h in rows[0]]
    allowed = ["name", "ota_url"] + [f"{k}{i if i else ''}" for i in range(MAX_NETWORKS) for k in ("ssid", "password")]
    for col, h in enumerate(header, 1):
        if h not in allowed:
            raise UserError(f"unknown column {h!r}; columns are name, ota_url, ssid, password, ssid1, password1 … "
                            "ssid9, password9", Location(str(path), 1, col))
        if header.count(h) > 1:
            raise UserError(f"column {h!r} appears twice", Location(str(path), 1, col))
    if "name" not in header:
        raise UserError("the header has no 'name' column (the output file name of each row)", Location(str(path), 1))
    out: list[CsvRow] = []
    seen: dict[str, int] = {}
    for line, cells in enumerate(rows[1:], 2):
        if not any(c.strip() for c in cells):
            continue
        if len(cells) != len(header):
            raise UserError(f"{len(cells)} fields, the header has {len(header)}", Location(str(path), line))
        row = dict(zip(header, cells, strict=True))
        where = f"{path}:{line}"
        name = row["name"].strip()
        if not _OUT_NAME.match(name):
            raise UserError(f"name {name!r} is not a file name; use letters, digits, '.', '_' and '-'",
                            Location(str(path), line, header.index("name") + 1))
        if name in seen:
            raise UserError(f"name {name!r} is also on line {seen[name]}", Location(str(path), line))
        seen[name] = line
        url = row.get("ota_url", "").strip() or None
        if url is not None:
            check_url(url, where)
        networks = []
        for i in range(MAX_NETWORKS):
            suffix = str(i) if i else ""
            ssid, password = row.get(f"ssid{suffix}", ""), row.get(f"password{suffix}", "")
            if ssid:
                networks.append(check_network(ssid, password, where))
            elif password:
                raise UserError(f"password{suffix} without ssid{suffix}", Location(str(path), line))
        out.append(CsvRow(name, make_provision(url, networks, where), line))
    if not out:
        raise UserError("no device rows under the header", Location(str(path), 2))
    return out


def write_nvs(port: str, offset: int, image: bytes, chip: str = "") -> None:
    """Write ``image`` at ``offset`` on the board at ``port`` with esptool (stub loader, verified by MD5)."""
    import tempfile

    import esptool

    with tempfile.TemporaryDirectory(prefix="xzbuild-nvs-") as tmp:
        path = Path(tmp) / "nvs.bin"
        path.write_bytes(image)
        argv = ["--port", port, *(["--chip", chip] if chip else []), "write-flash", f"{offset:#x}", str(path)]
        try:
            esptool.main(argv)
        except (esptool.FatalError, OSError) as exc:
            raise UserError(f"--port {port}: esptool could not write the nvs partition: "
                            f"{str(exc).splitlines()[0] if str(exc) else exc!r}") from None


# A release, not a checkout: `provision VARIANT --release DIR` reads the table the variant was built with.
FLASHER_ARGS = "flasher_args.json"  # ESP-IDF's build/flasher_args.json, kept per variant by `matrix build`
MAX_FLASHER_ARGS = 1 << 20
MAX_TABLE_BYTES = 0xC00  # gen_esp32part.py MAX_PARTITION_LENGTH: the table's sector holds at most 0xC00 bytes
_VARIANT_NAME = re.compile(r"[A-Za-z0-9_+][A-Za-z0-9._+-]{0,127}")
MERGED_IMAGE = "merged-binary.bin"  # idf.py merge-bin; upstream's release zips hold only this file
MERGED_TABLE_OFFSET = 0x8000  # ESP-IDF's default CONFIG_PARTITION_TABLE_OFFSET (xiaozhi keeps it)


@dataclass(frozen=True)
class ReleasedTable:
    table: PartitionTable
    chip: str
    source: str  # the flasher_args.json it came from


class _ReleaseFiles:
    """Files of a release, by relative path: a directory (no path may leave it or pass a link) or a zip (the
    GitHub release's ``firmware-<tag>.zip``, or upstream's per-variant ``v<version>_<variant>.zip``)."""

    def __init__(self, release: Path) -> None:
        import zipfile

        self.release, self.zip = release, None
        if release.is_file():
            try:
                self.zip = zipfile.ZipFile(release)
            except (OSError, zipfile.BadZipFile):
                self.zip = None

    def exists(self, rel: str) -> bool:
        if self.zip is not None:
            return rel in self.zip.NameToInfo
        return (self.release / rel).exists()

    def names(self, pattern: str) -> list[str]:
        import fnmatch

        if self.zip is not None:
            return sorted(n for n in self.zip.namelist() if fnmatch.fnmatchcase(n, pattern))
        return sorted(p.relative_to(self.release).as_posix() for p in self.release.glob(pattern))

    def where(self, rel: str) -> str:
        return f"{self.release}:{rel}" if self.zip is not None else str(self.release / rel)

    def read(self, rel: str, limit: int, where: Location | None = None) -> bytes:
        """At most ``limit`` + 1 bytes of ``rel`` (a relative path of plain names; a missing file is an error)."""
        from xzbuild.core.fsutil import confined_file

        if self.zip is None:
            with confined_file(self.release, rel, where).open("rb") as fh:
                return fh.read(limit + 1)
        parts = rel.split("/")
        if not rel or "\\" in rel or "\0" in rel or rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
            raise UserError(f"{rel!r}: expected a relative path of plain names inside {self.release} (no '..', no "
                            "leading '/'); rebuild the release", where)
        if rel not in self.zip.NameToInfo:
            raise UserError(f"{rel}: named here but missing from {self.release}; rebuild the variant", where)
        with self.zip.open(rel) as fh:
            return fh.read(limit + 1)


def _merged_image_table(files: _ReleaseFiles, rel: str) -> ReleasedTable:
    """The table at 0x8000 (ESP-IDF's default CONFIG_PARTITION_TABLE_OFFSET) of a merged image."""
    from xzbuild.partitions.table import parse_binary

    data = files.read(rel, MERGED_TABLE_OFFSET + MAX_TABLE_BYTES)[MERGED_TABLE_OFFSET:][:MAX_TABLE_BYTES]
    if data[:2] != b"\xaa\x50":
        raise UserError(f"no partition table at {MERGED_TABLE_OFFSET:#x} of this merged image (the firmware moved "
                        "it?); pass the release directory holding flasher_args.json, or --table",
                        Location(files.where(rel)))
    return ReleasedTable(parse_binary(data, files.where(rel)), "", files.where(rel))


def release_table(release: Path, variant: str) -> ReleasedTable:
    """VARIANT's partition table and chip from a release: the ``--out`` of ``xzbuild matrix build`` or one
    variant's directory of it, the GitHub release's ``firmware-<tag>.zip`` (either holds
    ``<variant>/flasher_args.json``: it names the table binary ESP-IDF wrote, ``partition-table.file``, and the
    chip, ``extra_esptool_args.chip``), or upstream's per-variant ``v<version>_<variant>.zip`` / a
    ``merged-binary.bin`` (the table at 0x8000, chip left to esptool's detection)."""
    import json

    from xzbuild.partitions.table import parse_binary

    if not _VARIANT_NAME.fullmatch(variant):
        raise UserError(f"{variant[:60]!r} is not a variant name (letters, digits, '.', '_', '+', '-')")
    if not release.exists():
        raise UserError(f"--release {release}: no such file or directory; pass the release directory (the --out of "
                        "`xzbuild matrix build`, holding <variant>/flasher_args.json) or its zip")
    files = _ReleaseFiles(release)
    if release.is_file() and files.zip is None:
        return _merged_file(release)
    base = f"{variant}/"
    if not files.exists(base + FLASHER_ARGS) and files.exists(FLASHER_ARGS):
        base = ""  # one variant's directory
    if not files.exists(base + FLASHER_ARGS):
        if files.zip is not None and files.exists(MERGED_IMAGE):
            return _merged_image_table(files, MERGED_IMAGE)  # upstream's v<version>_<variant>.zip
        names = [n.split("/")[0] for n in files.names(f"*/{FLASHER_ARGS}") if n.count("/") == 1]
        listed = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "") if names else "none"
        raise UserError(f"--release {release}: no {variant}/{FLASHER_ARGS} (variants in it: {listed}); pass the "
                        "variant's full name or the directory holding its flasher_args.json")
    rel = base + FLASHER_ARGS
    where = Location(files.where(rel))
    raw = files.read(rel, MAX_FLASHER_ARGS)
    if len(raw) > MAX_FLASHER_ARGS:
        raise UserError(f"larger than {MAX_FLASHER_ARGS} bytes; not ESP-IDF's flasher_args.json", where)
    try:
        args = json.loads(raw.decode("utf-8"))
    except ValueError as exc:
        raise UserError(f"unreadable ({str(exc)[:80]}); rebuild the variant", where) from None
    entry = args.get("partition-table") if isinstance(args, dict) else None
    if not isinstance(entry, dict) or not isinstance(entry.get("file"), str):
        raise UserError("no `partition-table.file` (ESP-IDF writes it for every build with a partition table); "
                        "rebuild the variant, or pass --table", where)
    table_rel = entry["file"]
    if table_rel.startswith("/") or ".." in table_rel.split("/"):
        raise UserError(f"{table_rel!r}: expected a relative path of plain names inside {release} (no '..', no "
                        "leading '/'); rebuild the release", where)
    data = files.read(base + table_rel, MAX_TABLE_BYTES, where)
    table_where = files.where(base + table_rel)
    if data[:2] != b"\xaa\x50":
        raise UserError("not a binary partition table (no 0xAA50 entry at its start); rebuild the variant",
                        Location(table_where))
    extra = args.get("extra_esptool_args")
    chip = extra.get("chip") if isinstance(extra, dict) else None
    return ReleasedTable(parse_binary(data[:MAX_TABLE_BYTES], table_where),
                         chip if isinstance(chip, str) and re.fullmatch(r"esp32[a-z0-9]*", chip) else "",
                         files.where(rel))


def _merged_file(path: Path) -> ReleasedTable:
    """A merged image given as a file (``merged-binary.bin``)."""
    from xzbuild.partitions.table import parse_binary

    with path.open("rb") as fh:
        fh.seek(MERGED_TABLE_OFFSET)
        data = fh.read(MAX_TABLE_BYTES)
    if data[:2] != b"\xaa\x50":
        raise UserError(f"not a release: neither a directory, a zip, nor a merged image with a partition table at "
                        f"{MERGED_TABLE_OFFSET:#x}; pass the --out of `xzbuild matrix build` or a release zip",
                        Location(str(path)))
    return ReleasedTable(parse_binary(data, str(path)), "", str(path))

"""A PEP 517 build backend for this file-less stand-in, written with the standard library only.

The distribution has no files, just metadata and a requirement on pyserial 3.5 (see pyproject.toml), so its
wheel is three files in ``*.dist-info``. Building it needs neither setuptools nor ``wheel``: ``pip install
./packaging/pyserial-labgrid`` works the same with build isolation (GitHub) and without it, offline, in an
environment that never had ``wheel`` (the workflow runner's jobs, tests/workflows).
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import tarfile
import tomllib
import zipfile
from typing import Any


def _project() -> dict[str, Any]:
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "pyproject.toml"), "rb") as fh:
        return dict(tomllib.load(fh)["project"])


PROJECT = _project()  # the one source of the metadata: pyproject.toml's [project]
NAME = str(PROJECT["name"]).replace("-", "_")
VERSION = str(PROJECT["version"])
TAG = "py3-none-any"
METADATA = "".join([
    "Metadata-Version: 2.1\n", f"Name: {PROJECT['name']}\n", f"Version: {VERSION}\n",
    f"Summary: {PROJECT.get('description', '')}\n", f"Requires-Python: {PROJECT.get('requires-python', '')}\n",
    *(f"Requires-Dist: {req}\n" for req in PROJECT.get("dependencies", []))])
WHEEL = f"Wheel-Version: 1.0\nGenerator: stub_backend\nRoot-Is-Purelib: true\nTag: {TAG}\n"
DIST_INFO = f"{NAME}-{VERSION}.dist-info"
# Fixed timestamps: the same wheel bytes on every build.
DATE = (2020, 1, 1, 0, 0, 0)


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def _write_dist_info(directory: str) -> str:
    target = os.path.join(directory, DIST_INFO)
    os.makedirs(target, exist_ok=True)
    for name, text in (("METADATA", METADATA), ("WHEEL", WHEEL)):
        with open(os.path.join(target, name), "w", encoding="utf-8") as fh:
            fh.write(text)
    return DIST_INFO


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    return []


def get_requires_for_build_sdist(config_settings: dict[str, Any] | None = None) -> list[str]:
    return []


def prepare_metadata_for_build_wheel(metadata_directory: str,
                                     config_settings: dict[str, Any] | None = None) -> str:
    return _write_dist_info(metadata_directory)


def build_wheel(wheel_directory: str, config_settings: dict[str, Any] | None = None,
                metadata_directory: str | None = None) -> str:
    name = f"{NAME}-{VERSION}-{TAG}.whl"
    files = {f"{DIST_INFO}/METADATA": METADATA.encode(), f"{DIST_INFO}/WHEEL": WHEEL.encode()}
    record = [_record_line(path, data) for path, data in files.items()] + [f"{DIST_INFO}/RECORD,,"]
    files[f"{DIST_INFO}/RECORD"] = ("\n".join(record) + "\n").encode()
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as zf:
        for path, data in files.items():
            info = zipfile.ZipInfo(path, DATE)
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)
    return name


def build_sdist(sdist_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    base = f"{NAME}-{VERSION}"
    here = os.path.dirname(os.path.abspath(__file__))
    name = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as tf:
        members = {"pyproject.toml": None, "stub_backend.py": None, "PKG-INFO": METADATA.encode()}
        for rel, data in members.items():
            if data is None:
                with open(os.path.join(here, rel), "rb") as fh:
                    data = fh.read()
            info = tarfile.TarInfo(f"{base}/{rel}")
            info.size, info.mode, info.mtime = len(data), 0o644, 1577836800
            tf.addfile(info, io.BytesIO(data))
    return name

"""Build step for the wheel and the sdist (the project's metadata is in pyproject.toml).

The commands read files that are not Python modules and live outside the packages in a checkout:

* ``templates/`` (Jinja templates, the release site's CSS and JS): copied into ``xzbuild/_data/templates``;
* the pinned npm bundles the release site serves (ESP Web Tools' ``dist/web``, esptool-js' ``bundle.js``, their
  ``package.json`` and licence, and npm's lockfile entries for their tarball integrity): copied from
  ``.venv/npm/node_modules`` (``make install`` puts them there; ``$XZBUILD_NPM_MODULES`` names another
  ``node_modules``) into ``xzbuild/_data/npm/node_modules``.

The sdist carries both (``templates/`` through MANIFEST.in, the npm files under ``npm-bundles/``), so a wheel
built from it has them too. An editable install copies nothing: ``xzbuild.core.resources`` reads the checkout.
The layout of ``templates/`` in the repository is not changed by any of this.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = Path(__file__).resolve().parent
SDIST_NPM = "npm-bundles"  # where the sdist keeps the npm files (a node_modules layout)
# npm package -> (files or directories to ship, the module whose PINNED_VERSION the package must match)
NPM_FILES = {
    "esp-web-tools": (("package.json", "LICENSE", "dist/web"), "xzbuild/release/webinstall.py"),
    "esptool-js": (("package.json", "LICENSE", "bundle.js"), "xzbuild/release/chipcheck.py"),
}


def _pinned(module: str) -> str:
    match = re.search(r'^PINNED_VERSION = "([^"]+)"', (HERE / module).read_text(encoding="utf-8"), re.M)
    if match is None:
        raise SystemExit(f"{module}: no PINNED_VERSION")
    return match.group(1)


def _npm_source() -> Path:
    """The node_modules the bundles come from: the sdist's copy, $XZBUILD_NPM_MODULES or .venv/npm."""
    candidates = [HERE / SDIST_NPM / "node_modules"]
    if os.environ.get("XZBUILD_NPM_MODULES"):
        candidates.insert(0, Path(os.environ["XZBUILD_NPM_MODULES"]))
    candidates.append(HERE / ".venv" / "npm" / "node_modules")
    for root in candidates:
        if all((root / name / "package.json").is_file() for name in NPM_FILES):
            return root
    pins = " ".join(f"{name}@{_pinned(module)}" for name, (_, module) in NPM_FILES.items())
    raise SystemExit(f"npm bundles not found (looked in {', '.join(map(str, candidates))}); run `make install` "
                     f"or `npm install --prefix .venv/npm {pins}`, or set XZBUILD_NPM_MODULES to a node_modules dir")


def copy_npm(dest: Path) -> None:
    """The shipped files of each pinned npm package into ``dest`` (a node_modules layout), checked against the
    pins, plus a ``.package-lock.json`` holding only their entries (version, integrity, licence)."""
    src = _npm_source()
    lock_entries = {}
    try:
        lock = json.loads((src / ".package-lock.json").read_text(encoding="utf-8")).get("packages", {})
    except (OSError, ValueError):
        lock = {}
    for name, (files, module) in NPM_FILES.items():
        version = json.loads((src / name / "package.json").read_text(encoding="utf-8")).get("version")
        if version != _pinned(module):
            raise SystemExit(f"{src / name}: version {version}, but {module} pins {_pinned(module)}; "
                             "reinstall the pinned npm packages (`make install`)")
        for rel in files:
            source, target = src / name / rel, dest / name / rel
            if source.is_dir():
                shutil.copytree(source, target, dirs_exist_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, target)
        if f"node_modules/{name}" in lock:
            lock_entries[f"node_modules/{name}"] = lock[f"node_modules/{name}"]
    (dest / ".package-lock.json").write_text(
        json.dumps({"name": "xzbuild-bundled", "lockfileVersion": 3, "packages": lock_entries},
                   indent=2, sort_keys=True) + "\n", encoding="utf-8")


class BuildWithData(build_py):
    """build_py, then templates/ and the npm bundles into xzbuild/_data (not for an editable install)."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        data = Path(self.build_lib) / "xzbuild" / "_data"
        shutil.rmtree(data, ignore_errors=True)
        shutil.copytree(HERE / "templates", data / "templates")
        copy_npm(data / "npm" / "node_modules")


class SdistWithNpm(sdist):
    """sdist, plus the npm bundles under npm-bundles/ (templates/ comes in through MANIFEST.in)."""

    def make_release_tree(self, base_dir: str, files: list[str]) -> None:
        super().make_release_tree(base_dir, files)
        target = Path(base_dir) / SDIST_NPM / "node_modules"
        shutil.rmtree(target, ignore_errors=True)
        copy_npm(target)


setup(cmdclass={"build_py": BuildWithData, "sdist": SdistWithNpm})

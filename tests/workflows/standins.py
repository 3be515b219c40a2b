"""Stand-ins for the `uses:` steps, the ESP-IDF container and the stores GitHub keeps between jobs and runs.

Every stand-in checks its inputs: an input it does not know is an error, as is an action it does not know.

- ``actions/checkout``: this project (``WORKDIR/origin``, the event's commits) or the firmware (upstream's
  shallow clone, tests/upstream_repo.py, with upstream's own commit ids and tags), fetched at the ref asked for,
  shallow unless ``fetch-depth: 0``.
- ``actions/setup-python``: a per-job virtualenv layered on the test venv (its packages visible, its own
  ``site-packages`` first, so ``pip install .`` installs the checked-out xzbuild there, offline).
- ``actions/upload-artifact`` / ``download-artifact`` (v4+ rules): names unique per run, no ``":<>|*?\\/``,
  the least common ancestor of the paths as root, hidden files left out, ``pattern``/``merge-multiple``.
- ``actions/cache`` (+ ``/restore``, ``/save``): entries keyed by ``key`` and matched by ``restore-keys``
  prefixes, visible from the ref that saved them and from the default branch's; saved after a green job
  unless the key was hit.
- ``actions/configure-pages``, ``upload-pages-artifact``, ``deploy-pages``: the ``github-pages`` artifact and a
  local site dir (``WORKDIR/pages``).
- ``pypa/gh-action-pypi-publish`` (``release/v1``): trusted publishing only (the job's ``id-token: write``, no
  password); each file of ``packages-dir`` must be a wheel or sdist whose metadata names the project and version
  its file name says (as twine checks); the index is ``WORKDIR/pypi/<project>/``, which, like PyPI, refuses a
  file name it already holds unless ``skip-existing``.
- ESP-IDF container ``espressif/idf:vX``: ``$IDF_PATH/export.sh`` puts the idf.py stand-in (tests/standin) and
  the job's Python first on PATH.
"""

from __future__ import annotations

import fnmatch
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tests.upstream_repo import UpstreamUnavailable, bare_copy
from tests.workflows.events import DEFAULT_BRANCH, FIRMWARE_REPOSITORY, REPOSITORY, Event, git

if TYPE_CHECKING:
    from tests.workflows.runner import WorkflowRun

REPO = Path(__file__).resolve().parents[2]
STANDIN = REPO / "tests" / "standin"
PAGES_URL = f"https://{REPOSITORY.split('/')[0]}.github.io/{REPOSITORY.split('/')[1]}"
BAD_ARTIFACT_CHARS = set('":<>|*?\r\n\\/')


class StandinError(Exception):
    pass


@dataclass
class JobRuntime:
    name: str
    workspace: Path
    temp: Path
    perms: dict[str, str]
    env_name: str | None
    event: Event
    run: WorkflowRun
    paths: list[str]
    extra_env: dict[str, str]
    added_env: dict[str, str] = field(default_factory=dict)


def _inputs(uses: str, given: dict[str, str], known: set[str]) -> None:
    unknown = set(given) - known
    if unknown:
        raise StandinError(f"{uses}: inputs {sorted(unknown)} are not stood in (known: {', '.join(sorted(known))})")


def hash_files(workspace: Path, patterns: tuple[str, ...]) -> str:
    """GitHub's hashFiles(): SHA-256 over the SHA-256 of each matched file (sorted), '' when none matches."""
    matched: set[Path] = set()
    for pat in patterns:
        hits = {Path(p) for p in glob.glob(str(workspace / pat.lstrip("!")), recursive=True) if Path(p).is_file()}
        matched = matched - hits if pat.startswith("!") else matched | hits
    files = sorted(matched)
    if not files:
        return ""
    outer = hashlib.sha256()
    for f in files:
        outer.update(hashlib.sha256(f.read_bytes()).digest())
    return outer.hexdigest()


def _copy_tree(src: Path, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src, dest, dirs_exist_ok=True, symlinks=True)


class Stores:
    """What outlives a job: artifacts (per run), the cache, gh's releases and comments, the Pages site."""

    def __init__(self, work: Path, run_id: int) -> None:
        self.work = work
        self.run_id = run_id
        self.artifacts = work / "runs" / str(run_id) / "artifacts"
        self.cache = work / "cache"
        self.gh_dir = work / "gh"
        self.pages = work / "pages"
        for d in (self.artifacts, self.cache, self.gh_dir):
            d.mkdir(parents=True, exist_ok=True)
        self.firmware = work / "firmware"

    def changed_paths(self, base: str, head: str) -> list[str]:
        return git(self.work / "origin", "diff", "--name-only", base, head).splitlines()

    def firmware_mirror(self) -> Path:
        """GitHub's 78/xiaozhi-esp32 as far as the fixture reaches: upstream's shallow clone (its own commit
        ids, branch main = the pin, release tags), copied once per work dir."""
        try:
            return bare_copy(self.firmware)
        except UpstreamUnavailable as exc:
            raise StandinError(f"the firmware repository {FIRMWARE_REPOSITORY}: {exc}") from None

    def idf_container(self, root: Path, version: str, standin_log: Path) -> dict[str, str]:
        """The ESP-IDF image: an IDF_PATH whose export.sh puts the idf.py stand-in and a Python env on PATH."""
        idf = root / "idf"
        idf.mkdir(exist_ok=True)
        env_dir = root / "idf-python-env"
        make_overlay_venv(env_dir)
        (idf / "export.sh").write_text(
            "# ESP-IDF export.sh stand-in (tests/workflows): idf.py is tests/standin/idf.py\n"
            f'export IDF_PYTHON_ENV_PATH="{env_dir}"\n'
            f'export PATH="{STANDIN}:{env_dir}/bin:$PATH"\n'
            f'export XZ_STANDIN_IDF_VERSION="{version}"\n'
            f'export XZ_STANDIN_LOG="{standin_log}"\n'
            "export XZ_STANDIN_ASSETS=0\n", encoding="utf-8")
        return {"IDF_PATH": str(idf)}

    def shims(self, root: Path, shims: dict[str, str]) -> Path:
        """Commands a test replaces (``--shim make='make -n'``): recorded, then run as given with the real PATH."""
        d = root / "shims"
        d.mkdir(exist_ok=True)
        for name, command in shims.items():
            path = d / name
            path.write_text("#!/bin/sh\n"
                            f'printf "%s\\n" "{name} $*" >> "{self.work / "shims.log"}"\n'
                            f'PATH=$(printf "%s" "$PATH" | sed "s#{d}:##")\n'
                            f'exec {command} "$@"\n', encoding="utf-8")
            path.chmod(0o755)
        return d

    # ---- artifacts ----
    def upload(self, name: str, files: list[tuple[Path, str]], overwrite: bool) -> None:
        if not name or set(name) & BAD_ARTIFACT_CHARS:
            raise StandinError(f"artifact name {name!r}: must be non-empty without \" : < > | * ? \\r \\n \\ /")
        dest = self.artifacts / name
        if dest.exists():
            if not overwrite:
                raise StandinError(f"an artifact named {name!r} already exists in this run (v4: names are unique; "
                                   "use overwrite: true)")
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        for src, rel in files:
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)

    def artifact_names(self, run_id: int | None = None) -> list[str]:
        d = self.work / "runs" / str(run_id or self.run_id) / "artifacts"
        return sorted(p.name for p in d.iterdir()) if d.is_dir() else []

    # ---- cache ----
    def cache_lookup(self, key: str, restore_keys: list[str], scopes: list[str], version: str) -> tuple[Path, bool] | None:
        entries = []
        for meta_file in sorted(self.cache.glob("*/meta.json")):
            meta = json.loads(meta_file.read_text())
            if meta["scope"] in scopes and meta["version"] == version:
                entries.append((meta, meta_file.parent))
        for meta, d in entries:
            if meta["key"] == key:
                return d, True
        for prefix in restore_keys:
            hits = [(m, d) for m, d in entries if m["key"].startswith(prefix)]
            if hits:
                return max(hits, key=lambda h: h[0]["created"])[1], False
        return None

    def cache_save(self, key: str, scope: str, version: str, workspace: Path, paths: list[str]) -> bool:
        for meta_file in self.cache.glob("*/meta.json"):
            meta = json.loads(meta_file.read_text())
            if meta["key"] == key and meta["scope"] == scope and meta["version"] == version:
                return False  # GitHub: a cache entry is immutable
        n = len(list(self.cache.glob("*/meta.json"))) + 1
        d = self.cache / f"{n:04d}"
        (d / "files").mkdir(parents=True)
        saved = 0
        for p in paths:
            src = workspace / p
            if src.exists():
                _copy_tree(src, d / "files" / p) if src.is_dir() else shutil.copy2(src, d / "files" / p)
                saved += 1
        if not saved:
            shutil.rmtree(d)
            return False
        (d / "meta.json").write_text(json.dumps({"key": key, "scope": scope, "version": version,
                                                 "created": n, "paths": paths}))
        return True


def make_overlay_venv(path: Path) -> None:
    """A virtualenv whose own site-packages comes first and the test venv's packages after (a .pth line)."""
    if (path / "bin" / "python").exists():
        return
    base = Path(getattr(sys, "_base_executable", sys.executable))
    subprocess.run([str(base), "-m", "venv", "--without-pip", str(path)], check=True)
    purelib = sysconfig.get_paths()["purelib"]
    site = subprocess.run([str(path / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()"
                           "['purelib'])"], capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "_test_venv.pth").write_text(purelib + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------------------------------------------
Action = Callable[[JobRuntime, str, dict[str, str], dict[str, str]],
                  tuple[bool, dict[str, str], Callable[[], None] | None]]


def _need(rt: JobRuntime, scope: str, level: str, what: str) -> None:
    have = rt.perms.get(scope)
    if have is None or (level == "write" and have != "write"):
        raise StandinError(f"{what} needs permissions {scope}: {level}; the job's token has "
                           f"{json.dumps(rt.perms, sort_keys=True)}")


def checkout(rt: JobRuntime, uses: str, w: dict[str, str], env: dict[str, str]) -> tuple[bool, dict[str, str], None]:
    _inputs(uses, w, {"repository", "ref", "path", "fetch-depth", "persist-credentials", "token"})
    repo = w.get("repository") or REPOSITORY
    dest = (rt.workspace / w.get("path", ".")).resolve()
    if not str(dest).startswith(str(rt.workspace)):
        raise StandinError(f"{uses}: path {w.get('path')!r} leaves the workspace")
    depth = int(w.get("fetch-depth", "1"))
    if repo == REPOSITORY:
        source = rt.run.opts.work / "origin"
        ref = w.get("ref") or rt.event.sha
    elif repo == FIRMWARE_REPOSITORY:
        _need(rt, "contents", "read", f"{uses} of {repo}")
        source = rt.run.store.firmware_mirror()
        if not w.get("ref"):
            raise StandinError(f"{uses} of {repo}: no ref given, so GitHub would check out its default branch, "
                               "not the pinned commit (give ref:)")
        ref = w["ref"]
    else:
        raise StandinError(f"{uses}: repository {repo!r} has no stand-in (known: {REPOSITORY}, {FIRMWARE_REPOSITORY})")
    if dest.exists() and any(dest.iterdir()) and dest != rt.workspace:
        shutil.rmtree(dest)
    dest.mkdir(parents=True, exist_ok=True)
    git(dest, "init", "-q")
    # Objects are borrowed from the source (alternates), so fetching transfers nothing; GitHub's shallow
    # clone (fetch-depth: 1, the default) is kept by marking the commit as the history's end (.git/shallow).
    source_git = source if (source / "objects").is_dir() else source / ".git"
    (dest / ".git" / "objects" / "info" / "alternates").write_text(str(source_git / "objects") + "\n")
    git(dest, "fetch", "-q", f"file://{source}", "+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*")
    sha = git(dest, "rev-parse", "--verify", "-q", f"{ref}^{{commit}}", check=False) or \
        git(dest, "rev-parse", "--verify", "-q", f"origin/{ref}^{{commit}}", check=False)
    if sha and depth != 0:
        if depth != 1:
            raise StandinError(f"{uses}: fetch-depth {depth}: the stand-in knows 1 (default) and 0 (all history)")
        for r in git(dest, "for-each-ref", "--format=%(refname)").splitlines():
            git(dest, "update-ref", "-d", r)
        (dest / ".git" / "shallow").write_text(sha + "\n")
    if not sha:
        raise StandinError(f"{uses}: ref {ref!r} not found in {repo}")
    git(dest, "checkout", "-q", "--detach", sha)
    rt.run.checkouts.append({"job": rt.name, "repository": repo, "ref": ref, "sha": sha,
                             "path": str(dest.relative_to(rt.workspace))})
    return True, {"ref": ref, "commit": sha}, None


def setup_python(rt: JobRuntime, uses: str, w: dict[str, str], env: dict[str, str]) -> tuple[bool, dict[str, str], None]:
    _inputs(uses, w, {"python-version", "cache"})
    want = w.get("python-version", "")
    have = f"{sys.version_info.major}.{sys.version_info.minor}"
    if want and want != have:
        raise StandinError(f"{uses}: python-version {want} asked, the test venv has {have}")
    venv = rt.temp / "python"
    make_overlay_venv(venv)
    rt.paths.append(str(venv / "bin"))
    return True, {"python-version": have, "python-path": str(venv / "bin" / "python")}, None


def _artifact_files(rt: JobRuntime, spec: str, hidden: bool) -> tuple[list[tuple[Path, str]], Path | None]:
    roots: list[Path] = []
    files: list[Path] = []
    excluded: set[Path] = set()
    for line in [s.strip() for s in spec.splitlines() if s.strip()]:
        neg = line.startswith("!")
        pattern = str(rt.workspace / line.lstrip("!"))
        hits = [Path(p) for p in glob.glob(pattern, recursive=True)] if any(c in line for c in "*?[") else \
            ([Path(pattern)] if Path(pattern).exists() else [])
        for hit in hits:
            found = [hit] if hit.is_file() else [p for p in hit.rglob("*") if p.is_file()]
            if neg:
                excluded.update(found)
            else:
                roots.append(hit if hit.is_dir() else hit.parent)
                files.extend(found)
    files = [f for f in dict.fromkeys(files) if f not in excluded]
    if not files:
        return [], None
    root = Path(os.path.commonpath([str(r) for r in roots]))
    out = []
    for f in files:
        rel = f.relative_to(root)
        if not hidden and any(part.startswith(".") for part in rel.parts):
            continue
        out.append((f, rel.as_posix()))
    return out, root


def upload_artifact(rt: JobRuntime, uses: str, w: dict[str, str], env: dict[str, str]) -> tuple[bool, dict[str, str], None]:
    _inputs(uses, w, {"name", "path", "if-no-files-found", "retention-days", "compression-level", "overwrite",
                      "include-hidden-files"})
    name = w.get("name") or "artifact"
    files, _root = _artifact_files(rt, w.get("path", ""), w.get("include-hidden-files") == "true")
    if not files:
        mode = w.get("if-no-files-found", "warn")
        if mode not in ("warn", "error", "ignore"):
            raise StandinError(f"{uses}: if-no-files-found {mode!r}")
        print(f"   upload-artifact {name}: no files found for {w.get('path')!r} ({mode})", file=rt.run.opts.log)
        return mode != "error", {}, None
    rt.run.store.upload(name, files, w.get("overwrite") == "true")
    return True, {"artifact-id": name}, None


def download_artifact(rt: JobRuntime, uses: str, w: dict[str, str], env: dict[str, str]) -> tuple[bool, dict[str, str], None]:
    _inputs(uses, w, {"name", "pattern", "path", "merge-multiple", "run-id", "github-token", "repository"})
    store = rt.run.store
    run_id = int(w["run-id"]) if w.get("run-id") else store.run_id
    if run_id != store.run_id:
        _need(rt, "actions", "read", f"{uses} from run {run_id}")
    base = rt.workspace / w.get("path", ".")
    names = store.artifact_names(run_id)
    src_root = store.work / "runs" / str(run_id) / "artifacts"
    if w.get("name"):
        if w["name"] not in names:
            raise StandinError(f"{uses}: no artifact named {w['name']!r} in run {run_id} (has: {', '.join(names)})")
        _copy_tree(src_root / w["name"], base)
        return True, {"download-path": str(base)}, None
    pattern = w.get("pattern", "*")
    chosen = [n for n in names if fnmatch.fnmatchcase(n, pattern)]
    for n in chosen:
        _copy_tree(src_root / n, base if w.get("merge-multiple") == "true" else base / n)
    base.mkdir(parents=True, exist_ok=True)
    return True, {"download-path": str(base)}, None


def _scopes(rt: JobRuntime) -> list[str]:
    ev = rt.event
    scopes = [ev.ref, f"refs/heads/{DEFAULT_BRANCH}"]
    if ev.base_ref:
        scopes.append(f"refs/heads/{ev.base_ref}")
    return scopes


def cache(rt: JobRuntime, uses: str, w: dict[str, str], env: dict[str, str]
          ) -> tuple[bool, dict[str, str], Callable[[], None] | None]:
    kind = uses.split("@")[0]
    known = {"key", "path", "restore-keys", "enableCrossOsArchive", "fail-on-cache-miss", "lookup-only"}
    _inputs(uses, w, known - ({"restore-keys", "fail-on-cache-miss", "lookup-only"} if kind.endswith("/save") else set()))
    key = w.get("key", "")
    if not key or len(key) > 512 or "," in key:
        raise StandinError(f"{uses}: key {key!r} must be 1–512 characters without commas")
    paths = [p.strip() for p in w.get("path", "").splitlines() if p.strip()]
    if not paths:
        raise StandinError(f"{uses}: path is required")
    for p in paths:
        if p.startswith(("/", "~")) or ".." in Path(p).parts or any(c in p for c in "*?["):
            raise StandinError(f"{uses}: path {p!r}: the stand-in caches plain paths inside the workspace")
    version = hashlib.sha256("|".join(paths).encode()).hexdigest()  # GitHub's cache version: the paths
    store = rt.run.store
    log = rt.run.opts.log

    def save() -> None:
        done = store.cache_save(key, rt.event.ref, version, rt.workspace, paths)
        print(f"   cache {'saved' if done else 'not saved (exists or nothing to save)'}: {key}", file=log)

    if kind.endswith("/save"):
        save()
        return True, {}, None
    restore_keys = [k.strip() for k in w.get("restore-keys", "").splitlines() if k.strip()]
    hit = store.cache_lookup(key, restore_keys, _scopes(rt), version)
    exact = bool(hit and hit[1])
    if hit:
        _copy_tree(hit[0] / "files", rt.workspace)
        meta = json.loads((hit[0] / "meta.json").read_text())
        print(f"   cache restored from key {meta['key']} ({'exact' if exact else 'prefix'})", file=log)
    else:
        print(f"   cache miss: {key}", file=log)
        if w.get("fail-on-cache-miss") == "true":
            return False, {}, None
    outputs = {"cache-hit": "true" if exact else "false",
               "cache-primary-key": key, "cache-matched-key": json.loads((hit[0] / "meta.json").read_text())["key"]
               if hit else ""}
    post = None if (exact or kind.endswith("/restore")) else save
    return True, outputs, post


def configure_pages(rt: JobRuntime, uses: str, w: dict[str, str], env: dict[str, str]) -> tuple[bool, dict[str, str], None]:
    _inputs(uses, w, {"enablement", "token", "static_site_generator", "generator_config_file"})
    _need(rt, "pages", "read", uses)
    host = PAGES_URL.split("/")[2]
    return True, {"base_url": PAGES_URL, "origin": f"https://{host}", "host": host,
                  "base_path": "/" + REPOSITORY.split("/")[1]}, None


def upload_pages_artifact(rt: JobRuntime, uses: str, w: dict[str, str], env: dict[str, str]
                          ) -> tuple[bool, dict[str, str], None]:
    _inputs(uses, w, {"path", "name", "retention-days"})
    src = rt.workspace / w.get("path", "_site/")
    if not src.is_dir():
        raise StandinError(f"{uses}: {w.get('path')!r} is not a directory")
    files = [(p, p.relative_to(src).as_posix()) for p in src.rglob("*") if p.is_file()]
    rt.run.store.upload(w.get("name", "github-pages"), files, False)
    return True, {}, None


def deploy_pages(rt: JobRuntime, uses: str, w: dict[str, str], env: dict[str, str]) -> tuple[bool, dict[str, str], None]:
    _inputs(uses, w, {"artifact_name", "token", "timeout", "error_count", "reporting_interval", "preview"})
    _need(rt, "pages", "write", uses)
    _need(rt, "id-token", "write", uses)
    if rt.env_name != "github-pages":
        raise StandinError(f"{uses}: the job must deploy to the github-pages environment")
    store = rt.run.store
    name = w.get("artifact_name", "github-pages")
    if name not in store.artifact_names():
        raise StandinError(f"{uses}: no {name!r} artifact in this run (upload-pages-artifact first)")
    if store.pages.exists():
        shutil.rmtree(store.pages)
    shutil.copytree(store.artifacts / name, store.pages)
    return True, {"page_url": PAGES_URL + "/"}, None


PYPI_UPLOAD_URL = "https://upload.pypi.org/legacy/"


def _dist_metadata(path: Path) -> dict[str, str]:
    """Name and Version from a wheel's METADATA or an sdist's PKG-INFO (one-line StandinError otherwise)."""
    import email
    import tarfile
    import zipfile

    try:
        if path.name.endswith(".whl"):
            with zipfile.ZipFile(path) as zf:
                names = [n for n in zf.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
                raw = zf.read(names[0]) if len(names) == 1 else b""
        else:
            with tarfile.open(path) as tar:
                members = [m for m in tar.getmembers() if m.name.count("/") == 1 and m.name.endswith("/PKG-INFO")]
                fh = tar.extractfile(members[0]) if len(members) == 1 else None
                raw = fh.read() if fh is not None else b""
    except (OSError, zipfile.BadZipFile, tarfile.TarError) as exc:
        raise StandinError(f"{path.name}: not a readable distribution ({exc})") from None
    meta = email.message_from_bytes(raw)
    if not raw or not meta.get("Name") or not meta.get("Version") or not meta.get("Metadata-Version"):
        raise StandinError(f"{path.name}: no metadata with Metadata-Version, Name and Version (twine check fails)")
    return {"name": str(meta["Name"]), "version": str(meta["Version"])}


def pypi_publish(rt: JobRuntime, uses: str, w: dict[str, str], env: dict[str, str]) -> tuple[bool, dict[str, str], None]:
    from packaging.utils import canonicalize_name, parse_sdist_filename, parse_wheel_filename

    _inputs(uses, w, {"packages-dir", "repository-url", "skip-existing", "verbose", "print-hash", "attestations",
                      "verify-metadata"})
    _need(rt, "id-token", "write", f"{uses} (trusted publishing exchanges the job's OIDC token)")
    if w.get("repository-url", PYPI_UPLOAD_URL) != PYPI_UPLOAD_URL:
        raise StandinError(f"{uses}: repository-url {w['repository-url']!r}: the stand-in is PyPI's")
    folder = rt.workspace / w.get("packages-dir", "dist")
    files = sorted(p for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []
    if not files:
        raise StandinError(f"{uses}: no distributions in {w.get('packages-dir', 'dist')}/")
    checked = []
    for path in files:
        try:
            if path.name.endswith(".whl"):
                name, version = parse_wheel_filename(path.name)[:2]
            elif path.name.endswith(".tar.gz"):
                name, version = parse_sdist_filename(path.name)
            else:
                raise StandinError(f"{uses}: {path.name} is neither a wheel nor an sdist (.tar.gz); PyPI refuses it")
        except ValueError as exc:
            raise StandinError(f"{uses}: {path.name}: {exc}") from None
        meta = _dist_metadata(path)
        if canonicalize_name(meta["name"]) != name or meta["version"] != str(version):
            raise StandinError(f"{uses}: {path.name}: its metadata says {meta['name']} {meta['version']}")
        checked.append((path, name))
    skip = w.get("skip-existing", "false").lower() == "true"  # (a YAML boolean reaches here as "True")
    for path, name in checked:
        dest = rt.run.store.work / "pypi" / name / path.name
        if dest.exists():
            if skip:
                continue
            raise StandinError(f"{uses}: {path.name}: File already exists (PyPI never replaces a file)")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest)
    return True, {}, None


ACTIONS: dict[str, tuple[str, Action]] = {
    "actions/checkout": ("v5", checkout),
    "actions/setup-python": ("v6", setup_python),
    "actions/upload-artifact": ("v6", upload_artifact),
    "actions/download-artifact": ("v7", download_artifact),
    "actions/cache": ("v5", cache),
    "actions/cache/restore": ("v5", cache),
    "actions/cache/save": ("v5", cache),
    "actions/configure-pages": ("v6", configure_pages),
    "actions/upload-pages-artifact": ("v5", upload_pages_artifact),
    "actions/deploy-pages": ("v5", deploy_pages),
    "pypa/gh-action-pypi-publish": ("release/v1", pypi_publish),
}


def run_action(rt: JobRuntime, uses: str, w: dict[str, str], env: dict[str, str]
               ) -> tuple[bool, dict[str, str], Callable[[], None] | None]:
    """Run the stand-in for ``uses`` (``owner/name[/path]@major``); the major must be the one stood in for."""
    if "@" not in uses:
        raise StandinError(f"uses {uses!r}: the runner stands in for published actions at a major version only")
    action, version = uses.rsplit("@", 1)
    if action not in ACTIONS:
        raise StandinError(f"uses {uses!r}: no stand-in (known: {', '.join(sorted(ACTIONS))})")
    major, fn = ACTIONS[action]
    if version != major:
        raise StandinError(f"uses {uses!r}: the stand-in follows {action}@{major} (its inputs and naming rules)")
    ok, outputs, post = fn(rt, uses, w, env)
    return ok, outputs, post

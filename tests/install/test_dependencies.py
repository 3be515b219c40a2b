"""What an end-user install (`pipx install xzbuild`: the runtime dependencies, no extras) brings: everything
the commands import and the pytest options `hil run` passes, and not labgrid's pyserial fork."""

from __future__ import annotations

import ast
import importlib.metadata as md
import sys

from packaging.utils import canonicalize_name

from tests.install.deps import ROOT, closure, declared

PROJECT = {"xzbuild", "assets_gen", "hil", "tests", "__future__"}
# modules imported only on the labgrid backend's path (hil.lab.labgrid_backend.Coordinator says which extra
# to install when labgrid is absent): module -> the extra that brings it
OPTIONAL = {"labgrid": "labgrid", "grpc": "labgrid"}


def imported_modules() -> dict[str, str]:
    """Top-level third-party module -> the first file:line importing it, over every shipped module (the HIL
    suite under hil/tests included: `hil run` runs it in the installed environment)."""
    found: dict[str, str] = {}
    for package in ("xzbuild", "hil", "assets_gen"):
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                for name in names:
                    top = name.split(".")[0]
                    if top in PROJECT or top in sys.stdlib_module_names:
                        continue
                    found.setdefault(top, f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_every_imported_module_comes_with_the_runtime_dependencies() -> None:
    runtime = closure(declared())
    providers = md.packages_distributions()
    missing = []
    for module, where in sorted(imported_modules().items()):
        dists = {canonicalize_name(d) for d in providers.get(module, [])}
        if module in OPTIONAL:
            assert dists and dists <= set(closure(declared(OPTIONAL[module]))), (where, module)
            continue
        if not dists & set(runtime):
            missing.append(f"{where}: imports {module} ({', '.join(sorted(dists)) or 'no installed distribution'})")
    assert not missing, "not in the runtime dependencies:\n" + "\n".join(missing)


def test_the_pytest_options_hil_run_passes_come_with_the_runtime_dependencies() -> None:
    # `hil run` starts pytest with --timeout (pytest-timeout's option, per its documentation) and
    # --embedded-services esp,idf (pytest-embedded's, served by its -serial-esp and -idf plugins)
    source = (ROOT / "hil" / "lab" / "runner.py").read_text(encoding="utf-8")
    runtime = set(closure(declared()))
    assert '"--timeout"' in source and '"esp,idf"' in source
    assert {"pytest-timeout", "pytest-embedded", "pytest-embedded-serial-esp", "pytest-embedded-idf"} <= runtime


def test_an_end_user_install_does_not_bring_labgrids_pyserial_fork() -> None:
    # docs/lab.md "Two traps": pyserial-labgrid installs into pyserial 3.5's serial/ package
    runtime = closure(declared())
    assert "pyserial-labgrid" not in runtime, "pyserial-labgrid (labgrid's fork of pyserial) is a runtime dependency"
    assert "pyserial" in runtime
    assert "pyserial-labgrid" in closure(declared("labgrid"))  # the extra does bring it: docs/install.md says what to do

"""Judge for every JUnit file the project writes: Jenkins' junit-10.xsd (xmlschema) and junitparser's reader."""

from __future__ import annotations

from pathlib import Path

import junitparser
import xmlschema

XSD = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures" / "junit" / "junit-10.xsd"
_SCHEMA: list[xmlschema.XMLSchema] = []


def schema_errors(path: Path) -> list[str]:
    """Every junit-10.xsd violation in ``path`` (empty list: valid)."""
    if not XSD.is_file():
        raise AssertionError(f"JUnit schema not found at {XSD}")
    if not _SCHEMA:
        _SCHEMA.append(xmlschema.XMLSchema(str(XSD)))
    return [f"{e.path}: {e.reason}" for e in _SCHEMA[0].iter_errors(str(path))]


def all_cases(path: Path) -> list[junitparser.TestCase]:
    """Every test case as junitparser reads it, after asserting the file is schema-valid."""
    errors = schema_errors(path)
    assert errors == [], errors
    xml = junitparser.JUnitXml.fromfile(str(path))
    suites = [xml] if isinstance(xml, junitparser.TestSuite) else list(xml)
    return [case for suite in suites for case in suite]


def load_cases(path: Path) -> dict[str, junitparser.TestCase]:
    """The test cases by name (one suite, unique names), after asserting the file is schema-valid."""
    cases = all_cases(path)
    by_name = {case.name: case for case in cases}
    assert len(by_name) == len(cases), "duplicate test case names; use all_cases"
    return by_name

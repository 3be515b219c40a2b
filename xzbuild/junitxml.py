"""Make JUnit XML written by other tools (pytest, pytest-embedded) conform to Jenkins' ``junit-10.xsd``.

GitLab and Jenkins read that schema's shape: ``<properties>`` only under ``<testsuite>``, and a fixed set of
attributes per element. pytest's ``record_property`` puts ``<properties>`` under ``<testcase>`` and
``record_xml_attribute`` adds attributes of its own; ``conform`` moves the properties up to the suite (names
prefixed with the test case) and keeps unknown attributes as suite properties too, so nothing is lost.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

# Attributes junit-10.xsd allows (xs:attribute lists of testcase / testsuite).
TESTCASE_ATTRS = frozenset({"name", "assertions", "time", "timestamp", "classname", "status", "class", "file",
                            "line", "log", "group", "url"})
TESTSUITE_ATTRS = frozenset({"name", "tests", "failures", "errors", "time", "disabled", "skipped", "skips",
                             "timestamp", "hostname", "id", "package", "assertions", "file", "skip", "log", "url"})
TESTCASE_CHILDREN = frozenset({"skipped", "error", "failure", "rerunFailure", "rerunError", "system-out",
                               "system-err"})


def conform(suite: ET.Element) -> ET.Element:
    """Rewrite one ``<testsuite>`` in place (nested suites too) so it validates; returns it."""
    moved: list[tuple[str, str]] = []
    for key in [k for k in suite.attrib if k not in TESTSUITE_ATTRS]:
        moved.append((key, suite.attrib.pop(key)))
    if "tests" not in suite.attrib:
        suite.set("tests", str(sum(1 for c in suite if c.tag == "testcase")))
    for child in list(suite):
        if child.tag == "testsuite":
            conform(child)
        elif child.tag == "testcase":
            case = child.get("name", "")
            for key in [k for k in child.attrib if k not in TESTCASE_ATTRS]:
                moved.append((f"{case}.{key}", child.attrib.pop(key)))
            for sub in list(child):
                if sub.tag == "properties":
                    moved.extend((f"{case}.{p.get('name', '')}", p.get("value", p.text or ""))
                                 for p in sub.iter("property"))
                if sub.tag not in TESTCASE_CHILDREN:
                    child.remove(sub)
    if moved:
        props = suite.find("properties")
        if props is None:
            props = ET.Element("properties")
            suite.insert(0, props)
        for name, value in moved:
            ET.SubElement(props, "property", name=name, value=value)
    return suite

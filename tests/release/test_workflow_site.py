"""release.yml publishes the site: built from the merged release, uploaded as a Pages artifact, deployed on tags."""

from __future__ import annotations

import json

import yaml

from tests.builder.firmware import REPO
from xzbuild.release.webinstall import PINNED_VERSION


def test_site_jobs_follow_the_merge_and_publish_to_pages() -> None:
    wf = yaml.load((REPO / ".github" / "workflows" / "release.yml").read_text(), Loader=yaml.BaseLoader)
    jobs = wf["jobs"]
    site, pages = jobs["site"], jobs["pages"]
    assert "release" in site["needs"] and pages["needs"] == "site"
    text = json.dumps(site["steps"])
    assert "xzbuild release site --dist release -o site" in text
    assert f"esp-web-tools@{PINNED_VERSION}" in text  # the same pin as the Makefile and the site record
    uses = [step.get("uses", "") for step in site["steps"]] + [step.get("uses", "") for step in pages["steps"]]
    assert "actions/upload-pages-artifact@v5" in uses and "actions/deploy-pages@v5" in uses
    assert pages["permissions"] == {"pages": "write", "id-token": "write"}
    assert pages["environment"]["name"] == "github-pages"
    makefile = (REPO / "Makefile").read_text()
    assert f"esp-web-tools@{PINNED_VERSION}" in makefile

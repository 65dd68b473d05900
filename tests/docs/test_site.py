"""The documentation site builds with every link and anchor resolved (docs/mkdocs.yml, strict:
a warning is an error), and no page points outside the repository."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_the_site_builds_strict(tmp_path):
    config = (REPO / "docs" / "mkdocs.yml").read_text(encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
                           "-f", "-", "-d", str(tmp_path / "site")],
                          input=config, cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_relative_link_of_every_page_is_inside_the_repository():
    outside = []
    for page in PAGES:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue                              # a web address, or an anchor of the page
            path = (page.parent / target.split("#")[0]).resolve()
            if not path.is_relative_to(REPO) or not path.exists():
                outside.append(f"{page.relative_to(REPO)}: {target}")
    assert outside == []

"""The repository stands alone: no file points at material outside it (the design notes and the
source documents the project was started from live outside the repository; what the code and the
docs need of them is in docs/, and sources are cited by their public identity: a patent number)."""
import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUTSIDE = re.compile(r"\.\./shared|UNICORN_FACTS|\bDESIGN\.md|\bseeds/|\b[Ss]eed[ -]?00[0-4]\b")
TEXT = (".py", ".c", ".h", ".s", ".md", ".cfg", ".toml", ".yml")


def test_no_file_points_outside_the_repository():
    listed = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True)
    found = []
    for name in listed.stdout.split():
        if name.endswith(TEXT) and name != "tests/unit/test_repository.py":
            for number, line in enumerate((REPO / name).read_text(encoding="utf-8").splitlines(), 1):
                if OUTSIDE.search(line):
                    found.append(f"{name}:{number}: {line.strip()}")
    assert found == []


# The project's top level is fixed: what is inside these is the project's to shape.
TOP_LEVEL = {"setup.cfg", "pyproject.toml", "emu", "loader", "instrumenter", "kernel_model",
             "trapline", "tests", "samples", "README.md", "docs", "bench", ".ci", ".gitignore"}


def test_the_top_level_holds_only_the_fixed_entries():
    import subprocess
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True,
                             check=True).stdout.split("\n")
    entries = {path.split("/", 1)[0] for path in tracked if path}
    assert entries <= TOP_LEVEL, sorted(entries - TOP_LEVEL)

"""One concept per file: no Python file of the repository is over MAX_LINES lines (issue 27, "a
house a newcomer can live in"). A file that grows past it has become two concepts; split it
along them (a module beside it), as xv6 keeps trap.c, proc.c and vm.c apart.

The scan walks the repository's own folders (not the e2e cache of Debian's files, nor hidden
folders such as .git) and imports nothing.
"""
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FOLDERS = ("emu", "loader", "kernel_model", "instrumenter", "trapline", "tests", "bench", "samples")
MAX_LINES = 450
SKIPPED = {".cache", "__pycache__"}


def python_files(root: Path, folders=FOLDERS) -> list[Path]:
    found = []
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            parts = path.relative_to(root).parts
            if not any(part in SKIPPED or part.startswith(".") for part in parts):
                found.append(path)
    return found


def too_long(paths, limit: int = MAX_LINES) -> list[str]:
    return [f"{p.relative_to(REPO) if p.is_relative_to(REPO) else p} ({n} lines)"
            for p in paths if (n := len(p.read_text().splitlines())) > limit]


def test_no_python_file_is_over_the_limit():
    files = python_files(REPO)
    assert len(files) > 500                        # the scan sees the repository
    long = too_long(files)
    assert not long, f"over {MAX_LINES} lines, split along its concepts: " + ", ".join(long)


def test_the_scan_finds_a_long_file_and_skips_the_cache(tmp_path):
    (tmp_path / "emu").mkdir()
    (tmp_path / "emu" / "long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (tmp_path / "emu" / "short.py").write_text("x = 1\n" * MAX_LINES)
    cache = tmp_path / "tests" / "e2e" / ".cache"
    cache.mkdir(parents=True)
    (cache / "vendored.py").write_text("x = 1\n" * 1000)
    files = python_files(tmp_path)
    assert sorted(p.name for p in files) == ["long.py", "short.py"]
    assert [line.split(" ")[0].endswith("long.py") for line in too_long(files)] == [True]

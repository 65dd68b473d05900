"""The scan that checks a tool reaches the kernel only through the debug interface (issue 15):
what a package imports, and the lines whose attribute paths reach past the door. Shared by the
instrumenter's and strace's door tests."""
import ast
import re
from pathlib import Path


def imported_modules(files: list[Path]) -> set[tuple[str, str]]:
    """(file name, module) for every absolute import in `files`."""
    imported = set()
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imported.add((path.name, node.module))
            elif isinstance(node, ast.Import):
                imported.update((path.name, alias.name) for alias in node.names)
    return imported


def lines_past_the_door(files: list[Path], pattern: re.Pattern) -> list[str]:
    """`file:line: code` for every line whose code (comments left out) matches `pattern`."""
    leaks = []
    for path in files:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line.split("#", 1)[0]):
                leaks.append(f"{path.name}:{number}: {line.strip()}")
    return leaks

"""Writes kernel_model/syscalls/homes.py's table from the registrations themselves: every module
of impls/ is imported, each `@syscall` is grouped by the module its function is defined in
(fn.__module__), modules and names sorted. Run it after adding or moving a system call:

    python3 -m tests.unit.kernel_model.syscalls.homes_generator

test_homes.py checks that the file is what this writes."""
import importlib
import pkgutil
from pathlib import Path

import kernel_model.syscalls.impls as impls
from kernel_model.syscalls.registry import IMPLEMENTATIONS, all_declarations

HOMES_PY = Path(__file__).resolve().parents[4] / "kernel_model" / "syscalls" / "homes.py"
IMPLS = "kernel_model.syscalls.impls."
WIDTH = 100                    # the project's line length


def by_module() -> dict[str, list[str]]:
    """{module of impls/: the calls it registers}, both sorted."""
    grouped: dict[str, list[str]] = {}
    all_declarations()
    for module in pkgutil.iter_modules(impls.__path__):     # also those the table misses yet
        importlib.import_module(IMPLS + module.name)
    for name, declared in IMPLEMENTATIONS.items():
        module = declared.fn.__module__
        assert module.startswith(IMPLS), (name, module)
        grouped.setdefault(module[len(IMPLS):], []).append(name)
    return {module: sorted(grouped[module]) for module in sorted(grouped)}


def _entry(module: str, names: list[str]) -> list[str]:
    """`    "module": "a b c "` wrapped at WIDTH, continued on lines of their own."""
    head, lines, words = f'    "{module}": "', [], []
    for name in names:
        indent = head if not lines else '        "'
        if words and len(indent) + len(" ".join(words + [name])) + 2 > WIDTH:
            lines.append(indent + " ".join(words) + ' "')
            words = []
        words.append(name)
    lines.append((head if not lines else '        "') + " ".join(words) + '",')
    return lines


def table_text() -> str:
    body = [line for module, names in by_module().items() for line in _entry(module, names)]
    return "_BY_MODULE = {\n" + "\n".join(body) + "\n}\n"


def regenerated(text: str) -> str:
    """homes.py's `text` with its table replaced by table_text()."""
    start = text.index("_BY_MODULE = {\n")
    end = text.index("\n}\n", start) + 3
    return text[:start] + table_text() + text[end:]


if __name__ == "__main__":
    HOMES_PY.write_text(regenerated(HOMES_PY.read_text()))
    print(f"wrote {HOMES_PY}")

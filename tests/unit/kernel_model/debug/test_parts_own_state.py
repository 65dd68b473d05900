"""The door's parts keep to their own state (issue 27): in kernel_model/debug/**.py every
`self._name` a class reads is assigned in that same class (in its body or through `self`) or is
one of its methods, so no part reaches another's private attributes through a shared `self`, as
the mixins did. And nothing under kernel_model/ imports the door but the kernel, which makes it,
and the door itself."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
DOOR = ROOT / "kernel_model" / "debug"
# ring0.py's bare guest has no kernel and so no door; it hands its tool the door's own view of a
# CPU (debug/cpu.py SpaceCpu) directly.
DOOR_IMPORTERS = {"kernel_model/kernel.py", "kernel_model/ring0.py"}


def _own_names(cls: ast.ClassDef) -> set[str]:
    """What `cls` defines: methods, class-body assignments, and `self.X = ...` anywhere in it."""
    names = set()
    for node in cls.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    for node in ast.walk(cls):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                and isinstance(node.value, ast.Name) and node.value.id == "self":
            names.add(node.attr)
    return names


def _foreign_reads(source: str, name: str) -> list[str]:
    """`file:line: self._x` for every private attribute a class reads without owning it, and
    every getattr/setattr on `self` by a name in a string (which the first rule cannot see)."""
    found = []
    for cls in (n for n in ast.walk(ast.parse(source, name)) if isinstance(n, ast.ClassDef)):
        own = _own_names(cls)
        for node in ast.walk(cls):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id == "self" and node.attr.startswith("_") \
                    and not node.attr.startswith("__") and node.attr not in own:
                found.append(f"{name}:{node.lineno}: {cls.name} reads self.{node.attr}")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id in ("getattr", "setattr") and node.args \
                    and isinstance(node.args[0], ast.Name) and node.args[0].id == "self":
                found.append(f"{name}:{node.lineno}: {cls.name} {node.func.id}(self, ...)")
    return found


def test_every_part_reads_only_its_own_private_state():
    files = sorted(DOOR.glob("**/*.py"))
    assert len(files) >= 20                              # the scan sees the package
    leaks = []
    for path in files:
        leaks += _foreign_reads(path.read_text(), str(path.relative_to(ROOT)))
    assert leaks == []


def test_the_scan_sees_a_mixin_reading_a_sibling():
    mixin = ("class CodeAliases:\n"
             "    _aliases = None\n"
             "    def hit(self, space):\n"
             "        self._own = 1\n"
             "        return self._aliases, self._own, self._code_breakpoints\n"
             "class Hooks:\n"
             "    def table(self, name):\n"
             "        return getattr(self, name)\n")
    assert _foreign_reads(mixin, "planted.py") == [
        "planted.py:5: CodeAliases reads self._code_breakpoints",
        "planted.py:8: Hooks getattr(self, ...)"]


def _imports(path: Path) -> set[str]:
    """Every module `path` imports, relative imports resolved."""
    package = path.relative_to(ROOT).with_suffix("").parts[:-1]
    modules = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = list(package[:len(package) - node.level + 1]) if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            modules.add(module)
            modules.update(f"{module}.{alias.name}" for alias in node.names)
    return modules


def test_only_the_kernel_imports_the_door():
    importers = set()
    for path in sorted((ROOT / "kernel_model").glob("**/*.py")):
        if DOOR in path.parents:
            continue
        if any(m == "kernel_model.debug" or m.startswith("kernel_model.debug.") for m in _imports(path)):
            importers.add(str(path.relative_to(ROOT)))
    assert "kernel_model/kernel.py" in importers         # the scan sees the one that must
    assert importers <= DOOR_IMPORTERS, sorted(importers - DOOR_IMPORTERS)

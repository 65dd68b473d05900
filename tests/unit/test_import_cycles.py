"""No import cycles between the folders of a package (issue 27, "a house a newcomer can live in"):
at every package level, the direct children of the package (a module, or a subpackage with
everything under it) import each other in one direction only, so each folder can be read, and
tested, from the bottom up.

An edge is any import, at any depth (inside a function or under TYPE_CHECKING too: hiding an
import breaks no cycle). The scan reads the source with ast and imports nothing of the project.
A cycle is a strongly connected component of more than one child (Tarjan's algorithm).
"""
import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("emu", "loader", "instrumenter", "kernel_model", "trapline")


def modules_under(root: Path, packages) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file of `packages` (a package is its __init__)."""
    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _known_prefix(name: str, modules) -> str | None:
    """The module `name` lands in: itself, or the nearest package above it that is ours."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module a `from ... import` names (relative levels resolved against `module`)."""
    if not node.level:
        return node.module
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(module: str, path: Path, modules) -> set[str]:
    """Our modules that `module` imports anywhere in its file."""
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, module, is_package)
            # `from pkg import mod` imports the module pkg.mod; `from mod import name` imports mod
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                     for alias in node.names]
        else:
            continue
        found |= {target for target in map(lambda n: _known_prefix(n, modules), names)
                  if target and target != module}
    return found


def _child(module: str, package: str) -> str:
    """The direct child of `package` that contains `module`."""
    rest = module[len(package) + 1:] if package else module
    return (f"{package}." if package else "") + rest.split(".")[0]


def _inside(module: str, package: str) -> bool:
    return module.startswith(package + ".") if package else True


def children_graph(package: str, edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """Edges between the direct children of `package`, from the edges between modules."""
    graph: dict[str, set[str]] = {}
    for source, targets in edges.items():
        for target in targets:
            if _inside(source, package) and _inside(target, package) and package not in (source, target):
                a, b = _child(source, package), _child(target, package)
                if a != b:
                    graph.setdefault(a, set()).add(b)
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """Tarjan's strongly connected components of more than one node, each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph.get(node, ())):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(tuple(sorted(component)))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def import_cycles(root: Path, packages) -> set[tuple[str, tuple[str, ...]]]:
    """(package, its children in a cycle) for every package level of `packages` under `root`."""
    modules = modules_under(root, packages)
    edges = {module: imports_of(module, path, modules) for module, path in modules.items()}
    levels = [""] + sorted(m for m, p in modules.items() if p.name == "__init__.py")
    return {(package or "<top>", cycle)
            for package in levels for cycle in strongly_connected(children_graph(package, edges))}


def test_no_import_cycle_between_the_folders_of_a_package():
    cycles = import_cycles(REPO, PACKAGES)
    assert len(modules_under(REPO, PACKAGES)) > 300          # the scan sees the packages
    assert not cycles, "import cycles (package: members):\n" + "\n".join(
        f"  {package}: {' <-> '.join(members)}" for package, members in sorted(cycles))


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_a_cycle_hidden_in_a_function_through_a_subpackage_is_found(tmp_path):
    _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/low.py": "def f():\n    from .high.deep import thing\n",
        "pkg/high/__init__.py": "",
        "pkg/high/deep.py": "from ..low import f\nthing = 1\n",
        "pkg/side.py": "from pkg import low\n",
    })
    assert import_cycles(tmp_path, ["pkg"]) == {("pkg", ("pkg.high", "pkg.low"))}


def test_a_one_way_import_is_no_cycle(tmp_path):
    _write(tmp_path, {
        "pkg/__init__.py": "from .high import deep\n",
        "pkg/low.py": "import os\nX = 1\n",
        "pkg/high/__init__.py": "",
        "pkg/high/deep.py": "from pkg.low import X\nfrom .. import low\n",
    })
    assert import_cycles(tmp_path, ["pkg"]) == set()

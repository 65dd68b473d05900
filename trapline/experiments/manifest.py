"""DIR/manifest.toml: what an experiment's results came from, so that anyone can run it again
and check (verify.py). It holds no host time and no host path it does not need: the spec as
given and where its relative paths start, sha256 and size of every input (the spec, every file
of every tree the points ran in, which of them the guest loaded -- exec'd or mapped -- and which
it opened: the door's list, kernel_model/debug/opened_files.py), the software that ran it,
the sweep points and which are done, and sha256 and size of every output.
"""
from __future__ import annotations

import functools
import platform
import subprocess
import tomllib
from importlib import metadata
from pathlib import Path

from . import toml_writer
from .inputs import sha256

NAME = "manifest.toml"
SPEC_NAME = "spec.toml"
FORMAT = 1
# distributions whose versions decide the results (unicorn is pinned by setup.cfg), and the
# plots' bytes (matplotlib: plots.py)
DISTRIBUTIONS = ("trapline", "unicorn", "capstone", "keystone-engine", "pyelftools", "matplotlib")


def environment() -> dict:
    return dict(_environment())


@functools.cache
def _environment() -> dict:
    env = {"python": platform.python_version()}
    for name in DISTRIBUTIONS:
        try:
            env[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            env[name] = ""
    env["git_commit"], env["git_dirty"] = _git()
    from emu.cpuid import brand
    env["modeled_cpu"] = brand()           # what CPUID and /proc/cpuinfo tell the guest
    return env


def _git() -> tuple[str, bool]:
    """The checkout the running package comes from, if it is one (an installed wheel is not)."""
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        return "", False
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "", False
    return head, bool(dirty)


def inputs(spec_text: bytes, plan, loaded: set[tuple[str, str]],
           opened: set[tuple[str, str]] = frozenset()) -> list[dict]:
    """The spec, then each tree's entries (files and links) in path order; `loaded` holds
    (tree digest, guest path) pairs the guests mapped, `opened` those they opened."""
    rows = [{"role": "spec", "path": SPEC_NAME, "sha256": sha256(spec_text), "size": len(spec_text)}]
    for digest in sorted(plan.trees):
        for entry in sorted(plan.trees[digest].entries, key=lambda e: e.path):
            if entry.kind == "dir":
                continue
            rows.append({"role": "file" if entry.kind == "file" else "link", "tree": digest,
                         "guest": entry.path, "source": entry.source, "sha256": entry.sha256,
                         "size": entry.size, "loaded": (digest, entry.path) in loaded,
                         "opened": (digest, entry.path) in opened})
    return rows


def write(directory: Path, data: dict) -> None:
    text = toml_writer.dumps(data)
    partial = directory / (NAME + ".tmp")
    partial.write_text(text)
    partial.replace(directory / NAME)             # never half a manifest


def read(directory: Path) -> dict:
    path = directory / NAME
    try:
        return tomllib.loads(path.read_text())
    except FileNotFoundError:
        from ..errors import UsageError
        raise UsageError(f"{directory}: no {NAME} (not an experiment's folder)") from None
    except tomllib.TOMLDecodeError as e:
        from ..errors import UsageError
        raise UsageError(f"{path}: not TOML: {e}") from None


def output_entry(directory: Path, name: str, host_data: bool) -> dict:
    data = (directory / name).read_bytes()
    return {"path": name, "sha256": sha256(data), "size": len(data), "host_data": host_data}

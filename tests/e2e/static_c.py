"""A small C program of a test built as the host's gcc builds it (x86-64, static, -O1): for
tests whose guest must contain one exact instruction sequence or behaviour no sample has."""
import subprocess
from pathlib import Path


def build_static(tmp_path_factory, name: str, source: str, flags: tuple[str, ...] = ()) -> Path:
    """`flags`: more gcc options (`-g` for a test that needs DWARF)."""
    where = tmp_path_factory.mktemp(name)
    (where / f"{name}.c").write_text(source)
    subprocess.run(["gcc", "-O1", "-static", *flags, "-o", name, f"{name}.c"], cwd=where, check=True)
    return where / name

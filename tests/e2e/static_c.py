"""A small C program of a test built as the host's gcc builds it (static, -O1): for tests whose
guest must contain one exact instruction sequence or behaviour no sample has, or whose output is
compared with the same program's native run."""
import subprocess
from pathlib import Path

from tests.e2e.host_tools import ensure_gcc_m32


def build_static(tmp_path_factory, name: str, source: str, flags: tuple[str, ...] = (),
                 arch: str = "x86_64") -> Path:
    """`flags`: more gcc options (`-g` for a test that needs DWARF); `arch` "i386" builds with -m32
    (installing gcc-multilib on first need)."""
    if arch == "i386":
        ensure_gcc_m32()
        flags = ("-m32", *flags)
    where = tmp_path_factory.mktemp(name)
    (where / f"{name}.c").write_text(source)
    subprocess.run(["gcc", "-O1", "-static", *flags, "-o", name, f"{name}.c"], cwd=where, check=True)
    return where / name

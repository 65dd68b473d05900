"""The host's own dynamically linked x86-64 programs run in the sandbox as natively (issue 14).

The sandbox's default root is the host's `/`, read-only: `trapline run -- /bin/ls` loads
/bin/ls, its PT_INTERP (/lib64/ld-linux-x86-64.so.2) and, through ld.so, libc and the rest
from the host. The native reference is the same command run directly, with the same
environment. Outputs that depend on host metadata the sandbox models deterministically
(inode numbers, directory sizes, "now") are kept out of the comparisons.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.e2e.sandbox_runner import FIXED_ENV, assert_same_behaviour, run_sandbox
from tests.e2e.sandbox_runner import Result

pytestmark = pytest.mark.e2e


def _native(argv: list[str], cwd: str = "/", stdin: bytes = b"") -> Result:
    done = subprocess.run(argv, input=stdin, capture_output=True, cwd=cwd, env=FIXED_ENV,
                          timeout=60)
    return Result("native", tuple(argv), done.stdout, done.stderr, done.returncode)


def _same(argv: list[str], *, cwd: str = "/", stdin: bytes = b"") -> Result:
    native = _native(argv, cwd, stdin)
    sandbox = run_sandbox(argv, rootfs=None, cwd=cwd, env=FIXED_ENV, clear_env=True, stdin=stdin)
    assert_same_behaviour(sandbox, native)
    return sandbox


def test_ls_lists_the_root():
    _same(["/bin/ls", "-1", "/", "/usr/lib/x86_64-linux-gnu/gconv/gconv-modules.d"])


def test_sort_of_a_file(tmp_path: Path):
    lines = [f"{(i * 7919) % 1000:04d} line {i}" for i in range(2000)]
    (tmp_path / "data.txt").write_text("\n".join(lines) + "\n")
    result = _same(["/bin/sort", "-r", str(tmp_path / "data.txt")])
    assert result.stdout.splitlines()[0].startswith(b"0999")


def test_dynamic_shell_runs_dynamic_programs():
    """dash forks and execs dynamic programs (a pipeline), its exit status passes through."""
    _same(["/bin/sh", "-c", "echo $((6*7)); /bin/ls / | /usr/bin/wc -l; /bin/false || exit 3"])


def test_ld_so_run_as_a_program():
    """`ld.so PROGRAM`: an ET_DYN without PT_INTERP that maps the program itself."""
    _same(["/lib64/ld-linux-x86-64.so.2", "/bin/echo", "loaded", "by", "ld.so"])


def test_missing_library_gets_ld_so_message_and_127(tmp_path: Path):
    (tmp_path / "foo.c").write_text("int foo(void) { return 7; }\n")
    (tmp_path / "main.c").write_text("int foo(void);\nint main(void) { return foo(); }\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", "libmissing.so", "foo.c"], cwd=tmp_path, check=True)
    subprocess.run(["gcc", "-o", "prog", "main.c", "-L.", "-lmissing"], cwd=tmp_path, check=True)
    (tmp_path / "libmissing.so").unlink()
    result = _same([str(tmp_path / "prog")])
    assert result.returncode == 127
    assert b"error while loading shared libraries: libmissing.so" in result.stderr


def test_program_layout_is_linux_without_randomization():
    """PIE at ELF_ET_DYN_BASE, ld.so at the top of the mmap region (setarch -R's layout)."""
    result = run_sandbox(["/bin/cat", "/proc/self/maps"], rootfs=None, env=FIXED_ENV, clear_env=True)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.decode().splitlines()
    assert lines[0].startswith("555555554000-") and lines[0].endswith("/usr/bin/cat")
    ld_so = [line for line in lines if line.endswith("ld-linux-x86-64.so.2")]
    assert ld_so[-1].split()[0].endswith("-7ffff7fff000")
    # Each object's areas — sizes and places relative to its first page, permissions, file
    # offsets — are the ones Linux maps (device and inode are the sandbox's). Natively with
    # address randomization on (setarch -R needs a personality a container may forbid): it
    # moves each object as a whole.
    native = subprocess.run(["/bin/cat", "/proc/self/maps"], capture_output=True, env=FIXED_ENV,
                            check=True).stdout.decode().splitlines()
    for name in ("/usr/bin/cat", "ld-linux-x86-64.so.2"):
        assert _relative_areas(lines, name) == _relative_areas(native, name), name


def _relative_areas(maps_lines: list[str], name: str) -> list[tuple]:
    """(start, end) relative to the object's first area, permissions and file offset."""
    rows = [line.split() for line in maps_lines if line.endswith(name)]
    ranges = [tuple(int(x, 16) for x in row[0].split("-")) for row in rows]
    base = ranges[0][0]
    return [(lo - base, hi - base, row[1], row[2]) for (lo, hi), row in zip(ranges, rows)]


def test_sysinfo_as_glibc_reads_it(tmp_path: Path):
    """struct sysinfo's layout on x86-64 (padding before totalhigh): glibc's
    sysconf(_SC_AVPHYS_PAGES) is freeram * mem_unit, and GNU sort sizes its buffer by it."""
    (tmp_path / "si.c").write_text(
        "#include <sys/sysinfo.h>\n#include <stdio.h>\n#include <unistd.h>\n"
        "int main(void) { struct sysinfo s; sysinfo(&s);\n"
        "  printf(\"unit=%u total=%d avphys=%d\\n\", s.mem_unit, s.totalram > 0,\n"
        "         sysconf(_SC_AVPHYS_PAGES) > 0); return 0; }\n")
    subprocess.run(["gcc", "-o", "si", "si.c"], cwd=tmp_path, check=True)
    assert _same([str(tmp_path / "si")]).stdout == b"unit=1 total=1 avphys=1\n"

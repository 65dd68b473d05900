"""What the user names for a run is checked before the run (issue 26): a --cwd that is no
directory of the guest's view, and an output folder or file that cannot be written, fail at
once with one line naming the path and why, status 2 — not after the whole run (profile -o),
not never (--cwd), not as an internal error (trace -o)."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kernel_model.errors import KernelError
from trapline.sandbox import Sandbox

ROOT = Path(__file__).resolve().parents[3]
ARCHES = ["i386", "x86_64"]


def _hello(arch: str) -> str:
    return str(ROOT / "samples" / "bin" / arch / "hello")


def _trapline(*argv) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "trapline", *map(str, argv)], capture_output=True,
                          stdin=subprocess.DEVNULL, timeout=120, cwd=ROOT)


def _unwritable_folder(tmp_path: Path) -> Path:
    """A folder nobody may create files in: mode 0500, or sysfs for root (whom modes do not stop)."""
    if os.geteuid() == 0:
        return Path("/sys")
    folder = tmp_path / "locked"
    folder.mkdir(mode=0o500)
    return folder


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("cwd,why", [("/nonexistent", "ENOENT (No such file or directory)"),
                                     ("/etc/passwd", "ENOTDIR (Not a directory)")])
def test_a_cwd_that_is_no_directory_stops_the_run_before_it_starts(arch, cwd, why):
    done = _trapline("run", "--cwd", cwd, "--", _hello(arch))
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr.decode().splitlines() == [f"trapline: cannot change directory to {cwd}: {why}"]


@pytest.mark.parametrize("arch", ARCHES)
def test_a_relative_cwd_is_in_the_rootfs_with_one_and_in_the_hosts_cwd_without(tmp_path, arch):
    root = tmp_path / "root"
    (root / "work").mkdir(parents=True)
    shutil.copy(_hello(arch), root / "work" / "hello")
    result = Sandbox(rootfs=str(root), cwd="work").run(["./hello"])
    assert (result.exit_code, result.stdout) == (0, b"hello, world\n")
    assert Sandbox(cwd="samples").guest_cwd() == os.path.join(os.getcwd(), "samples")
    with pytest.raises(KernelError, match="cannot change directory to nowhere: ENOENT"):
        Sandbox(rootfs=str(root), cwd="nowhere").run(["./hello"])


@pytest.mark.parametrize("arch", ARCHES)
def test_profile_checks_its_output_folder_before_the_run(tmp_path, arch):
    for folder, why in ((ROOT / "samples" / "hello.c" / "out", "Not a directory"),
                        (_unwritable_folder(tmp_path), None)):
        done = _trapline("profile", "-o", folder, "--", _hello(arch))
        assert done.returncode == 2 and done.stdout == b"", done.stderr.decode()   # nothing ran
        [line] = done.stderr.decode().splitlines()
        assert line.startswith(f"trapline: -o {folder}: ") and (why is None or line.endswith(why))


def test_report_checks_its_output_folder_before_reading_the_trace():
    folder = ROOT / "samples" / "hello.c" / "out"
    done = _trapline("report", "-o", folder, "no-such.trace")
    assert done.returncode == 2
    assert done.stderr.decode().splitlines() == [f"trapline: -o {folder}: Not a directory"]


@pytest.mark.parametrize("command", [["trace", "-p", "proc:exit"], ["gdbserver", "--stdio"]])
def test_an_output_file_that_cannot_be_written_is_a_usage_error_before_the_run(tmp_path, command):
    """trace -o opened its file at the first record: a KernelPanic mid-run (status 70)."""
    target = _unwritable_folder(tmp_path) / "records"
    done = _trapline(*command, "-o", target, "--", _hello("x86_64"))
    assert done.returncode == 2 and done.stdout == b"", done.stderr.decode()
    assert f"Invalid value for '-o' / '--output': '{target}'" in done.stderr.decode()
    assert "Traceback" not in done.stderr.decode()

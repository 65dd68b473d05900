"""`busybox dd bs=1` (two syscalls per byte) end to end: trapline vs QEMU user mode vs Qiling vs native.

`busybox dd if=/bin/busybox of=/dev/null bs=1 count=N` (N = 100 000 by default: 200 000
syscalls, a one-byte read of a rootfs file and a one-byte write to /dev/null each) on both
arches, each tool run as a whole process, in turns so that drift in the host's load hits all
alike; the median wall time and CPU time (user+sys, which a busy host disturbs less) of the runs:
  * native: Debian's static busybox run directly (the host runs i386 code too);
  * QEMU user mode: `qemu-x86_64` / `qemu-i386` when installed (apt-get install qemu-user);
  * trapline: `trapline run --rootfs R -- /bin/busybox dd ...` with R holding the busybox;
  * Qiling 1.4.6, when an interpreter that has it is found: $TRAPLINE_QILING_PYTHON, else
    /tmp/qlvenv/bin/python (`python3 -m venv /tmp/qlvenv; /tmp/qlvenv/bin/pip install
    qiling==1.4.6`: a separate venv keeps its pinned dependencies away from the project's),
    else this interpreter if it can import qiling. Qiling runs once per arch (it is slow).
Goals (issue 12, section 4): trapline >= 5x faster than Qiling and within 8x of QEMU user mode.

`python3 -m bench.dd_bs1 [--count N] [--runs K]`
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from .common import ROOT, timed_run

BUSYBOX = ROOT / "tests" / "e2e" / ".cache" / "debian" / "{arch}" / "root" / "bin" / "busybox"
QEMU = {"amd64": "qemu-x86_64", "i386": "qemu-i386"}
COUNT = 100_000
RUNS = 3
QILING_VENV_PYTHON = Path("/tmp/qlvenv/bin/python")
# Qiling's Linux loader takes the program's path on the host (inside its rootfs); /dev/null
# is not in that rootfs, so it is mapped to the host's.
QILING_SCRIPT = ("import sys; from qiling import Qiling; from qiling.const import QL_VERBOSE; "
                 "root = sys.argv[1]; "
                 "ql = Qiling([root + '/bin/busybox'] + sys.argv[2:], root, verbose=QL_VERBOSE.DISABLED); "
                 "ql.add_fs_mapper('/dev/null', '/dev/null'); ql.run()")


def qiling_python() -> str | None:
    """An interpreter that can import qiling, or None."""
    candidates = [os.environ.get("TRAPLINE_QILING_PYTHON"), str(QILING_VENV_PYTHON), sys.executable]
    for python in filter(None, candidates):
        if Path(python).exists() and subprocess.run([python, "-c", "import qiling"],
                                                    capture_output=True).returncode == 0:
            return python
    return None


def _trapline_head() -> list[str]:
    """The console script next to this interpreter, run by it (no shell shim in between)."""
    script = Path(sys.executable).parent / "trapline"
    return [sys.executable, str(script)] if script.is_file() else [sys.executable, "-m", "trapline"]


def _timed(argv: list[str]) -> tuple[float, float]:
    """(wall, cpu) seconds of one run of argv; it must exit 0 and say it copied every record."""
    return timed_run(argv, stderr_must_hold=b"records out")


def _commands(deb_arch: str, root: Path, count: int, runs: int) -> list[tuple[str, list[str], int]]:
    """(label, argv, runs) of every tool present, for `deb_arch`."""
    dd = ["dd", "if=/bin/busybox", "of=/dev/null", "bs=1", f"count={count}"]
    host_dd = ["dd", f"if={root / 'bin' / 'busybox'}", "of=/dev/null", "bs=1", f"count={count}"]
    busybox = str(root / "bin" / "busybox")
    commands = [("native", [busybox] + host_dd, runs)]
    qemu = shutil.which(QEMU[deb_arch])
    if qemu:
        commands.append(("QEMU user", [qemu, busybox] + host_dd, runs))
    commands.append(("trapline", _trapline_head() + ["run", "--rootfs", str(root), "--",
                                                     "/bin/busybox"] + dd, runs))
    python = qiling_python()
    if python:
        commands.append(("Qiling", [python, "-c", QILING_SCRIPT, str(root)] + dd, 1))
    return commands


def _line(label: str, wall: float, cpu: float, ours: tuple[float, float]) -> str:
    text = f"{label:10} wall {wall:7.3f} s  cpu {cpu:7.3f} s"
    if label != "trapline":
        text += f"  trapline / {label}: wall {ours[0] / wall:6.2f}  cpu {ours[1] / cpu:6.2f}"
    return text


def run(count: int = COUNT, runs: int = RUNS) -> list[str]:
    lines = []
    for deb_arch in ("amd64", "i386"):
        source = Path(str(BUSYBOX).format(arch=deb_arch))
        if not source.exists():
            lines.append(f"{deb_arch}: {source} missing (run tests/e2e/fetch_debian_bins.py)")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            (root / "bin").mkdir()
            shutil.copy(source, root / "bin" / "busybox")
            commands = _commands(deb_arch, root, count, runs)
            times: dict[str, list[tuple[float, float]]] = {label: [] for label, _, _ in commands}
            for turn in range(max(n for _, _, n in commands)):
                for label, argv, n in commands:
                    if turn < n:
                        times[label].append(_timed(argv))
        median = {label: (statistics.median(w for w, _ in t), statistics.median(c for _, c in t))
                  for label, t in times.items()}
        ours = median["trapline"]
        lines.append(f"{deb_arch}: dd bs=1 count={count} ({2 * count} syscalls), median of {runs}"
                     f" (Qiling: 1 run)")
        lines += ["  " + _line(label, *median[label], ours) for label in median]
        lines.append("  " + _goals(median))
    return lines


def _goals(median: dict[str, tuple[float, float]]) -> str:
    wall = {label: m[0] for label, m in median.items()}
    parts = []
    if "QEMU user" in wall:
        parts.append(f"trapline within {wall['trapline'] / wall['QEMU user']:.1f}x of QEMU (goal <= 8)")
    else:
        parts.append("QEMU user mode not installed")
    if "Qiling" in wall:
        parts.append(f"{wall['Qiling'] / wall['trapline']:.1f}x faster than Qiling (goal >= 5)")
    else:
        parts.append("Qiling not installed")
    return "; ".join(parts)


if __name__ == "__main__":
    args = sys.argv[1:]
    options = dict(zip(args[::2], args[1::2]))
    for text in run(int(options.get("--count", COUNT)), int(options.get("--runs", RUNS))):
        print(text, flush=True)

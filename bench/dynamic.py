"""Dynamic programs from the host's own `/` (issue 14): trapline vs Qiling vs QEMU user vs native.

Three workloads of the host's x86-64 Debian userland, each run as a whole process, in turns so
that drift in the host's load hits all tools alike; the median wall time and CPU time
(user+sys) of the runs:
  * `/bin/true`: the dynamic start-up (ld.so, libc, exit) end to end;
  * `/bin/ls -l /usr/bin`: ~1,000 directory entries, stat, getpwuid/getgrgid through nsswitch;
  * `/bin/sort` of a 1 MB file of 70,000 lines (generated, seeded).
Tools: native; QEMU user mode (`qemu-x86_64 -L /`) when installed; trapline (`trapline run --`,
the host's `/` read-only is its default root); Qiling 1.4.6 with `/` as its rootfs when an
interpreter that has it is found (bench/dd_bs1.py qiling_python), one run per workload, in its
multithread mode (without it glibc's first futex call raises inside Qiling, qiling#643).
Goals (issue 14): trapline >= 3x faster than Qiling on `ls -l` and `sort`; dynamic start-up
<= 0.3 s end to end.

`python3 -m bench.dynamic [--runs K]`
"""
import random
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from .common import timed_run
from .dd_bs1 import _trapline_head, qiling_python

RUNS = 3
SORT_LINES = 70_000
QILING_SCRIPT = ("import sys; from qiling import Qiling; from qiling.const import QL_VERBOSE; "
                 "ql = Qiling(sys.argv[1:], '/', verbose=QL_VERBOSE.DISABLED, multithread=True); "
                 "ql.run()")


def _workloads(folder: Path) -> dict[str, list[str]]:
    data = folder / "sort-input.txt"
    rng = random.Random(14)
    data.write_text("".join(f"{rng.randrange(10**9):09d} line\n" for _ in range(SORT_LINES)))
    return {"true": ["/bin/true"], "ls -l /usr/bin": ["/bin/ls", "-l", "/usr/bin"],
            "sort 1 MB": ["/bin/sort", str(data)]}


def _tools(runs: int) -> list[tuple[str, list[str], int]]:
    tools = [("native", [], runs)]
    qemu = shutil.which("qemu-x86_64")
    if qemu:
        tools.append(("QEMU user", [qemu, "-L", "/"], runs))
    tools.append(("trapline", _trapline_head() + ["run", "--"], runs))
    python = qiling_python()
    if python:
        tools.append(("Qiling", [python, "-c", QILING_SCRIPT], 1))
    return tools


def run(runs: int = RUNS) -> list[str]:
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        workloads = _workloads(Path(tmp))
        tools = _tools(runs)
        for name, argv in workloads.items():
            times: dict[str, list[tuple[float, float]]] = {label: [] for label, _, _ in tools}
            failed: dict[str, str] = {}
            for turn in range(runs):
                for label, head, n in tools:
                    if turn < n and label not in failed:
                        try:
                            times[label].append(timed_run(head + argv))
                        except RuntimeError as error:      # a tool that cannot run it is reported
                            failed[label] = str(error).strip().splitlines()[-1][:120]
            median = {label: (statistics.median(w for w, _ in t), statistics.median(c for _, c in t))
                      for label, t in times.items() if label not in failed}
            ours = median["trapline"]
            lines.append(f"{name}: median of {runs} (Qiling: 1 run)")
            lines += [f"  {label:10} failed: {reason}" for label, reason in failed.items()]
            for label, (wall, cpu) in median.items():
                text = f"  {label:10} wall {wall:7.3f} s  cpu {cpu:7.3f} s"
                if label != "trapline":
                    text += f"  {label} / trapline: wall {wall / ours[0]:6.2f}  cpu {cpu / ours[1]:6.2f}"
                lines.append(text)
    return lines


if __name__ == "__main__":
    args = sys.argv[1:]
    options = dict(zip(args[::2], args[1::2]))
    for text in run(int(options.get("--runs", RUNS))):
        print(text, flush=True)

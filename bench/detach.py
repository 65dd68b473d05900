"""What a detach costs (US 7,017,153; instrumenter/tracing/detach.py): the time of
`Session.detach` at a safe point in the middle of fib's recursion, with N probes placed.

The guest is bench/wide_guest.py: fib (probed at entry and return: its uretprobe landings are on
the stack at the detach, deep in the recursion) plus N-2 probes on instruction boundaries of the
cold functions that never run — each a patched site to restore and a trampoline (or, under
`auto`, a jump body where the jump fits) in the pages to unmap. Timed: the detach alone (one safe point: moving the PCs, unwinding and
rewriting the stacks, restoring every patch, unmapping), in process CPU time, best of three; the
program then runs on and must print what it prints unprobed.

`python3 -m bench.detach [--quick]`
"""
import io
import sys
import time

from instrumenter.probes.definitions import Probe
from instrumenter.probes.records import Buffers
from instrumenter.tracing.session import Session
from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig
from trapline.probespec import parse_probe_spec

from .probe_rate import cold_sites
from .wide_guest import build

DETACH_AT = 40_000            # instructions: fib(18) is deep in its recursion there
COUNTS = (2, 100, 1000)


def detach_once(path: str, arch: str, others: list[str], strategy: str) -> tuple[float, object]:
    stdout = CapturedOutput(name=b"pipe:[1]")
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(b""), stdout=stdout, stderr=CapturedOutput(),
                                 report=io.StringIO()))
    proc = kernel.spawn(path.encode(), [b"wide", b"18"], [])
    specs = ["uprobe:wide:fib", "uretprobe:wide:fib", *others]
    session = Session(kernel, [Probe(parse_probe_spec(s), nargs=0) for s in specs],
                      buffers=Buffers(drain=lambda records: None), strategy=strategy)
    session.attach(proc)
    timing = {}

    def detach():
        start = time.process_time()
        timing["report"] = session.detach(at_once=True)
        timing["seconds"] = time.process_time() - start
    kernel.debug.at_instruction(DETACH_AT, detach)
    kernel.run(proc)
    if not stdout.data.startswith(b"fib(18) = 2584"):
        raise RuntimeError(f"the detached run printed {stdout.data!r}")
    return timing["seconds"], timing["report"]


def run(quick: bool = False) -> list[str]:
    lines = ["| arch | strategy | probes | detach (ms) | sites restored | return addresses rewritten |",
             "|---|---|---|---|---|---|"]
    for arch in ("i386", "x86_64"):
        path = str(build(arch))
        cold = cold_sites(path, arch, max(COUNTS))
        for strategy in ("trampoline", "auto"):
            for count in COUNTS[:2] if quick else COUNTS:
                others = cold[:count - 2]
                best, report = min((detach_once(path, arch, others, strategy) for _ in range(3)),
                                   key=lambda pair: pair[0])
                lines.append(f"| {arch} | {strategy} | {count} | {best * 1e3:.1f} | "
                             f"{len(report.restored)} | {len(report.rewritten)} |")
    return lines


if __name__ == "__main__":
    print("\n".join(run(quick="--quick" in sys.argv)))

"""Hits per second of a probe inside fib (fib+1, the instruction after `push rbp`/`push ebp`)
under the relocate strategy beside the trampoline and jump strategies, Python action and
native count (US 6,957,421 relocation vs US 9,336,001 trampolines).

What a relocate hit costs: fib's recursive calls stay in the copy (retargeted there), but each
call made in the copy is recorded by a call-out int3 and each return comes back through the
int3 at the original return address (US 6,898,785's original-space return pointer), and a
Python action is one more call-out int3: about three traps per call of fib where the
trampoline needs one. The rate is hits / (CPU time with the probe − without it), best of three,
on the x86-64 and i386 fib samples.
"""
import sys
import time

from trapline import Sandbox

from .common import SAMPLES, best_of

N = 16
ROWS = (("trampoline", None), ("jump", None), ("relocate", None),
        ("trampoline", "count"), ("jump", "count"), ("relocate", "count"))


def _seconds(arch: str, strategy: str, native, probed: bool) -> tuple[float, int]:
    from instrumenter.probes.definitions import Probe
    from trapline.probespec import parse_probe_spec
    probes = [Probe(parse_probe_spec("uprobe:fib:fib+1"), native=native)] if probed else []
    result = {}

    def run():
        result["r"] = Sandbox(probes=probes, strategy=strategy).run([str(SAMPLES / arch / "fib"),
                                                                   str(N)])
    seconds, _ = best_of(run, 3, clock=time.process_time)
    return seconds, sum(result["r"].hits.values()) if probed else 0


def rates(arch: str) -> dict[tuple[str, str], float]:
    bare, _ = _seconds(arch, "trampoline", None, False)
    out = {}
    for strategy, native in ROWS:
        seconds, hits = _seconds(arch, strategy, native, True)
        out[(strategy, native or "python")] = hits / max(seconds - bare, 1e-9)
    return out


def main() -> None:
    for arch in ("x86_64", "i386"):
        table = rates(arch)
        for kind in ("python", "count"):
            base = table[("trampoline", kind)]
            for strategy in ("trampoline", "jump", "relocate"):
                rate = table[(strategy, kind)]
                print(f"{arch:7} {kind:7} {strategy:10} {rate / 1000:9.1f} k hits/s  "
                      f"x{rate / base:5.2f} of trampoline")
    sys.stdout.flush()


if __name__ == "__main__":
    main()

"""Probe hits per second on a hot function (fib), trampoline strategy with a Python action,
with 1 probe and with many probes installed elsewhere; and, for comparison in the same run, a
plain Unicorn code hook on the same address calling the same Python function, alone and with
1000 other code hooks installed.

Rate = hits / (probed wall time − unprobed wall time): the cost of the probes alone.
Goals (issue 4): ≥ 500 k hits/s through int3, flat within 10 % from 1 to 10 000 probes.

Jump strategy with the native count (no trap, no Python per hit): the probe on fib is the
only difference between the two timed runs — both have the same other probes installed — and
only the guest's run is timed, so placing 10 000 probes is not charged to fib's hits.
Goal: ≥ 3 M hits/s. The native hits cost a few ms in all; with thousands of other probes, the
int3 hits those take in printf and the start-up code vary by about as much between runs, so
the line also prints the difference itself (it can come out at or below zero).
"""
from unicorn import UC_HOOK_CODE

from instrumenter.decode import boundaries, decode
from instrumenter.errors import InstrumenterError
from instrumenter.policy import InsnClass, classify
from loader.elf import load_elf_file
from trapline import Sandbox

from .common import SAMPLES, best_of
from .fib_speed import bare_fib

N = 20
CALLS = 2 * 10946 - 1          # fib(20) calls fib 2·F(21)−1 times


def _noop(ctx):
    pass


def _other_sites(arch: str, count: int) -> list[str]:
    """Probe specs on instruction boundaries of every function except fib (never hit much)."""
    image = load_elf_file(str(SAMPLES / arch / "fib"))
    specs = []
    for fn in image.symbols.functions():
        if fn.name in ("fib", "main", "_start", "_start_c") or fn.size < 2:
            continue
        seg = next((s for s in image.segments if s.vaddr <= fn.addr < s.vaddr + len(s.data)), None)
        if seg is None:
            continue
        code = seg.data[fn.addr - seg.vaddr: fn.addr - seg.vaddr + fn.size]
        try:
            starts = boundaries(code, fn.addr, arch)
        except InstrumenterError:
            continue
        for a in starts:
            insn = decode(code[a - fn.addr:], a, arch)
            if classify(insn).cls is not InsnClass.REFUSED:
                specs.append(f"uprobe:fib:{a:#x}")
        if len(specs) >= count:
            break
    return specs[:count]


def _trapline(arch: str, specs) -> float:
    from instrumenter.probes import Probe
    from trapline.probespec import parse_probe_spec
    probes = [Probe(parse_probe_spec(s), action=_noop, nargs=0) for s in specs]
    t, result = best_of(lambda: Sandbox(probes=probes).run([str(SAMPLES / arch / "fib"), str(N)]))
    return t


def _fib_native_count(arch: str, others: list[str], *, with_fib: bool) -> float:
    """Seconds the guest ran (placement excluded: see _RunTimer) for fib(N) with `others`
    installed, and the native-count jump probe on fib when `with_fib`."""
    from instrumenter.probes import Probe
    from trapline.probespec import parse_probe_spec

    def run_once():
        probes = [Probe(parse_probe_spec(s), action=_noop, nargs=0) for s in others]
        if with_fib:
            probes.append(Probe(parse_probe_spec("uprobe:fib:fib"), native="count"))
        with _RunTimer() as timer:
            result = Sandbox(probes=probes, strategy="auto").run([str(SAMPLES / arch / "fib"), str(N)])
        if with_fib and result.hits["uprobe:fib:fib"] != CALLS:
            raise AssertionError(f"native count saw {result.hits['uprobe:fib:fib']} calls, not {CALLS}")
        return timer.elapsed

    return min(run_once() for _ in range(5 if others else 9))


class _RunTimer:
    """Times Kernel.run only: placing 10 000 probes takes seconds, which would drown the
    milliseconds the hits cost in a whole-run difference."""

    def __enter__(self):
        import time

        import trapline.sandbox as sandbox
        self.sandbox, self.original, self.elapsed = sandbox, sandbox.Kernel, 0.0
        timer = self

        class TimedKernel(self.original):
            def run(self, proc):
                t0 = time.perf_counter()
                try:
                    return super().run(proc)
                finally:
                    timer.elapsed += time.perf_counter() - t0

        sandbox.Kernel = TimedKernel
        return self

    def __exit__(self, *exc):
        self.sandbox.Kernel = self.original


def _unicorn_hook(arch: str, others: int) -> float:
    """Seconds for fib(N) in a bare Uc with a code hook on fib's entry calling _noop, plus
    `others` hooks on other addresses that are never executed."""
    plain = bare_fib(arch, N)
    plain()                                      # translate once
    base, _ = best_of(plain, 5)
    run = bare_fib(arch, N)
    uc, fib = run.uc, run.fib
    uc.hook_add(UC_HOOK_CODE, lambda u, a, s, d: _noop(None), None, fib, fib)
    for i in range(others):
        target = 0x7000_0000 + 16 * i          # the stack mapping: never executed
        uc.hook_add(UC_HOOK_CODE, lambda u, a, s, d: None, None, target, target)
    run()
    t, _ = best_of(run, 5)
    return t - base


def run() -> list[str]:
    lines = []
    for arch in ("i386", "x86_64"):
        base = _trapline(arch, [])
        for extra in (0, 1000, 10000):
            specs = ["uprobe:fib:fib"] + _other_sites(arch, extra)
            t = _trapline(arch, specs) - base
            lines.append(f"{arch:6} uprobe+Python action, {len(specs):5d} probes installed: "
                         f"{CALLS / t / 1e3:7.1f} k hits/s (goal >= 500)")
        for extra in (0, 1000, 10000):
            others = _other_sites(arch, extra)
            t = (_fib_native_count(arch, others, with_fib=True)
                 - _fib_native_count(arch, others, with_fib=False))
            rate = f"{CALLS / t / 1e6:7.2f} M hits/s" if t > 0 else "  below the noise"
            lines.append(f"{arch:6} jump+native count, {len(others) + 1:5d} probes installed:   "
                         f"{rate} ({t * 1e3:+.1f} ms for {CALLS} hits; goal >= 3 M/s)")
        for others in (0, 1000):
            t = _unicorn_hook(arch, others)
            lines.append(f"{arch:6} plain Unicorn code hook, {others:4d} other hooks:      "
                         f"{CALLS / t / 1e3:7.1f} k hits/s")
    return lines

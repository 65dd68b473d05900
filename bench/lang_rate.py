"""The probe language's hit rates (issue 34), side by side, in CPU seconds of this process:
  count      `uprobe:wide:fib { @ = count(); }`, the guest-compiled path (trapline/lang/native.py:
             the jump strategy's native count), with 1, 10, 100 and 1000 probes (the others
             count on cold functions never called);
  keyed      `uprobe:wide:fib { @[arg0] = count(); } uprobe:wide:fib { @s[arg0] = sum(arg0); }`,
             the keyed aggregation computed in a guest hash table (trapline/lang/native_table.py,
             instrumenter/strategies/native_table.py: a hash, a probe, two locked updates), with
             1, 10, 100 and 1000 probes as count;
  predicate  `uprobe:wide:fib /arg0 > 1000000/ { @ = count(); }`, a predicate that rejects every
             hit, compiled into the guest in front of the count (trapline/lang/guards.py,
             instrumenter/strategies/native_guard.py: a compare and a jump per hit), beside
             `/arg0 + 0 > 1000000/`, which no guard decides (arithmetic on an argument): its
             argument words are stored in the guest and the predicate runs in Python on each;
  printf     `uprobe:wide:fib { printf("%d\\n", arg0); }` to /dev/null, captured in the guest
             (trapline/lang/native_printf.py: the argument words stored, the lines formatted a
             batch at a time), beside the Python path, `printf("%d\\n", arg0 + 0)` (arithmetic:
             not captured), and the Python path's floor: `{ if (0) { } }`, a block that stays on the Python path and does
             nothing, i.e. what every Python-path hit costs before its action runs (the jump's
             int3 part, the kernel's breakpoint redirect, the tracer's entry hook and record,
             the probe context, the language's Hit and dispatch); the Python path's printf costs
             the difference. The floor is above the goal's 3.3 us a hit (300 k/s) by itself; the
             tracer alone (bench/probe_rate.py's Python probe, a no-op action on the jump
             strategy, no language) is shown beside it: most of the floor is the tracer's.
The rate is hits / (run with the program - run of the same guest without the fib probe, the
other probes placed), best of three: the cost of the hits alone, as probe_rate.py measures. Goals: count >= 10 M hits/s flat from
1 to 1000 probes (keyed: the same shape, no goal of its own); predicate >= 5 M/s; printf >= 300 k events/s.
`python3 -m bench.lang_rate [--arch=i386] [--keyed]` (--keyed: the keyed lines alone).
"""
import io
import os
import sys
import time

from trapline import Sandbox
from trapline.lang.runner import make_consumers, run as run_consumers

from .common import best_of
from .probe_rate import _guest_seconds, _python_probe, calls, cold_sites
from .wide_guest import build

N_NATIVE, N_PYTHON = 27, 20
N_KEYED = 30          # 2.7 M calls: the keyed hits cost ~0.3 s, well above the 1000-probe runs' noise


def _cpu(fn):
    return best_of(fn, repeat=3, clock=time.process_time)[0]


def _baseline(binary: str, n: int) -> float:
    return _cpu(lambda: Sandbox(capture=True).run([binary, str(n)]))


def _program_time(program: str, binary: str, n: int, out) -> float:
    from trapline.tracing import batch_for

    def once():
        consumers = make_consumers([(program, "-e")], out, lambda line: None, batch=batch_for(out))
        run_consumers(consumers, [binary, str(n)], {"capture": True}, strategy="jump")
        return consumers
    return _cpu(once)


def _cold_probes(binary: str, count: int) -> str:
    from loader.elf import load_elf_file
    names = sorted(f.name for f in load_elf_file(binary).symbols.functions() if f.name.startswith("cold_"))
    return " ".join(f"uprobe:{binary}:{name} {{ @c{i} = count(); }}" for i, name in enumerate(names[:count]))


NOISE = 0.02          # CPU seconds: two runs of the same guest differ by about this much


def _rate(hits: int, spent: float) -> str:
    """M hits/s; a cost below the runs' noise gives the bound it proves, not a quotient."""
    if spent < NOISE:
        return f"> {hits / NOISE / 1e6:5.1f} M hits/s (the hits cost less than the runs' noise)"
    return f"{hits / spent / 1e6:7.2f} M hits/s"


def _tracer_alone(binary: str, arch: str) -> float:
    """CPU seconds fib's hits cost a Python probe whose action does nothing (probe_rate.py),
    best of three (one cold probe in both runs, so both have a tracing session)."""
    others = cold_sites(binary, arch, 1)
    probed = min(_guest_seconds(binary, N_PYTHON, others, _python_probe, "jump") for _ in range(3))
    plain = min(_guest_seconds(binary, N_PYTHON, others, None, "jump") for _ in range(3))
    return probed - plain


def keyed_rates(binary: str, arch: str) -> list[str]:
    lines = []
    for probes in (1, 10, 100, 1000):
        cold = _cold_probes(binary, probes - 1)
        base = _program_time(cold, binary, N_KEYED, io.StringIO()) if cold else _baseline(binary, N_KEYED)
        program = (f"uprobe:{binary}:fib {{ @[arg0] = count(); }} "
                   f"uprobe:{binary}:fib {{ @s[arg0] = sum(arg0); }} " + cold)
        spent = _program_time(program, binary, N_KEYED, io.StringIO()) - base
        lines.append(f"{arch} keyed count+sum, {probes:>4} probes: {_rate(calls(N_KEYED), spent)}")
    return lines


def rates(arch: str) -> list[str]:
    binary = str(build(arch))
    lines = []
    for probes in (1, 10, 100, 1000):
        cold = _cold_probes(binary, probes - 1)
        base = _program_time(cold, binary, N_NATIVE, io.StringIO()) if cold else _baseline(binary, N_NATIVE)
        program = f"uprobe:{binary}:fib {{ @ = count(); }} " + cold
        spent = _program_time(program, binary, N_NATIVE, io.StringIO()) - base
        lines.append(f"{arch} count, {probes:>4} probes: {_rate(calls(N_NATIVE), spent)}")
    lines += keyed_rates(binary, arch)
    reject = f"uprobe:{binary}:fib /arg0 > 1000000/ {{ @ = count(); }}"
    spent = _program_time(reject, binary, N_NATIVE, io.StringIO()) - _baseline(binary, N_NATIVE)
    lines.append(f"{arch} predicate rejecting (in the guest): {_rate(calls(N_NATIVE), spent)}")
    base = _baseline(binary, N_PYTHON)
    stored = f"uprobe:{binary}:fib /arg0 + 0 > 1000000/ {{ @ = count(); }}"
    spent = _program_time(stored, binary, N_PYTHON, io.StringIO()) - base
    lines.append(f"{arch} predicate rejecting (stored, in Python): {calls(N_PYTHON) / spent / 1e6:7.2f} M hits/s")
    with open(os.devnull, "w") as null:
        captured = _program_time(f'uprobe:{binary}:fib {{ printf("%d\\n", arg0); }}', binary,
                                 N_PYTHON, null) - base
        spent = _program_time(f'uprobe:{binary}:fib {{ printf("%d\\n", arg0 + 0); }}', binary,
                              N_PYTHON, null) - base
        floor = _program_time(f"uprobe:{binary}:fib {{ if (0) {{ }} }}", binary, N_PYTHON, null) - base
    hits = calls(N_PYTHON)
    lines.append(f"{arch} printf (captured in the guest): {hits / captured / 1e3:7.0f} k events/s "
                 f"({captured / hits * 1e6:.2f} us a hit)")
    lines.append(f"{arch} printf (Python path): {hits / spent / 1e3:7.0f} k events/s "
                 f"({spent / hits * 1e6:.2f} us a hit)")
    lines.append(f"{arch} Python path floor (a block doing nothing): {hits / floor / 1e3:7.0f} k hits/s "
                 f"({floor / hits * 1e6:.2f} us a hit; printf's own {(spent - floor) / hits * 1e6:.2f} us)")
    tracer = _tracer_alone(binary, arch)
    lines.append(f"{arch} the tracer alone (no-op Python action, jump): {hits / tracer / 1e3:7.0f} k hits/s "
                 f"({tracer / hits * 1e6:.2f} us a hit)")
    return lines


def run() -> list[str]:
    return rates("x86_64") + rates("i386")


if __name__ == "__main__":
    arch = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--arch=")), None)
    if "--keyed" in sys.argv:
        for name in ([arch] if arch else ["x86_64", "i386"]):
            for line in keyed_rates(str(build(name)), name):
                print(line, flush=True)
        sys.exit(0)
    for line in (rates(arch) if arch else run()):
        print(line, flush=True)

"""What `trapline trace` costs, side by side with `trapline run` (issue 31).

1. Code no probe touches: `trace -o /dev/null -p syscall:write -- fib 34` (fib prints with
   writev: the probe never fires), the fileio sample and a syscall-heavy program (busybox
   `dd bs=1 count=50000`: 100 000 system calls, when the Debian binaries are fetched) against `run` of the same program,
   as whole processes in turns (A B A B ...), the CPU time's median ratio. Goal: <= 1.15.
   The floor under it: the same `run` with an empty C block hook (emu/native/block_clock.c
   block_clock_none: Unicorn's helper call before every block and nothing else) against `run`,
   in one script so start-up is the same on both sides. `ts` is an exact instruction count,
   and Unicorn 2.1 gives a count only through a hook (per instruction: icount.py; per block:
   block_clock.py), so this is what trace cannot go under while it keeps `ts` exact. Then
   the exact clock itself with no tool (the door's count_instructions: the block clock's
   hook, which looks each block up in its table of counts) against the same `run`: what is
   left between it and trace/run is trace's own. Measured with cachegrind (x86-64, the
   instructions of fib 27 minus those of fib 22, so start-up cancels, 2026-11-29): `run`
   164.8 M, the empty hook 177.5 M, trace 230.5 M, of which the clock hook's body 54.7 M
   (~24 host instructions a block: the look-up in its table of recent blocks, the add, the
   deadline's test) and everything else of trace within 0.9 M of the empty hook. The same
   measure later that day, main -> the hook's body in 18 instructions (block_clock.c: one
   unsigned compare for the deadline, no argument moved for the slow path, the recent
   entries first in its struct): `run` 165.1 -> 165.0 M, trace 232.1 -> 213.7 M (trace/run
   by instructions 1.41 -> 1.30); a plain run also no longer makes the door's tracing
   facility (holds_stopped): 33 M instructions fewer for a whole `run` of fib 22 or 27.
2. Records: `trace --format jsonl|text -o /dev/null -p uprobe:fib:fib -- fib 27` (635 621 hits:
   fib(n) calls fib 2·F(n+1) − 1 times; until 2026-11-29 the rates were divided by F(28),
   317 811, half the hits, and so were half the real rates)
   against the same run probing a function fib never calls (`main`: one hit), per strategy:
   (hits) / (extra CPU seconds) = records a second. Goal: >= 300 k/s through int3/trampoline.
   Then jump with `--native args:6`: the records kept in the guest (six words a hit, no trap)
   and drained in batches, jsonl. Goal: >= 1 M/s. (Native records carry the ts of their
   collection: the guest code has no clock.) Last, the floor under every record rate: the
   lines a second the row formatters make alone, without a run, and those a native slot's
   block makes (trapline/native_lines.py: jump's args:N records reach the sink as blocks).

`python3 -m bench.trace_cost [--runs N] [--quick]`: --quick skips fib 34 (fib 30 instead).
"""
import statistics
import sys

from .common import ROOT, SAMPLES, timed_run



def fib_calls(n: int) -> int:
    """Hits of a probe on fib's entry in `fib n`: fib(n) calls fib 2·F(n+1) − 1 times."""
    a, b = 0, 1
    for _ in range(n + 1):
        a, b = b, a + b
    return 2 * a - 1


FIB27_HITS = fib_calls(27)


def _trapline(*args: str) -> list[str]:
    return [sys.executable, "-m", "trapline", *args]


def _paired_cpu(a: list[str], b: list[str], runs: int) -> tuple[float, float, float]:
    """Medians of A's and B's CPU seconds and of the ratio A/B pair by pair, run in turns."""
    ta, tb, ratios = [], [], []
    timed_run(a)
    timed_run(b)                                           # warm-up: bytecode, native hooks
    for _ in range(runs):
        ca = timed_run(a)[1]
        cb = timed_run(b)[1]
        ta.append(ca)
        tb.append(cb)
        ratios.append(ca / cb)
    return statistics.median(ta), statistics.median(tb), statistics.median(ratios)


def _floor_argv(argv: list[str], hooked: bool | str) -> list[str]:
    kind = hooked if isinstance(hooked, str) else "hooked" if hooked else "bare"
    return [sys.executable, "-m", "bench.trace_cost", "--floor-run", kind, "--", *argv]


def _floor_run(hooked: bool | str, argv: list[str]) -> int:
    """Run `argv` as `trapline run` does (output passed through), with the empty block hook on
    the program's Machine when `hooked`, with the exact clock counting it when `hooked` is
    "clock" (the door's count_instructions, as trace asks it, and no tool). A benchmark's
    probe of the emulator's own floor: the empty hook reaches the Machine directly, not
    through the door, since no tool would install a hook that does nothing."""
    from trapline.sandbox import Sandbox
    if hooked == "clock":
        return Sandbox(capture=False, tools=[lambda kernel, process:
                                             kernel.debug.count_instructions(process)]).run(argv).exit_code

    def empty_hook(_kernel, process) -> None:
        import ctypes

        from unicorn import UC_HOOK_BLOCK

        from emu import native
        from emu.internals.binding import handle, uc_hook_h, uclib
        uc = process.space.machine.uc
        hook = uc_hook_h()
        uclib.uc_hook_add(handle(uc), ctypes.byref(hook), UC_HOOK_BLOCK,
                          ctypes.cast(native.load("block_clock").block_clock_none, ctypes.c_void_p),
                          None, ctypes.c_uint64(1), ctypes.c_uint64(0))
        uc.ctl_flush_tb()
    return Sandbox(capture=False, tools=[empty_hook] if hooked else []).run(argv).exit_code


def floor(runs: int, n: int) -> list[str]:
    lines = []
    for arch in ("x86_64", "i386"):
        argv = [str(SAMPLES / arch / "fib"), str(n)]
        ta, tb, ratio = _paired_cpu(_floor_argv(argv, True), _floor_argv(argv, False), runs)
        lines.append(f"{'fib ' + arch:<12} empty block hook {ta:6.3f} s  none {tb:6.3f} s  "
                     f"{ratio:5.2f}x  (the floor of an exact per-block clock)")
        ta, tb, ratio = _paired_cpu(_floor_argv(argv, "clock"), _floor_argv(argv, False), runs)
        lines.append(f"{'fib ' + arch:<12} the exact clock  {ta:6.3f} s  none {tb:6.3f} s  "
                     f"{ratio:5.2f}x  (the block clock counting, no tool: trace's floor)")
    return lines


def untouched(runs: int, n: int) -> list[str]:
    lines = []
    programs = [("fib", [str(SAMPLES / "x86_64" / "fib"), str(n)], "syscall:write"),
                ("fib i386", [str(SAMPLES / "i386" / "fib"), str(n)], "syscall:write"),
                ("fileio", [str(SAMPLES / "x86_64" / "fileio")], "syscall:rt_sigreturn")]
    busybox = ROOT / "tests" / "e2e" / ".cache" / "debian" / "amd64" / "root" / "bin" / "busybox"
    if busybox.exists():                  # python3 tests/e2e/fetch_debian_bins.py
        programs.append(("dd bs=1", [str(busybox), "dd", "if=/dev/zero", "of=/dev/null", "bs=1",
                                     "count=50000"], "syscall:rt_sigreturn"))
    for name, argv, probe in programs:
        ta, tb, ratio = _paired_cpu(_trapline("trace", "-o", "/dev/null", "-p", probe, "--", *argv),
                                    _trapline("run", "--", *argv), runs)
        lines.append(f"{name:<12} trace {ta:6.3f} s  run {tb:6.3f} s  trace/run {ratio:5.2f}x"
                     f"  (goal <= 1.15)")
    return lines


def record_rate(runs: int) -> list[str]:
    lines = []
    fib = str(SAMPLES / "x86_64" / "fib")
    for strategy in ("trampoline", "jump"):
        for fmt in ("jsonl", "text"):
            hot = _trapline("trace", "--format", fmt, "-o", "/dev/null", "--strategy", strategy,
                            "-p", f"uprobe:{fib}:fib", "--", fib, "27")
            cold = _trapline("trace", "--format", fmt, "-o", "/dev/null", "--strategy", strategy,
                             "-p", f"uprobe:{fib}:main", "--", fib, "27")
            ta, tb, _ = _paired_cpu(hot, cold, runs)
            rate = FIB27_HITS / max(ta - tb, 1e-9)
            lines.append(f"{strategy:<10} {fmt:<5} hot {ta:6.3f} s  cold {tb:6.3f} s  "
                         f"{rate / 1000:7.0f} k records/s  (goal >= 300 k/s)")
    hot, cold = ([*_trapline("trace", "--format", "jsonl", "-o", "/dev/null", "--strategy", "jump",
                             "--native", "args:6", "-p", f"uprobe:{fib}:{func}", "--", fib, "27")]
                 for func in ("fib", "main"))
    ta, tb, _ = _paired_cpu(hot, cold, runs)
    rate = FIB27_HITS / max(ta - tb, 1e-9)
    lines.append(f"{'jump args:6':<10} jsonl hot {ta:6.3f} s  cold {tb:6.3f} s  "
                 f"{rate / 1000:7.0f} k records/s  (records in the guest; goal >= 1000 k/s)")
    return lines


def format_floor(runs: int) -> list[str]:
    """Lines a second that the row formatters alone make (trapline/tracing.py jsonl_lines,
    text_lines) from rows like fib's (six argument words, a ts of 8 digits), best of `runs`:
    the floor under any record rate, in the guest or not, since every record becomes a line
    in Python."""
    import time

    from trapline.tracing import PLAIN_ROW_FORMATTERS, ROW_FORMATTERS
    probe = f"uprobe:{SAMPLES / 'x86_64' / 'fib'}:fib"
    rows = [(12_345_678 + 37 * i, 100, 100, probe, 0x401000, (i % 28, 140737488347000 + i,
             140737488347016, 0, 0, 4198400), None, "entry", "fib") for i in range(100_000)]
    lines = []
    # "jsonl" and "text" ask each row its kind and types; "plain" is what a batch of entry
    # hits alone takes (StreamSink.put_plain_row)
    formatters = [*ROW_FORMATTERS.items(),
                  *((f"{fmt} plain", lines_of) for fmt, lines_of in PLAIN_ROW_FORMATTERS.items())]
    for fmt, lines_of in formatters:
        best = float("inf")
        for _ in range(runs):
            t0 = time.process_time()
            lines_of(rows)
            best = min(best, time.process_time() - t0)
        lines.append(f"{'format':<10} {fmt:<11} {len(rows) / best / 1000:7.0f} k lines/s "
                     "(the rows' lines alone, no run: the floor under every record rate)")
    return lines + _block_floor(runs, probe)


def _block_floor(runs: int, probe: str) -> list[str]:
    """Lines a second that a native slot's block makes (trapline/native_lines.py: the records
    of one collection, one %-format), 4096 records of six words as fib's: the floor under the
    rate through jump's args:N since records come as blocks."""
    import time

    from trapline.native_lines import BLOCK_FORMATTERS
    count = 4096
    words = tuple(v for i in range(count) for v in (i % 28, 140737488347000 + i, 140737488347016, 0, 0, 4198400))
    lines = []
    for fmt, block_of in BLOCK_FORMATTERS.items():
        best = float("inf")
        for _ in range(max(runs, 5)):
            t0 = time.process_time()
            block_of(12_345_678, 100, 0, probe, 0x401000, "fib", words, count)
            best = min(best, time.process_time() - t0)
        lines.append(f"{'block':<10} {fmt:<5} {count / best / 1000:7.0f} k lines/s "
                     "(a native slot's records as one block, no run: the floor under jump's args:N)")
    return lines


def run(runs: int = 3, quick: bool = False) -> list[str]:
    n = 30 if quick else 34
    return untouched(runs, n) + floor(runs, n) + record_rate(runs) + format_floor(runs)


if __name__ == "__main__":
    arguments = sys.argv[1:]
    if arguments[:1] == ["--floor-run"]:
        kind = arguments[1]
        sys.exit(_floor_run(kind if kind == "clock" else kind == "hooked", arguments[3:]))
    count = next((int(a.split("=", 1)[1]) for a in arguments if a.startswith("--runs=")), 3)
    for line in run(count, "--quick" in arguments):
        print(line)

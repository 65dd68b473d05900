"""Run every benchmark side by side and print the figures (python3 bench/run.py)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import (check_rate, compute, dd_bs1, debug_continue, dynamic, experiments, fib_speed,  # noqa: E402
                   fork_exec, i386_arith, probe_rate, profile, quantum, startup, syscall_overhead,
                   syscall_replay, trace_cost, walkup)


def main() -> None:
    for module in (startup, fib_speed, syscall_overhead, syscall_replay, dd_bs1, dynamic, fork_exec,
                   i386_arith, probe_rate, profile, debug_continue, trace_cost, walkup, check_rate,
                   experiments, compute, quantum):
        print(f"== {module.__name__.split('.')[-1]}: {module.__doc__.strip().splitlines()[0]}")
        for line in module.run():
            print("  " + line, flush=True)


if __name__ == "__main__":
    main()

"""The area map's cost for many areas: LTP munmap04's loop (3-page PROT_NONE areas a gap
apart, MAP_FIXED_NOREPLACE) on one AreaMap, the Machine's memory stubbed out so that only
kernel_model/memory/vm.py is measured, then one address-chosen mmap per 1000 areas
(find_free's walk). Prints the CPU time.

Measured 2026-11-29 (2 shared cores, nice 10), 60 000 areas: 219 s CPU before the bisected
area list, 0.43 s after. With Unicorn's memory mapped too (space.Space), 1 500 areas take
6-7 s either way: Unicorn's mem_map_ptr then costs 4-10 ms a call and grows with the number
of regions, so munmap04's 65 530 areas stay long under trapline.

`python3 -m bench.area_map [--areas N]`
"""
import argparse
import time

from kernel_model.errno import GuestErrno
from kernel_model.memory.layout import LAYOUTS, PAGE
from kernel_model.memory.vm import MAP_ANONYMOUS, MAP_FIXED_NOREPLACE, MAP_PRIVATE, AreaMap


class _NoMemory:
    """The Machine's memory calls, doing nothing."""

    def map(self, *_):
        pass

    unmap = protect = map


class _NoMachine:
    mem = _NoMemory()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--areas", type=int, default=60_000)
    args = parser.parse_args()
    vm = AreaMap(_NoMachine(), LAYOUTS["x86_64"])
    start = time.process_time()
    made = 0
    for i in range(args.areas):
        try:
            vm.mmap(0x1000_0000 + i * 6 * PAGE, 3 * PAGE, 0,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE)
        except GuestErrno as e:
            print(f"refused after {made} areas: {e}")
            break
        made += 1
    mapped = time.process_time()
    for _ in range(0, made, 1000):
        try:
            vm.mmap(0, PAGE, 0, MAP_PRIVATE | MAP_ANONYMOUS)
        except GuestErrno:
            break                     # at vm.max_map_count
    print(f"{made} areas: {mapped - start:.2f} s CPU; then {time.process_time() - mapped:.3f} s "
          f"for the address-chosen mmaps; {len(vm.vmas)} areas")


if __name__ == "__main__":
    main()

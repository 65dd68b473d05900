"""The area map's cost for many areas: LTP munmap04's loop (3-page PROT_NONE areas a gap
apart, MAP_FIXED_NOREPLACE) on one AreaMap, the Machine's memory stubbed out so that only
kernel_model/memory/vm.py is measured, then one address-chosen mmap per 1000 areas
(find_free's walk). Prints the CPU time.

Measured 2026-11-29 (2 shared cores, nice 10), 60 000 areas: 219 s CPU before the bisected
area list, 0.43 s after. With Unicorn's memory mapped too (space.Space), 1 500 areas take
6-7 s either way: Unicorn's mem_map_ptr then costs 4-10 ms a call and grows with the number
of regions, so munmap04's 65 530 areas stay long under trapline.

With --machine the areas are mapped on a real Machine (emu/machine.py): since never-touched
PROT_NONE areas get no pages (kernel_model/memory/vm.py map_area), Unicorn holds none of them.
Measured 2026-11-29 (load 7): 1 500 areas 0.62 s CPU before, 0.01 s after; 6 000 areas 30 s
before (the cost grows with the square of the count), 60 000 areas 0.43 s (x86-64) and 0.50 s
(i386) after. LTP munmap04 then passes in 18 s a run on each arch.

`python3 -m bench.area_map [--areas N] [--machine [--arch i386|x86_64]]`
"""
import argparse
import time

from emu.machine import Machine
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
    parser.add_argument("--machine", action="store_true", help="on a real Machine's memory")
    parser.add_argument("--arch", default="x86_64", choices=sorted(LAYOUTS))
    args = parser.parse_args()
    machine = Machine(args.arch) if args.machine else _NoMachine()
    vm = AreaMap(machine, LAYOUTS[args.arch])
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

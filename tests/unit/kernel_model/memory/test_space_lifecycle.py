"""Address spaces end (issue 12): a zombie keeps its status, not its memory; exec drops the old
image once the new one is committed; the debug interface says `space_released` first; released
Machines go to the pool (kernel_model/memory/space_pool.py) and come back for a matching exec or fork,
where the guest cannot tell them from new ones."""
import io
from pathlib import Path

import pytest

from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig
from kernel_model.memory.space import Space
from kernel_model.memory.space_pool import SpacePool

ROOT = Path(__file__).resolve().parents[4]


class Released:
    def __init__(self):
        self.spaces = []

    def space_released(self, space):
        # the last moment the memory can be read: the Machine is still there
        assert space.machine is not None and not space.released
        self.spaces.append(space)


def _run(arch, sample, args=(), pool=4):
    stdout = CapturedOutput()
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(), stdout=stdout, stderr=CapturedOutput(),
                                 report=io.StringIO(), space_pool=pool))
    path = str(ROOT / "samples" / "bin" / arch / sample).encode()
    proc = kernel.spawn(path, [path, *[a.encode() for a in args]], [])
    released = Released()
    kernel.debug.subscribe(released)
    status = kernel.run(proc)
    return kernel, proc, status, stdout.data, released.spaces


@pytest.mark.parametrize("pool", [0, 4])
def test_every_space_of_a_fork_tree_is_released_once_and_zombies_keep_their_status(arch, pool):
    kernel, proc, status, stdout, released = _run(arch, "spawn_tree", pool=pool)
    assert status == 0
    assert len(released) == len({s.serial for s in released}) >= 6     # 1 + 5 forks
    assert all(s.released and s.machine is None or s.machine.closed for s in released)
    assert proc.exit_status == 0 and proc.space.released and proc.space.vm.vmas == []


@pytest.mark.parametrize("pool", [0, 4])
def test_exec_drops_the_old_image_and_the_output_does_not_depend_on_the_pool(arch, pool):
    kernel, proc, status, stdout, released = _run(arch, "exec_chain", ["5"], pool=pool)
    _, _, status0, stdout0, _ = _run(arch, "exec_chain", ["5"], pool=0)
    assert status == status0 == 0 and stdout == stdout0
    assert len(released) == 6              # exec_chain 5 .. exec_chain 0: six images
    if pool:
        # the new image is built while the old one still runs: from the second exec on, each
        # takes the Machine the exec before it released
        assert kernel.space_pool.recycled == 4


def test_serials_are_never_reused():
    spaces = [Space("x86_64") for _ in range(3)]
    serials = [s.serial for s in spaces]
    for space in spaces:
        space.release()
    assert len(set(serials + [Space("x86_64").serial])) == 4


def test_the_pool_keeps_text_only_and_is_bounded(arch):
    pool = SpacePool(size=1)
    first, second = _space_with_text(arch), _space_with_text(arch)
    first_machine, second_machine = first.machine, second.machine
    assert pool.keep(first) and first.released and first.machine is None
    assert first_machine.mem.pieces()[0] == (0x400000, 0x401000)      # the text stays mapped
    assert pool.keep(second)
    assert first_machine.closed                                         # evicted: size 1
    assert pool.take(arch, ((0x500000, 0x501000, 5),)) is None          # another layout
    recycled = pool.take(arch, ((0x400000, 0x401000, 5),))
    assert recycled.machine is second_machine and pool.take(arch, ((0x400000, 0x401000, 5),)) is None
    space = Space(arch, recycled=recycled)
    assert [(v.start, v.end) for v in space.vm.vmas] == [(0x400000, 0x401000)]
    assert space.machine.mem.read(0x400000, 4) == b"code"
    assert not space.machine.mem.is_mapped(0x600000)                    # the data is gone
    space.release()
    pool.close()


def _space_with_text(arch):
    space = Space(arch)
    space.vm.map_area(0x400000, 0x1000, 5, name=b"/bin/x", data=b"code")
    space.vm.map_area(0x600000, 0x1000, 3, name=b"/bin/x", data=b"data")
    return space

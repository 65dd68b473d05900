"""A Space with a little user program in it: the kernel tests' guest."""
from dataclasses import dataclass

from kernel_model.memory.space import Space
from kernel_model.memory.vm import PROT_EXEC, PROT_READ, PROT_WRITE
from tests.unit.emu.guest import asm

USER_CODE = 0x0040_0000
USER_STACK = 0x0060_0000          # one RW page; sp starts at its middle
USER_SP = USER_STACK + 0x800


@dataclass
class UserProgram:
    space: Space
    labels: dict[str, int]

    @property
    def machine(self):
        return self.space.machine


def user_program(arch: str, source: str, *, labels: tuple[str, ...] = (), enter: bool = True) -> UserProgram:
    """Map `source` at USER_CODE (r-x) and a stack page, and drop to ring 3 at its start.

    `labels` are names of `name:` labels in the source whose addresses the test needs;
    they are found by assembling the text up to each label.
    """
    space = Space(arch)
    code = asm(source, arch, USER_CODE)
    space.vm.map_area(USER_CODE, 0x1000, PROT_READ | PROT_EXEC, data=code)
    space.vm.map_area(USER_STACK, 0x1000, PROT_READ | PROT_WRITE)
    found = {}
    for name in labels:
        before = source.split(f"{name}:")[0]
        found[name] = USER_CODE + len(asm(before, arch, USER_CODE)) if before.strip(" ;") else USER_CODE
    if enter:
        space.enter_user_mode(USER_CODE, USER_SP, kstack_top=space.kstack_top(0))
    return UserProgram(space, found)

"""A ring-3 Space with the kernel's IDT handlers and a minimal tool session around it: enough
for the emulate and singlestep strategies to place probes and take their traps, without a
whole Kernel (tests/unit/instrumenter/strategies/emulate/test_strategy.py, tests/property/test_emulate_properties.py).
"""
from types import SimpleNamespace

from kernel_model.debug import DebugInterface
from kernel_model.memory.space import Space
from kernel_model.idt_handlers import install_idt_handlers
from kernel_model.memory.vm import PROT_EXEC, PROT_READ, PROT_WRITE
from tests.unit.kernel_model.userland import USER_CODE, USER_SP, USER_STACK


def emulating_space(arch: str, code: bytes):
    """(space, process, session) with `code` at USER_CODE, a stack page, CPL 3 at USER_CODE.

    Exceptions nobody claims are recorded in `session.kernel.exceptions` as (vector, signal,
    ip) instead of becoming signals.
    """
    space = Space(arch)
    space.vm.map_area(USER_CODE, 0x1000, PROT_READ | PROT_EXEC, data=code)
    space.vm.map_area(USER_STACK, 0x1000, PROT_READ | PROT_WRITE)
    space.enter_user_mode(USER_CODE, USER_SP, kstack_top=space.kstack_top(0))
    process = SimpleNamespace(machine=space.machine, space=space, vm=space.vm, image=None,
                              pid=1, threads=[])
    thread = SimpleNamespace(process=process, tid=1, pending_fault=None)
    process.threads.append(thread)
    exceptions = []

    def deliver_exception(frame, signal):
        exceptions.append((frame.vector, signal, frame.ip))
        return False
    kernel = SimpleNamespace(current=thread, int80_handler=lambda frame: False,
                             deliver_exception=deliver_exception, exceptions=exceptions)
    kernel.debug = debug = DebugInterface(kernel)   # the door hands unclaimed exceptions to it
    install_idt_handlers(kernel, space)
    session = SimpleNamespace(debug=debug, kernel=kernel)
    return space, process, session

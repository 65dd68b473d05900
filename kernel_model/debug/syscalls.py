"""System calls at probed sites: the kernel runs the call a patched-over `syscall` or
`int 0x80` would have made. Part of the debug interface (kernel_model/debug/).

A probe on a system-call instruction cannot run the instruction out of line: `syscall` saves
the return RIP in RCX (Intel SDM Vol. 2B, SYSCALL), `int 0x80` pushes it in the trap frame
(SDM Vol. 3A 6.12.1), and a call that must be restarted backs the IP up by the instruction's 2
bytes (Linux -ERESTART*, kernel_model/syscalls/dispatch.py): from an XOL copy the program would
see, and come back to, the copy's address. But this kernel is the one that runs system calls,
so a tool that trapped at such a site (its int3 or LOCK patch) can ask the kernel to take the
very path the instruction would have taken, with the ORIGINAL return address: the thread's
registers, the trap frame, RCX/R11, a restart, a signal on the way back, fork, execve and
sigreturn are all as if the instruction itself had run.

`run_syscall` answers what the tool's trap handler returns (True: the guest goes on at once)
and whether the call finished: a call that blocks comes back to the site when it is restarted
(its IP rewound onto the patch), and a call the kernel takes outside the CPU hook (execve,
fork, exit, sigreturn) reaches the tool's handler again through the same trap, so the tool
sees one execution of the instruction twice and must not count it twice.
"""
from typing import NamedTuple


class SyscallRun(NamedTuple):
    go_on: bool           # what the trap handler returns: the guest goes on at once
    finished: bool        # False: this execution of the instruction reaches the site again


class SyscallAccess:
    ABIS = {"syscall": "x86_64", "int80": "i386"}

    def __init__(self, kernel):
        self._kernel = kernel

    def run_syscall(self, frame, thread, address: int, kind: str) -> SyscallRun:
        """Run the system call of the `kind` instruction ("syscall": x86-64 `syscall`,
        "int80": `int 0x80`, 2 bytes each) at `address` for `thread`, which trapped there on a
        tool's patch (`frame`: its trap frame), as the instruction would have run it."""
        kernel = self._kernel
        machine = thread.process.space.machine
        trapped_at, next_ip = frame.ip, address + 2
        # Where the instruction leaves the IP: a restart rewinds it, a fork child starts there.
        frame.ip = next_ip
        machine.pc = next_ip
        if kind == "syscall":
            # The instruction's own path (kernel.py `_syscall_instruction`: RCX, R11) runs on
            # the live registers; whatever the call set there (sigreturn's IP, flags and
            # stack; a rewind) is what IRET must give back.
            go_on = kernel._syscall_instruction(thread, next_ip, in_hook=kernel.in_hook)
            if thread.process.space.machine is machine:          # not replaced by execve
                frame.ip = machine.pc
                frame.flags = machine.reg(machine.arch.flags)
                if frame.sp is not None:
                    frame.sp = machine.sp
        elif kind == "int80":
            go_on = kernel.int80_handler(frame)       # int 0x80's full path, on this frame
        else:
            raise ValueError(f"no system-call instruction {kind!r}")
        if getattr(thread, "deferred", False):
            # Taken outside the CPU hook: the run loop dispatches this very trap again
            # (kernel.py `_handle_exit`), from where it was raised.
            frame.ip = machine.pc = trapped_at
            return SyscallRun(False, False)
        return SyscallRun(bool(go_on), frame.ip != address)

"""The scratch register kept by the kernel, per thread (uprobes' riprel_pre_xol/post_xol in
arch/x86/kernel/uprobes.c, which keeps it in the task's arch_uprobe_task).

A copy of an x86-64 instruction whose [rip+disp32] operand is out of reach of its XOL slot
addresses the operand through a scratch register instead (instrumenter/insn/riprel.py). When
the instruction also uses the stack pointer, the register cannot be saved on the stack, so the
copy is `int3; <insn through scratch>; int3` (relocate(..., task_scratch=True)): at the first
trap the old value is kept here, for the trapping thread, and the register is loaded with the
operand's absolute address; at the second the value goes back and the thread resumes at the
next original instruction. Only tool state changes between the traps, nothing the program
can see; a signal delivered between them returns to the second trap with the frame's
registers, the handler's own run never seeing the loaded value as the program's.
"""


class TaskScratch:
    def __init__(self, debug):
        self.debug = debug
        self.saved: dict = {}           # (space serial, tid) -> the scratch register's value
        self.copies: dict = {}          # space serial -> [Relocated] installed in it

    def install(self, space, piece) -> None:
        """Register the two traps of the relocated copy `piece` (method "task-scratch")."""
        restore = next(e for e in piece.exits if e.kind == "task-scratch-restore")
        register, target = piece.scratch, piece.insn.rip_target
        key = space.serial

        def load(frame, thread):
            cpu = self.debug.cpu(thread.process)
            self.saved[(key, thread.tid)] = cpu.register(register)
            cpu.set_register(register, target)
            return True                   # on to the copy, the byte after this int3

        def put_back(frame, thread):
            value = self.saved.pop((key, thread.tid))
            self.debug.cpu(thread.process).set_register(register, value)
            frame.ip = restore.target
            return True

        self.debug.register_breakpoint(space, piece.address, load)
        self.debug.register_breakpoint(space, restore.address, put_back)
        self.copies.setdefault(key, []).append(piece)

    def fork(self, parent_space, child_space) -> None:
        """The child's memory holds the copies: their traps are registered in its space too."""
        for piece in self.copies.get(parent_space.serial, ()):
            self.install(child_space, piece)

    def forget(self, space) -> None:
        self.copies.pop(space.serial, None)
        for key in [k for k in self.saved if k[0] == space.serial]:
            del self.saved[key]

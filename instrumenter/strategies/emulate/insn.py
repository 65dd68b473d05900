"""Execute one instruction on a trap frame (US 7,350,196, [0031]-[0045]): the emulate strategy's CPU.

The probed instruction never runs: the trap handler does what it would have done, to the
state the thread will resume with — the IP, SP and flags in the hardware trap frame (IRET
loads them), the other registers live in the Machine, and the user stack in guest memory. The
semantics follow Intel SDM Vol. 2 (PUSH, POP, ENTER, LEAVE, RET, JMP, Jcc, CALL, NOP); the
shapes come from `policy.EMULATE_RULES`, and `emulation_refusal` rejects the few forms of those
shapes this module does not emulate, with the reason.

For a user-mode trap the frame holds SP (the CPU switched stacks, SDM Vol. 3A, 6.12.1), so
moving the user SP is a change of `frame.sp`. The patent's kernel-mode figures 4A-6B, where the
frame itself must be shifted on the live stack, run these same handlers against
instrumenter/strategies/emulate/kernel.py's LiveStackCpu, which moves the frame when it commits.
"""
import functools
import struct

from kernel_model.debug import PROT_READ, PROT_WRITE

from ...insn.decode import Insn, canonical_register
from ...errors import InstrumenterError
from ...insn.policy import EmulateRule, emulate_rule_for

_MASK = {"i386": 0xFFFF_FFFF, "x86_64": 0xFFFF_FFFF_FFFF_FFFF}
_WORD = {"i386": 4, "x86_64": 8}
_FMT = {2: "<H", 4: "<I", 8: "<Q"}
_GPRS = {"i386": frozenset(("eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi")),
         "x86_64": frozenset(("rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi")
                             + tuple(f"r{n}" for n in range(8, 16)))}
CF, PF, ZF, SF, OF = 0x001, 0x004, 0x040, 0x080, 0x800

# Jcc conditions on EFLAGS (SDM Vol. 2A, Jcc, "Description" table).
_CONDITIONS = {
    "jo": lambda f: f & OF, "jno": lambda f: not f & OF,
    "jb": lambda f: f & CF, "jae": lambda f: not f & CF,
    "je": lambda f: f & ZF, "jne": lambda f: not f & ZF,
    "jbe": lambda f: f & (CF | ZF), "ja": lambda f: not f & (CF | ZF),
    "js": lambda f: f & SF, "jns": lambda f: not f & SF,
    "jp": lambda f: f & PF, "jnp": lambda f: not f & PF,
    "jl": lambda f: bool(f & SF) != bool(f & OF), "jge": lambda f: bool(f & SF) == bool(f & OF),
    "jle": lambda f: f & ZF or bool(f & SF) != bool(f & OF),
    "jg": lambda f: not f & ZF and bool(f & SF) == bool(f & OF),
}


class StackFault(Exception):
    """An emulated stack access that the real instruction would have faulted on (#PF)."""

    def __init__(self, address: int, write: bool, unmapped: bool):
        super().__init__(f"{'write' if write else 'read'} at {address:#x}")
        self.address, self.write, self.unmapped = address, write, unmapped


class FrameCpu:
    """The trapped thread as the emulation sees it: ip/sp/flags in the trap frame, the other
    registers in the Machine, memory through the debug interface (checked against the page
    mapper's protections, which a host write would ignore)."""

    def __init__(self, frame, process, debug):
        if frame.sp is None:
            raise InstrumenterError("emulation needs a trap frame with the saved SP "
                                    "(same-privilege frames are not modelled)")
        self.frame, self.process, self.debug = frame, process, debug
        self.cpu = debug.cpu(process)

    def register(self, name: str) -> int:
        return self.frame.sp if name in ("esp", "rsp") else self.cpu.register(name)

    def set_register(self, name: str, value: int) -> None:
        self.cpu.set_register(name, value)

    def _check(self, address: int, size: int, write: bool) -> None:
        need = PROT_WRITE if write else PROT_READ
        for page in {address & ~0xFFF, (address + size - 1) & ~0xFFF}:
            vma = self.cpu.area_at(page)
            if vma is None or not vma.perms & need:
                raise StackFault(address if page <= address else page, write, vma is None)

    def load(self, address: int, size: int) -> int:
        self._check(address, size, False)
        # What the CPU would load: the memory as it is (read_memory would show the original
        # bytes under tool patches, which only a tool's view wants).
        return struct.unpack(_FMT[size], self.debug.read_memory_raw(self.process, address, size))[0]

    def store(self, address: int, size: int, value: int) -> None:
        self._check(address, size, True)
        data = struct.pack(_FMT[size], value & ((1 << 8 * size) - 1))
        self.debug.write_memory(self.process, address, data)


def emulation_refusal(insn: Insn) -> str | None:
    """Why `insn` cannot be emulated on the trap frame, or None when it can."""
    rule = emulate_rule_for(insn)
    if rule is None:
        return f"{insn.mnemonic} {insn.op_str} is not an instruction the emulate strategy takes " \
               "(push/pop of the frame pointer, push reg, push [rip+d], enter, leave, ret, " \
               "jmp/jcc/call rel, nop, syscall, int 0x80)"
    if 0x66 in insn.prefixes and rule.name != "nop":
        return f"{insn}: operand-size prefix (16-bit stack operation) is not emulated"
    if rule.name == "push_rip" and {0x64, 0x65} & set(insn.prefixes):
        return f"{insn}: an FS/GS-relative operand (its segment base) is not emulated"
    reg = insn.operands[0].reg if rule.name == "push_reg" else None
    if reg is not None and canonical_register(reg, insn.arch) not in _GPRS[insn.arch]:
        return f"{insn}: push of segment register {insn.operands[0].reg} is not emulated (its " \
               "store width is model-specific, SDM Vol. 2B PUSH)"
    if rule.name == "enter" and insn.operands[1].imm & 0x1F:
        return f"{insn}: ENTER with a nesting level is not emulated (compilers emit level 0)"
    return None


def compile_emulation(insn: Insn):
    """The emulation of `insn` as a callable(cpu), decided once when the probe is placed (the
    classification costs more than the emulation itself)."""
    rule = emulate_rule_for(insn)
    return functools.partial(_run, _HANDLERS[rule.name], insn, rule)


def _run(handler, insn, rule, cpu):
    return handler(insn, cpu, rule)


def emulate(insn: Insn, cpu: FrameCpu) -> None:
    """Do what `insn` (at its ORIGINAL address) does to `cpu`; raises StackFault."""
    compile_emulation(insn)(cpu)


def _push(cpu, insn, value: int, size: int) -> None:
    sp = (cpu.frame.sp - size) & _MASK[insn.arch]
    cpu.store(sp, size, value)           # a faulting push leaves SP unchanged (SDM: faults restart)
    cpu.frame.sp = sp


def _pop(cpu, insn, size: int) -> int:
    value = cpu.load(cpu.frame.sp, size)
    cpu.frame.sp = (cpu.frame.sp + size) & _MASK[insn.arch]
    return value


def _push_register(insn, cpu, rule: EmulateRule) -> None:
    op = insn.operands[0]
    # `push esp` stores SP as it was BEFORE the push (SDM Vol. 2B, PUSH).
    value = cpu.register(canonical_register(op.reg, insn.arch)) & ((1 << 8 * op.size) - 1)
    _push(cpu, insn, value, op.size)
    cpu.frame.ip = insn.next_address


def _push_rip_memory(insn, cpu, rule: EmulateRule) -> None:
    # PUSH m (SDM Vol. 2B): the load comes first (a faulting load changes nothing), from the
    # address the ORIGINAL instruction computes: next instruction + disp32.
    size = insn.operands[0].size
    value = cpu.load(insn.rip_target, size)
    _push(cpu, insn, value, size)
    cpu.frame.ip = insn.next_address


def _pop_frame_pointer(insn, cpu, rule: EmulateRule) -> None:
    value = _pop(cpu, insn, _WORD[insn.arch])
    cpu.set_register(insn.op_str, value)
    cpu.frame.ip = insn.next_address


def _enter(insn, cpu, rule: EmulateRule) -> None:
    # ENTER size, 0 (SDM Vol. 2A, ENTER): push bp; bp = sp; sp -= size.
    word, bp = _WORD[insn.arch], "ebp" if insn.arch == "i386" else "rbp"
    _push(cpu, insn, cpu.register(bp), word)
    frame_temp = cpu.frame.sp
    size = insn.operands[0].imm & 0xFFFF
    cpu.set_register(bp, frame_temp)
    cpu.frame.sp = (frame_temp - size) & _MASK[insn.arch]     # level 0 touches no other memory
    cpu.frame.ip = insn.next_address


def _leave(insn, cpu, rule: EmulateRule) -> None:
    # LEAVE (SDM Vol. 2A): sp = bp; bp = pop.
    word, bp = _WORD[insn.arch], "ebp" if insn.arch == "i386" else "rbp"
    sp = cpu.register(bp) & _MASK[insn.arch]
    value = cpu.load(sp, word)             # load before changing anything: a fault leaves all
    cpu.set_register(bp, value)
    cpu.frame.sp = (sp + word) & _MASK[insn.arch]
    cpu.frame.ip = insn.next_address


def _nop(insn, cpu, rule: EmulateRule) -> None:
    cpu.frame.ip = insn.next_address


def _ret(insn, cpu, rule: EmulateRule) -> None:
    word = _WORD[insn.arch]
    target = cpu.load(cpu.frame.sp, word)
    extra = insn.operands[0].imm & 0xFFFF if insn.operands else 0
    cpu.frame.sp = (cpu.frame.sp + word + extra) & _MASK[insn.arch]
    cpu.frame.ip = target


def _jmp(insn, cpu, rule: EmulateRule) -> None:
    cpu.frame.ip = insn.branch_target


def _jcc(insn, cpu, rule: EmulateRule) -> None:
    taken = _CONDITIONS[insn.base_mnemonic](cpu.frame.flags)
    cpu.frame.ip = insn.branch_target if taken else insn.next_address


def _call(insn, cpu, rule: EmulateRule) -> None:
    # The ORIGINAL return address: the callee must never see where the probe machinery is.
    _push(cpu, insn, insn.next_address, _WORD[insn.arch])
    cpu.frame.ip = insn.branch_target


def _system_call(insn, cpu, rule: EmulateRule):
    """`syscall` or `int 0x80`: the kernel runs the call as the instruction would have, with
    its original return address (kernel_model/debug/syscalls.py); a SyscallRun."""
    return cpu.debug.run_syscall(cpu.frame, cpu.debug.current_thread(), insn.address, rule.name)


_HANDLERS = {
    "syscall": _system_call, "int80": _system_call,
    "push_fp": _push_register, "push_fp64": _push_register, "push_reg": _push_register,
    "push_rip": _push_rip_memory,
    "pop_fp": _pop_frame_pointer, "pop_fp64": _pop_frame_pointer, "enter": _enter,
    "leave": _leave, "nop": _nop, "ret": _ret, "jmp_rel": _jmp, "jcc_rel": _jcc,
    "call_rel": _call,
}

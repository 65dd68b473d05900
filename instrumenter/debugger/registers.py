"""A thread's registers as GDB numbers and names them, read and written through the debug
interface, with the PC seen through the instrumentation (addrmap.py).

The layouts follow GDB's feature descriptions for i386 and amd64 GNU/Linux (GDB manual,
"Standard Target Features": i386 features org.gnu.gdb.i386.core, .sse, .linux, .segments):
the general registers in GDB's order (i386: eax ecx edx ebx esp ebp esi edi; amd64: rax rbx
rcx rdx rsi rdi rbp rsp r8-r15), the PC, eflags, the six selectors (32 bits each), st0-st7
(80-bit extended), the eight x87 control registers, xmm0-7/15 and mxcsr, then orig_eax /
orig_rax and (amd64) fs_base/gs_base. The register number is the position in this list, the order
of the `g` packet.
"""
from dataclasses import dataclass

CORE, SSE, LINUX, SEGMENTS = ("org.gnu.gdb.i386.core", "org.gnu.gdb.i386.sse",
                              "org.gnu.gdb.i386.linux", "org.gnu.gdb.i386.segments")
X87_CONTROL = ("fctrl", "fstat", "ftag", "fiseg", "fioff", "foseg", "fooff", "fop")
SELECTORS = ("cs", "ss", "ds", "es", "fs", "gs")


@dataclass(frozen=True)
class Reg:
    name: str
    bits: int
    type: str            # a GDB target-description type
    feature: str
    group: str = ""

    @property
    def size(self) -> int:
        return self.bits // 8


def _layout(bits: int) -> tuple[Reg, ...]:
    word = "int64" if bits == 64 else "int32"
    gprs = (("rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp")
            + tuple(f"r{i}" for i in range(8, 16))) if bits == 64 else \
        ("eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi")
    pointers = {"rbp": "data_ptr", "rsp": "data_ptr", "ebp": "data_ptr", "esp": "data_ptr"}
    regs = [Reg(n, bits, pointers.get(n, word), CORE) for n in gprs]
    regs.append(Reg("rip" if bits == 64 else "eip", bits, "code_ptr", CORE))
    regs.append(Reg("eflags", 32, "i386_eflags", CORE))
    regs += [Reg(n, 32, "int32", CORE) for n in SELECTORS]
    regs += [Reg(f"st{i}", 80, "i387_ext", CORE) for i in range(8)]
    regs += [Reg(n, 32, "int", CORE, "float") for n in X87_CONTROL]
    regs += [Reg(f"xmm{i}", 128, "vec128", SSE) for i in range(16 if bits == 64 else 8)]
    regs.append(Reg("mxcsr", 32, "i386_mxcsr", SSE, "vector"))
    regs.append(Reg("orig_rax" if bits == 64 else "orig_eax", bits, "int", LINUX))
    if bits == 64:
        # amd64 only: GDB's i386 GNU/Linux numbering gives orig_eax the number fs_base would
        # take (i386-linux-tdep.h: I386_LINUX_ORIG_EAX_REGNUM is I386_PKRU_REGNUM + 1), and
        # its gdbserver describes no segments feature for i386 (a longer list trips GDB's
        # tdesc_use_registers assertion).
        regs += [Reg(n, bits, "int", SEGMENTS) for n in ("fs_base", "gs_base")]
    return tuple(regs)


LAYOUTS = {"x86_64": _layout(64), "i386": _layout(32)}


def layout(arch: str) -> tuple[Reg, ...]:
    return LAYOUTS[arch]


def pc_name(arch: str) -> str:
    return "rip" if arch == "x86_64" else "eip"


class ThreadRegisters:
    """Every register of `thread` by GDB name (ints; st0-7 as 80-bit integers, xmm as 128)."""

    def __init__(self, debug, addrmap):
        self.debug = debug
        self.addrmap = addrmap

    def read(self, thread) -> dict[str, int]:
        debug, process = self.debug, thread.process
        arch = debug.arch(process)
        values = {r.name: 0 for r in layout(arch.name)}
        for r in layout(arch.name):
            if r.feature in (CORE, SEGMENTS) and r.type not in ("i387_ext",) and r.group != "float":
                source = "rflags" if (r.name == "eflags" and arch.bits == 64) else r.name
                values[r.name] = debug.read_register(thread, source)
        pc = pc_name(arch.name)
        values[pc] = self.addrmap.original_pc(process, values[pc])
        self._syscall_state(thread, values, arch.bits)
        fpu = debug.read_fpu(thread)
        for i, (significand, exponent) in enumerate(fpu.stack()):
            values[f"st{i}"] = significand | (exponent << 64)
        values.update(fctrl=fpu.fcw, fstat=fpu.fsw, ftag=fpu.ftw, fiseg=fpu.fcs,
                      fioff=fpu.fip & 0xFFFFFFFF, foseg=fpu.fds, fooff=fpu.fdp & 0xFFFFFFFF,
                      fop=fpu.fop, mxcsr=fpu.mxcsr)
        for i, value in enumerate(fpu.xmm):
            values[f"xmm{i}"] = value
        return values

    def _syscall_state(self, thread, values: dict[str, int], bits: int) -> None:
        """orig_eax/orig_rax, and the state of a call a signal interrupted, as Linux's
        registers are at the stop (kernel_model/debug/interrupted_calls.py): past the
        instruction, -ERESTART* in the result register, the number in orig_ax. Any other
        stop is outside a call: orig_ax -1 (syscall_get_nr's "no call")."""
        mask = (1 << bits) - 1
        interrupted = self.debug.interrupted_syscall(thread)
        orig, result = ("orig_rax", "rax") if bits == 64 else ("orig_eax", "eax")
        if interrupted is None:
            values[orig] = mask
            return
        code, number = interrupted
        values[pc_name("x86_64" if bits == 64 else "i386")] += 2    # syscall / int 0x80
        values[result], values[orig] = -code & mask, number

    def write(self, thread, changes: dict[str, int]) -> None:
        """Set the registers named in `changes`. A PC equal to the one shown is left alone
        (the thread may be inside a trampoline that stands for it: GDB writes back what it
        read); orig_eax/orig_rax is accepted and has no effect (an interrupted call, kept
        rewound, is made again or ended at the signal's delivery whatever it says)."""
        debug, process = self.debug, thread.process
        arch = debug.arch(process)
        current = self.read(thread)
        fpu_changes = {}
        for name, value in changes.items():
            if value == current.get(name) or name.startswith("orig_"):
                continue
            if name in ("rip", "eip"):
                debug.write_register(thread, name, value)
            elif name == "eflags":
                debug.write_register(thread, "rflags" if arch.bits == 64 else "eflags", value)
            elif name.startswith(("st", "xmm")) or name in X87_CONTROL or name == "mxcsr":
                fpu_changes[name] = value
            else:
                debug.write_register(thread, name, value)
        if fpu_changes:
            self._write_fpu(thread, fpu_changes)

    def _write_fpu(self, thread, changes: dict[str, int]) -> None:
        import dataclasses
        fpu = self.debug.read_fpu(thread)
        regs = list(fpu.regs)
        for i in range(8):
            if f"st{i}" in changes:
                value = changes[f"st{i}"]
                regs[(fpu.top + i) & 7] = (value & ((1 << 64) - 1), value >> 64)
        xmm = list(fpu.xmm)
        for i in range(len(xmm)):
            xmm[i] = changes.get(f"xmm{i}", xmm[i])
        names = {"fctrl": "fcw", "fstat": "fsw", "ftag": "ftw", "fiseg": "fcs", "fioff": "fip",
                 "foseg": "fds", "fooff": "fdp", "fop": "fop", "mxcsr": "mxcsr"}
        fields = {names[n]: v for n, v in changes.items() if n in names}
        self.debug.write_fpu(thread, dataclasses.replace(fpu, regs=tuple(regs), xmm=tuple(xmm), **fields))

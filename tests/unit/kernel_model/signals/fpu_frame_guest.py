"""A guest that sets its whole x87/SSE state from a 512-byte FXSAVE image (FXRSTOR), takes
SIGUSR1 whose handler computes with the x87 and SSE units and wrecks both, and after
sigreturn writes its state (FXSAVE) and what the handler saw to stdout. With `edit`, the
handler also rewrites the saved FPU state in its frame (ST(0) and XMM0, where Linux reads
them back: the FXSAVE area on x86-64, the FSAVE header's ST(0) and the FXSAVE area's XMM0 on
i386) before it returns.

Output (1024 bytes): 0 the FXSAVE image after sigreturn; 512 FCW (2) and MXCSR (4) at
handler entry; 520 the handler's 1/3 (tbyte); 544 the fpstate magic words and uc_flags the
handler found: sw_reserved.magic1, magic2 at fpstate + xstate_size, uc_flags.
"""
import struct
from pathlib import Path

from tests.unit.emu.guest import asm
from tests.unit.loader.elf_builder import CODE_OFFSET, build_elf

from ..tinyelf import write_program

SA_SIGINFO, SA_RESTORER = 0x4, 0x04000000
IMAGE_DELTA = 0x800                  # the FXRSTOR image: in the code segment, 16-byte aligned
EDITED_ST0 = (0x8123456789ABCDEF, 0x4005)
EDITED_XMM0 = 0x0FEDCBA98765432100112233445566778

COMMON = """
    {install}
    fxrstor [{image}];
    {raise}
    fxsave [{d}];
    {finish}
handler:
    {load_uc}
    fnstcw word ptr [{d}+512]; stmxcsr dword ptr [{d}+516];
    mov eax, dword ptr [{fp}+464]; mov dword ptr [{d}+544], eax;
    mov ecx, dword ptr [{fp}+480]; mov eax, dword ptr [{fp}+{idx}]; mov dword ptr [{d}+548], eax;
    {edit}
    mov dword ptr [{d}+600], 1; mov dword ptr [{d}+604], 3;
    fninit; fild dword ptr [{d}+600]; fild dword ptr [{d}+604]; fdivp st(1), st;
    fstp tbyte ptr [{d}+520]; fld1; fldpi; fldz;
    mov dword ptr [{d}+608], 0x7f80; ldmxcsr dword ptr [{d}+608];
    pcmpeqd xmm0, xmm0; pcmpeqd xmm1, xmm1; xorps xmm7, xmm7; addps xmm1, xmm0;
    ret;
restorer:
    {sigreturn}
"""
X86_64 = {
    "install": "mov qword ptr [{d}+0x800], {handler}; mov qword ptr [{d}+0x808], {flags}; "
               "mov qword ptr [{d}+0x810], {restorer}; mov qword ptr [{d}+0x818], 0; "
               "mov eax, 13; mov edi, 10; mov esi, {d}+0x800; xor edx, edx; mov r10d, 8; syscall;",
    "raise": "mov eax, 39; syscall; mov edi, eax; mov esi, 10; mov eax, 62; syscall;",
    "finish": "mov eax, 1; mov edi, 1; mov esi, {d}; mov edx, 1024; syscall; "
              "mov eax, 60; xor edi, edi; syscall;",
    # rdx = the ucontext: uc_flags at 0, uc_mcontext at 40, its fpstate at 40 + 184
    "load_uc": "mov rax, qword ptr [rdx]; mov dword ptr [{d}+552], eax; mov rbx, qword ptr [rdx+224];",
    "fp": "rbx", "idx": "rcx",
    "edit": "mov rax, {st0_lo}; mov qword ptr [rbx+32], rax; mov word ptr [rbx+40], {st0_hi}; "
            "mov rax, {xmm_lo}; mov qword ptr [rbx+160], rax; mov rax, {xmm_hi}; mov qword ptr [rbx+168], rax;",
    "sigreturn": "mov eax, 15; syscall;",
}
I386 = {
    "install": "mov dword ptr [{d}+0x800], {handler}; mov dword ptr [{d}+0x804], {flags}; "
               "mov dword ptr [{d}+0x808], {restorer}; mov dword ptr [{d}+0x80c], 0; mov dword ptr [{d}+0x810], 0;"
               "mov eax, 174; mov ebx, 10; mov ecx, {d}+0x800; xor edx, edx; mov esi, 8; int 0x80;",
    "raise": "mov eax, 20; int 0x80; mov ebx, eax; mov ecx, 10; mov eax, 37; int 0x80;",
    "finish": "mov eax, 4; mov ebx, 1; mov ecx, {d}; mov edx, 1024; int 0x80; "
              "mov eax, 1; xor ebx, ebx; int 0x80;",
    # [esp+12] = the ucontext: uc_flags at 0, uc_mcontext at 20, its fpstate at 20 + 76; the
    # FXSAVE area follows the 112-byte FSAVE header.
    "load_uc": "mov edx, dword ptr [esp+12]; mov eax, dword ptr [edx]; mov dword ptr [{d}+552], eax; "
               "mov ebx, dword ptr [edx+96]; lea esi, [ebx+112];",
    "fp": "esi", "idx": "ecx",
    "edit": "mov dword ptr [ebx+28], {st0_lo32}; mov dword ptr [ebx+32], {st0_mid32}; mov word ptr [ebx+36], {st0_hi}; "
            "mov dword ptr [esi+160], {xmm0}; mov dword ptr [esi+164], {xmm1}; "
            "mov dword ptr [esi+168], {xmm2}; mov dword ptr [esi+172], {xmm3};",
    "sigreturn": "mov eax, 173; int 0x80;",
}


def _edit_fields() -> dict:
    lo, hi = EDITED_ST0
    return dict(st0_lo=hex(lo), st0_hi=hex(hi), st0_lo32=hex(lo & 0xFFFFFFFF), st0_mid32=hex(lo >> 32),
                xmm_lo=hex(EDITED_XMM0 & (2**64 - 1)), xmm_hi=hex(EDITED_XMM0 >> 64),
                **{f"xmm{i}": hex((EDITED_XMM0 >> (32 * i)) & 0xFFFFFFFF) for i in range(4)})


def fpu_frame_program(arch: str, image: bytes, *, edit: bool = False, edit_mxcsr: int | None = None) -> bytes:
    built = build_elf(32 if arch == "i386" else 64)
    d, entry = built.data_vaddr, built.entry
    parts = X86_64 if arch == "x86_64" else I386
    labels = {"handler": 0, "restorer": 0}
    for _ in range(2):              # the second pass knows the label addresses
        fields = dict(d=d, flags=SA_SIGINFO | SA_RESTORER, **labels, **_edit_fields())
        filled = {k: v.format(**fields) for k, v in parts.items() if k != "edit"}
        filled["edit"] = parts["edit"].format(**fields) if edit else ""
        if edit_mxcsr is not None:      # MXCSR in the FXSAVE area: where both frames keep it
            filled["edit"] += f"mov dword ptr [{parts['fp']}+24], {edit_mxcsr:#x};"
        source = COMMON.format(d=d, image=hex(entry + IMAGE_DELTA), **filled)
        code = asm(source, arch, entry)
        for name in labels:
            labels[name] = entry + len(asm(source.split(f"{name}:")[0], arch, entry))
    assert len(code) <= IMAGE_DELTA
    text = built.load_indexes[0]
    end = CODE_OFFSET + IMAGE_DELTA + len(image)
    built.set_phdr(text, "filesz", end)
    built.set_phdr(text, "memsz", end)
    built.set_phdr(built.load_indexes[1], "memsz", 0x1000)
    built.data[CODE_OFFSET:CODE_OFFSET + len(code)] = code
    built.data[CODE_OFFSET + IMAGE_DELTA:end] = image
    return built.bytes()


def image_of(fcw: int, fsw: int, tag: int, mxcsr: int, st: list[bytes], xmm: list[bytes]) -> bytes:
    """A 512-byte FXSAVE image (Intel SDM Vol. 1 Table 10-2); pointers and FOP zero. FSW's
    ES and B bits are made what a real CPU's FXRSTOR makes them (set when an exception flag is
    set whose FCW mask bit is clear; Unicorn loads them as given), so native runs compare."""
    pending = fsw & ~fcw & 0x3F
    fsw = (fsw & ~0x8080) | (0x8080 if pending else 0)
    head = struct.pack("<HHBxH16xII", fcw, fsw, tag, 0, mxcsr, 0)
    regs = b"".join(r.ljust(16, b"\0") for r in st)
    return (head + regs + b"".join(xmm)).ljust(512, b"\0")


def compared_fields(fxsave: bytes, bits: int) -> dict:
    """What must survive the signal: control/status/tag words, MXCSR, the registers."""
    fcw, fsw, tag = struct.unpack_from("<HHB", fxsave, 0)
    return {"fcw": fcw, "fsw": fsw, "tag": tag, "mxcsr": struct.unpack_from("<I", fxsave, 24)[0],
            "st": [fxsave[32 + 16 * i:42 + 16 * i] for i in range(8)],
            "xmm": [fxsave[160 + 16 * i:176 + 16 * i] for i in range(16 if bits == 64 else 8)]}


def write_fpu_program(folder: Path, arch: str, image: bytes, *, edit: bool = False,
                      edit_mxcsr: int | None = None) -> Path:
    name = f"fpuframe-{arch}{'-edit' if edit else ''}{'-mxcsr' if edit_mxcsr is not None else ''}"
    return write_program(folder, name, fpu_frame_program(arch, image, edit=edit, edit_mxcsr=edit_mxcsr))

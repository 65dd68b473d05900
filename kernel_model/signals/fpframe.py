"""The x87/SSE state in a signal frame, byte for byte as Linux writes and reads it.

Linux arch/x86/kernel/fpu/signal.c (copy_fpstate_to_sigframe, fpu__restore_sig) and
fpu/regset.c (convert_from_fxsr, convert_to_fxsr), for the CPU trapline models: Unicorn's
default x86 CPU reports XSAVE and OSXSAVE (CPUID.01H:ECX bits 26-27) with XCR0 = x87|SSE, and
CPUID.(EAX=0DH,ECX=0):EBX = 576, so Linux's use_xsave() path applies with a user xstate of
576 bytes: the 512-byte FXSAVE-format legacy area, the 64-byte XSAVE header, no extended
component; then FP_XSTATE_MAGIC2. The legacy area's software bytes (464..511, struct
_fpx_sw_bytes) say so with FP_XSTATE_MAGIC1.

  x86-64  uc_mcontext.fpstate -> the xstate (64-byte aligned, below the frame)
  i386    uc_mcontext.fpstate -> struct _fpstate_32: an FSAVE-format header (112 bytes:
          environment, ST(0)..ST(7) in 10 bytes each, status, magic 0x0000 = X86_FXSR_MAGIC)
          followed by the xstate, 64-byte aligned

At sigreturn the legacy x87 part of an i386 frame comes from the FSAVE header ("the FP portion
of the FX frame has to be ignored for histerical raisins"), the rest from the xstate; a frame
whose magic words are gone (a program that copied only the 512-byte legacy layout) is restored
as FXSAVE data only. What Linux refuses (reserved MXCSR bits, a bad XSAVE header, an unreadable
area) is a bad frame: RestoreError, and the caller raises SIGSEGV as signal_fault does.
"""
import struct

from emu.fpu import FTW_ALL_EMPTY, FpuState, init_state

FXSAVE_SIZE = 512
XSTATE_HEADER_SIZE = 64
XSTATE_USER_SIZE = FXSAVE_SIZE + XSTATE_HEADER_SIZE     # CPUID.(0DH,0):EBX for XCR0 = 3
XFEATURES_USER = 0x3                                    # XFEATURE_MASK_FP | XFEATURE_MASK_SSE
FP_XSTATE_MAGIC1, FP_XSTATE_MAGIC2 = 0x46505853, 0x46505845
MAGIC2_SIZE = 4
XSTATE_SIGFRAME_SIZE = XSTATE_USER_SIZE + MAGIC2_SIZE   # xstate_sigframe_size()
FSAVE_HEADER_SIZE = 112                                 # sizeof(struct fregs_state)
X86_FXSR_MAGIC = 0x0000
MXCSR_FEATURE_MASK = 0xFFFF         # the MXCSR_MASK the modeled CPU's FXSAVE stores
SW_BYTES_OFFSET = 464               # struct _fpx_sw_bytes sw_reserved in the legacy area
SW_BYTES = struct.Struct("<IIQI28x")                    # magic1, extended_size, xfeatures, xstate_size
XSTATE_HEADER = struct.Struct("<QQ48s")                 # xfeatures (XSTATE_BV), xcomp_bv, reserved
FSAVE_ENV = struct.Struct("<7I")                        # cwd, swd, twd, fip, fcs, foo, fos


class RestoreError(Exception):
    """The frame's FPU state is one Linux refuses at sigreturn."""


def math_frame(sp: int, ia32: bool) -> tuple[int, int]:
    """fpu__alloc_mathframe: (fpstate, buf_fx) below `sp`; the frame goes below fpstate."""
    buf_fx = (sp - XSTATE_SIGFRAME_SIZE) & ~63
    return (buf_fx - FSAVE_HEADER_SIZE if ia32 else buf_fx), buf_fx


# ---- saving ---------------------------------------------------------------------------------
def _abridged_tag(ftw: int) -> int:
    """FXSAVE's tag byte: bit i set when physical register i is not empty (SDM Vol. 1 10.5.1.1)."""
    return sum(1 << i for i in range(8) if (ftw >> (2 * i)) & 3 != 3)


def _st_bytes(reg: tuple, width: int) -> bytes:
    significand, exponent = reg
    return struct.pack("<QH", significand, exponent).ljust(width, b"\0")


def legacy_area(state: FpuState, bits: int) -> bytes:
    """What XSAVE writes of the legacy area for RFBM = x87|SSE: bytes 0..287 (XMM0-7) in 32-bit
    mode, 0..415 (XMM0-15) in 64-bit mode, FIP/FDP in the format of that mode."""
    head = struct.pack("<HHBxH", state.fcw, state.fsw, _abridged_tag(state.ftw), state.fop)
    if bits == 64:
        pointers = struct.pack("<QQ", state.fip, state.fdp)
    else:
        pointers = struct.pack("<IHxxIHxx", state.fip & 0xFFFFFFFF, state.fcs, state.fdp & 0xFFFFFFFF,
                               state.fds)
    sse = struct.pack("<II", state.mxcsr, MXCSR_FEATURE_MASK)
    st = b"".join(_st_bytes(reg, 16) for reg in state.stack())
    xmm = b"".join(value.to_bytes(16, "little") for value in state.xmm)
    return head + pointers + sse + st + xmm


def _twd_fxsr_to_i387(state: FpuState) -> int:
    """The full tag word FSAVE would store, worked out from the registers' contents as Linux's
    twd_fxsr_to_i387 does (valid 0, zero 1, special 2, empty 3)."""
    twd = 0xFFFF0000
    for i in range(8):
        if (state.ftw >> (2 * i)) & 3 == 3:
            tag = 3
        else:
            significand, exponent = state.regs[i]
            exponent &= 0x7FFF
            if exponent == 0x7FFF:
                tag = 2
            elif exponent == 0:
                tag = 1 if significand == 0 else 2
            else:
                tag = 0 if significand >> 63 else 2
        twd |= tag << (2 * i)
    return twd


def fsave_header(state: FpuState) -> bytes:
    """save_fsave_header for FXSR CPUs on a 32-bit kernel: convert_from_fxsr's environment
    (fcs carries FOP in its high half), the stack in FSAVE order, status = FSW, magic."""
    env = FSAVE_ENV.pack(state.fcw | 0xFFFF0000, state.fsw | 0xFFFF0000, _twd_fxsr_to_i387(state),
                         state.fip & 0xFFFFFFFF, (state.fcs & 0xFFFF) | (state.fop << 16),
                         state.fdp & 0xFFFFFFFF, state.fds & 0xFFFF)
    st = b"".join(_st_bytes(reg, 10) for reg in state.stack())
    return env + st + struct.pack("<HH", state.fsw, X86_FXSR_MAGIC)


def fpstate_pieces(state: FpuState, fpstate: int, buf_fx: int, bits: int) -> list[tuple[int, bytes]]:
    """(address, bytes) of everything copy_fpstate_to_sigframe writes; the bytes it leaves
    alone (the legacy area's reserved bytes, XMM8-15 of a 32-bit XSAVE) keep what the stack
    held. The header is cleared first and gets x87|SSE in XSTATE_BV (save_xstate_epilog)."""
    ia32 = fpstate != buf_fx
    sw = SW_BYTES.pack(FP_XSTATE_MAGIC1,
                       XSTATE_SIGFRAME_SIZE + (FSAVE_HEADER_SIZE if ia32 else 0),
                       XFEATURES_USER, XSTATE_USER_SIZE)
    pieces = [(buf_fx, legacy_area(state, bits)),
              (buf_fx + SW_BYTES_OFFSET, sw),
              (buf_fx + FXSAVE_SIZE, XSTATE_HEADER.pack(XFEATURES_USER, 0, bytes(48))),
              (buf_fx + XSTATE_USER_SIZE, struct.pack("<I", FP_XSTATE_MAGIC2))]
    if ia32:
        pieces.append((fpstate, fsave_header(state)))
    return pieces


# ---- restoring ------------------------------------------------------------------------------
def _full_tag(abridged: int) -> int:
    """FXRSTOR: a clear bit makes the register empty; the others are tagged from their contents."""
    return sum(3 << (2 * i) for i in range(8) if not abridged >> i & 1)


def _unpack_st(raw: bytes, at: int) -> tuple[int, int]:
    return struct.unpack_from("<QH", raw, at)


def _x87_from_legacy(raw: bytes, bits: int) -> dict:
    fcw, fsw, tag, fop = struct.unpack_from("<HHBxH", raw, 0)
    if bits == 64:
        fip, fdp = struct.unpack_from("<QQ", raw, 8)
        fcs = fds = 0
    else:
        fip, fcs, fdp, fds = struct.unpack_from("<IHxxIHxx", raw, 8)
    top = (fsw >> 11) & 7
    stack = [_unpack_st(raw, 32 + 16 * i) for i in range(8)]
    regs = tuple(stack[(p - top) & 7] for p in range(8))
    return dict(fcw=fcw, fsw=fsw, ftw=_full_tag(tag), fop=fop, fip=fip, fcs=fcs, fdp=fdp, fds=fds,
                regs=regs)


def _x87_from_fsave(raw: bytes) -> dict:
    """convert_to_fxsr on a 32-bit kernel: the environment and ST(0)..ST(7) of the header."""
    cwd, swd, twd, fip, fcs, foo, fos = FSAVE_ENV.unpack_from(raw, 0)
    fsw = swd & 0xFFFF
    top = (fsw >> 11) & 7
    stack = [_unpack_st(raw, FSAVE_ENV.size + 10 * i) for i in range(8)]
    # twd_i387_to_fxsr keeps only empty / not empty.
    ftw = sum(3 << (2 * i) for i in range(8) if (twd >> (2 * i)) & 3 == 3)
    return dict(fcw=cwd & 0xFFFF, fsw=fsw, ftw=ftw, fop=(fcs >> 16) & 0xFFFF, fip=fip,
                fcs=fcs & 0xFFFF, fdp=foo, fds=fos & 0xFFFF,
                regs=tuple(stack[(p - top) & 7] for p in range(8)))


def _xmm_from_legacy(raw: bytes, bits: int) -> tuple:
    count = 16 if bits == 64 else 8
    return tuple(int.from_bytes(raw[160 + 16 * i:176 + 16 * i], "little") for i in range(count))


def _check_header(raw: bytes) -> int:
    """XRSTOR's #GP conditions for the standard form with XCR0 = x87|SSE (SDM Vol. 1 13.8):
    XSTATE_BV bits outside XCR0, a non-zero XCOMP_BV (no compacted form: no XSAVEC), reserved
    header bytes set. Returns XSTATE_BV."""
    xstate_bv, xcomp_bv, reserved = XSTATE_HEADER.unpack_from(raw, FXSAVE_SIZE)
    if xstate_bv & ~XFEATURES_USER or xcomp_bv or any(reserved):
        raise RestoreError(f"bad XSAVE header (XSTATE_BV {xstate_bv:#x}, XCOMP_BV {xcomp_bv:#x})")
    return xstate_bv


def _check_mxcsr(mxcsr: int) -> int:
    if mxcsr & ~MXCSR_FEATURE_MASK:
        raise RestoreError(f"reserved MXCSR bits set ({mxcsr:#x})")
    return mxcsr


def _xstate_format(read, buf_fx: int) -> tuple[bool, int]:
    """check_xstate_in_sigframe: (fx_only, the xfeatures the software bytes name)."""
    magic1, _, xfeatures, _ = SW_BYTES.unpack(read(buf_fx + SW_BYTES_OFFSET, SW_BYTES.size))
    if magic1 == FP_XSTATE_MAGIC1:
        (magic2,) = struct.unpack("<I", read(buf_fx + XSTATE_USER_SIZE, 4))
        if magic2 == FP_XSTATE_MAGIC2:
            return False, xfeatures
    return True, XFEATURES_USER


def restore_fpstate(read, fpstate: int, bits: int, ia32: bool) -> FpuState:
    """fpu__restore_sig: the state the interrupted code gets back. `read(addr, size)` raises
    RestoreError (or any exception) for memory the process cannot read."""
    init = init_state(bits)
    if fpstate == 0:
        return init                                     # fpu__clear_user_states
    buf_fx = fpstate + FSAVE_HEADER_SIZE if ia32 else fpstate
    fx_only, xfeatures = _xstate_format(read, buf_fx)
    raw = read(buf_fx, XSTATE_USER_SIZE if not fx_only else FXSAVE_SIZE)
    components = xfeatures & XFEATURES_USER
    if not ia32:
        # XRSTOR (or FXRSTOR) straight from the frame; what RFBM leaves out is initialised.
        xstate_bv = XFEATURES_USER if fx_only else _check_header(raw)
        loaded = components & xstate_bv
        mxcsr = _check_mxcsr(struct.unpack_from("<I", raw, 24)[0]) if components else init.mxcsr
        x87 = _x87_from_legacy(raw, bits) if loaded & 1 else None
    else:
        env = read(fpstate, FSAVE_ENV.size + 80)
        mxcsr = struct.unpack_from("<I", raw, 24)[0]
        if fx_only:
            loaded, mxcsr = XFEATURES_USER, mxcsr & MXCSR_FEATURE_MASK    # masked, for old CPUs
        else:
            # copy_uabi_to_xstate: MXCSR is checked and taken when the header names x87 or
            # SSE; components the software bytes leave out are then initialised.
            xstate_bv = _check_header(raw)
            mxcsr = _check_mxcsr(mxcsr) if xstate_bv else init.mxcsr
            loaded = xstate_bv & components
        x87 = _x87_from_fsave(env) if loaded & 1 else None
    fields = x87 or dict(fcw=init.fcw, fsw=0, ftw=FTW_ALL_EMPTY, fop=0, fip=0, fcs=0, fdp=0, fds=0,
                         regs=init.regs)
    xmm = _xmm_from_legacy(raw, bits) if loaded & 2 else init.xmm
    return FpuState(mxcsr=mxcsr, xmm=xmm, **fields)

"""The x87/SSE state of the interrupted code travels in the signal frame, as Linux's does
(kernel_model/signals/fpframe.py): it survives a handler that computes with both units and
wrecks them, a handler that edits the saved state changes what the interrupted code sees, the
frame carries the XSAVE magic words and uc_flags Linux writes for this CPU, and a state Linux
refuses at sigreturn (reserved MXCSR bits) is a SIGSEGV. Where the host runs x86 binaries the
same files run natively and must give the same bytes."""
import platform
import random
import struct
import subprocess

from kernel_model.signals.fpframe import FP_XSTATE_MAGIC1, FP_XSTATE_MAGIC2

from .fpu_frame_guest import (EDITED_ST0, EDITED_XMM0, compared_fields, image_of,
                              write_fpu_program)
from .test_fpu_state import run_in_trapline

UC_FLAGS = {"x86_64": 7, "i386": 1}        # UC_FP_XSTATE | UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS
THIRD_X87 = struct.pack("<QH", 0xAAAAAAAAAAAAAAAB, 0x3FFD)


def random_image(arch: str, seed: int) -> bytes:
    rnd = random.Random(seed)
    st = [rnd.randbytes(10) for _ in range(8)]
    xmm = [rnd.randbytes(16) for _ in range(16 if arch == "x86_64" else 8)]
    return image_of(rnd.getrandbits(16) & 0x0F3F | 0x40, rnd.getrandbits(16), rnd.getrandbits(8),
                    rnd.getrandbits(16), st, xmm)


def native(path) -> subprocess.CompletedProcess | None:
    if platform.machine() != "x86_64":
        return None
    try:
        return subprocess.run([str(path)], capture_output=True, timeout=10)
    except OSError:                 # a host kernel without IA-32 emulation
        return None


def same_as_native(path, out: bytes, bits: int) -> None:
    """The registers and what the handler saw; not FIP/FDP/FOP, which Unicorn does not track
    as the host CPU does."""
    host = native(path)
    if host is not None:
        assert host.returncode == 0
        assert compared_fields(host.stdout, bits) == compared_fields(out, bits)
        assert host.stdout[512:556] == out[512:556]


def test_state_survives_a_handler_that_uses_the_fpu(tmp_path, arch):
    image = random_image(arch, 1)
    path = write_fpu_program(tmp_path, arch, image)
    status, out = run_in_trapline(path)
    bits = 64 if arch == "x86_64" else 32
    assert status == 0
    assert compared_fields(out, bits) == compared_fields(image, bits)
    assert struct.unpack_from("<HxxI", out, 512) == (0x037F, 0x1F80)      # the handler starts clean
    assert out[520:530] == THIRD_X87                                      # ... and computes
    assert struct.unpack_from("<III", out, 544) == (FP_XSTATE_MAGIC1, FP_XSTATE_MAGIC2, UC_FLAGS[arch])
    same_as_native(path, out, bits)


def test_a_handler_edits_the_saved_state(tmp_path, arch):
    image = random_image(arch, 2)
    path = write_fpu_program(tmp_path, arch, image, edit=True)
    status, out = run_in_trapline(path)
    bits = 64 if arch == "x86_64" else 32
    assert status == 0
    got, sent = compared_fields(out, bits), compared_fields(image, bits)
    assert got["st"][0] == struct.pack("<QH", *EDITED_ST0)
    assert got["xmm"][0] == EDITED_XMM0.to_bytes(16, "little")
    assert (got["st"][1:], got["xmm"][1:], got["mxcsr"]) == (sent["st"][1:], sent["xmm"][1:], sent["mxcsr"])
    same_as_native(path, out, bits)


def test_reserved_mxcsr_bits_in_the_frame_are_a_bad_frame(tmp_path, arch):
    """Linux: fxrstor/xrstor faults (x86-64) or copy_uabi_to_xstate refuses (i386), the frame
    is bad and the process gets SIGSEGV (signal_fault)."""
    image = random_image(arch, 3)
    path = write_fpu_program(tmp_path, arch, image, edit=True, edit_mxcsr=0x10000)
    status, _ = run_in_trapline(path)
    assert status == 11                                     # killed by SIGSEGV
    host = native(path)
    if host is not None:
        assert host.returncode == -11

"""emu.capstone_lib: the block clock's capstone library without the Python package (issue 31)."""
import ctypes
import subprocess
import sys

import capstone

from emu import capstone_lib


def test_the_enums_are_the_packages():
    _, x86, mode_32, mode_64 = capstone_lib.library()
    assert (x86, mode_32, mode_64) == (capstone.CS_ARCH_X86, capstone.CS_MODE_32, capstone.CS_MODE_64)


def test_the_library_found_without_the_package_is_the_packages_file():
    found = capstone_lib._without_package()
    assert found is not None                    # the pinned capstone 5 ships lib/libcapstone.so
    lib, enums = found
    assert enums == (capstone.CS_ARCH_X86, capstone.CS_MODE_32, capstone.CS_MODE_64)
    assert lib._name == capstone._cs._name
    assert lib.cs_version(None, None) == capstone._cs.cs_version(None, None)


def test_the_library_decodes_as_the_package_does():
    lib, x86, _, mode_64 = capstone_lib.library()
    handle = ctypes.c_size_t()
    assert lib.cs_open(x86, mode_64, ctypes.byref(handle)) == 0
    lib.cs_disasm.restype = ctypes.c_size_t
    lib.cs_disasm.argtypes = (ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint64,
                              ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p))
    code = bytes.fromhex("554889e5b8010000005dc3")     # push rbp; mov rbp, rsp; mov eax, 1; pop; ret
    insns = ctypes.c_void_p()
    count = lib.cs_disasm(handle.value, code, len(code), 0x1000, 0, ctypes.byref(insns))
    lib.cs_free(insns, count)
    lib.cs_close(ctypes.byref(handle))
    assert count == len(list(capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64).disasm(code, 0x1000))) == 5


def test_a_clock_does_not_import_the_package():
    code = ("import sys\nfrom emu import capstone_lib\ncapstone_lib.library()\n"
            "print('capstone' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr

"""Capstone's C library for the block clock's decoder (block_clock.py), without the Python
package when it can be found (issue 31).

`import capstone` imports a module per architecture it knows (ARM, SPARC, SystemZ, TriCore...):
a start-up cost every `trapline trace` paid for the clock (bench/startup.py --importtime), which uses three functions of
the library and three numbers. The library is the file the package ships
(capstone/lib/libcapstone.so, which the package loads the same way: capstone/__init__.py
_load_lib, RTLD_DEEPBIND), found without importing the package, and loaded once per process:
a later `import capstone` (a uprobe's decoder) gets the same library from the dynamic loader.
The enum values are capstone.h's of the versions whose numbers are known here (4 and 5,
checked with cs_version); for any other version, a package installed elsewhere
($LIBCAPSTONE_PATH) or a library not found, the package is imported and asked.
"""
from __future__ import annotations

import ctypes
import os
from importlib.util import find_spec

# capstone.h (capstone 4 and 5): cs_arch CS_ARCH_X86, cs_mode CS_MODE_32 and CS_MODE_64
KNOWN_ENUMS = {4: (3, 1 << 2, 1 << 3), 5: (3, 1 << 2, 1 << 3)}

_LOADED: tuple | None = None


def library() -> tuple[ctypes.CDLL, int, int, int]:
    """(the library with the prototypes the clock uses, CS_ARCH_X86, CS_MODE_32, CS_MODE_64)."""
    global _LOADED
    if _LOADED is None:
        found = _without_package()
        lib, enums = found if found is not None else _through_package()
        lib.cs_open.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_size_t))
        lib.cs_malloc.restype = ctypes.c_void_p
        lib.cs_malloc.argtypes = (ctypes.c_size_t,)
        lib.cs_free.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
        lib.cs_close.argtypes = (ctypes.POINTER(ctypes.c_size_t),)
        _LOADED = (lib, *enums)
    return _LOADED


def _without_package():
    """The package's own library file, loaded as the package loads it; None where it is not
    there or its version's enums are not known here."""
    if os.environ.get("LIBCAPSTONE_PATH"):
        return None                     # the package would load that one: let it
    spec = find_spec("capstone")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = os.path.join(list(spec.submodule_search_locations)[0], "lib")
    for name in ("libcapstone.so", "libcapstone.so.5", "libcapstone.so.4"):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            break
    else:
        return None
    lib = ctypes.CDLL(path, mode=getattr(os, "RTLD_DEEPBIND", 0))
    lib.cs_version.restype = ctypes.c_uint
    lib.cs_version.argtypes = (ctypes.c_void_p, ctypes.c_void_p)
    enums = KNOWN_ENUMS.get(lib.cs_version(None, None) >> 8)
    return None if enums is None else (lib, enums)


def _through_package():
    import capstone
    lib = ctypes.CDLL(capstone._cs._name, handle=capstone._cs._handle)
    return lib, (capstone.CS_ARCH_X86, capstone.CS_MODE_32, capstone.CS_MODE_64)

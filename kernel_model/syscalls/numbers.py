"""Each ABI's table of system call numbers (numbers_i386.py, numbers_x86_64.py), its module
imported when the ABI is first asked about: a run calls through one ABI, and the other's
table was built by every start (issue 31, start-up)."""
import importlib

ABIS = ("i386", "x86_64")


def numbers(abi: str) -> dict[int, str]:
    """number -> name in `abi` (one of ABIS)."""
    return importlib.import_module(f"{__package__}.numbers_{abi}").NUMBERS

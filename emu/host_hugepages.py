"""Each Machine's translated code stays in small host pages (issue 26).

Unicorn's TCG reserves a 1 GiB code buffer per instance and, as QEMU's alloc_code_gen_buffer
does, asks madvise(MADV_HUGEPAGE) for it: where transparent huge pages are enabled (even in the
default "madvise" mode), the first translated block faults in and zeroes a whole 2 MiB page.
Every address space here has its own Machine, so a fork costs 2 MiB of host memory before the
guest has touched a byte: in a fork bomb, the huge page is most of what each process holds.

prctl(PR_SET_THP_DISABLE) (Linux >= 3.15, include/uapi/linux/prctl.h) turns huge pages off for
this host process, so the advice is ignored. On the samples and on Debian's bash-static running
loops and pipelines the wall time stays the same and the peak RSS drops; the fork bomb at the
256-task limit holds a fraction of the memory, and runs faster (no 2 MiB page to clear per fork).
The flag is process-wide and inherited by host children (a flame graph tool); neither uses
huge pages of its own. Where prctl is missing or refuses, nothing changes.
"""
import ctypes
import sys

PR_SET_THP_DISABLE = 41

_declined = False


def decline_huge_pages() -> None:
    """Once per host process, before the first Machine maps its code buffer."""
    global _declined
    if _declined:
        return
    _declined = True
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0)
    except (OSError, AttributeError):       # no libc symbol: keep the default
        pass

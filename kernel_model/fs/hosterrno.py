"""Host OSError -> the guest's errno.

The host's errno numbers are host-specific; the error's *name* is what Linux semantics attach to,
so the translation goes by name into kernel_model.errno (Linux numbers).
"""
import errno as host_errno

from .. import errno as E
from ..errno import GuestErrno


def guest_error(exc: OSError) -> GuestErrno:
    name = host_errno.errorcode.get(exc.errno or 0, "EIO")
    return GuestErrno(getattr(E, name, E.EIO), f"host: {exc.strerror}")

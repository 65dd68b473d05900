"""ustat (fs/statfs.c): the free blocks and inodes of a mounted file system named by its device
number, the one stat() gives as st_dev. A number that is no mount's is EINVAL (user_get_super
finds no super block), a buffer that cannot be written EFAULT.

The counts are statfs's (impls/statfs.py): f_tfree = f_bfree, f_tinode = f_ffree; the names
are empty (struct ustat's f_fname and f_fpack, which Linux zeroes). Layouts: x86-64 is an int,
padding, an unsigned long and two char[6] (32 bytes with the tail padding); i386 20 bytes.
"""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ..kinds import K
from ..registry import syscall
from .paths import fs_view
from .statfs import describe

MOUNTS = (b"/", b"/proc", b"/dev", b"/dev/shm")     # the modeled mounts (one device each)
USTAT = {"x86_64": struct.Struct("<iiQ6s6s4x"), "i386": struct.Struct("<iI6s6s")}


@syscall("ustat", args=(("dev", K.UINT), ("ubuf", K.STRUCT)))
def sys_ustat(ctx, dev, ubuf):
    dev &= 0xFFFFFFFF
    for path in MOUNTS:
        st = ctx.kernel.fs.stat(path, b"/", fs_view(ctx))
        if st.dev == dev:
            break
    else:
        raise GuestErrno(E.EINVAL)
    _type, _bsize, _blocks, bfree, _bavail, _files, ffree, *_rest = describe(ctx, st)
    layout = USTAT[ctx.abi]
    fields = (bfree, 0, ffree) if ctx.abi == "x86_64" else (bfree, ffree)
    ctx.write(ubuf, layout.pack(*fields, b"", b""))
    return 0

"""/dev/random and /dev/urandom's ioctls (drivers/char/random.c random_ioctl).

The model's pool is a seeded stream (randomstream.py) that is ready from boot, as a 6.x
kernel's is once its crng is seeded: input_pool.init_bits has reached POOL_READY_BITS (256)
and stays there (credit_init_bits caps it), so RNDGETENTCNT and /proc/sys/kernel/random/
entropy_avail both read 256 whatever a guest adds. Bytes RNDADDENTROPY writes change nothing
a reader can tell (they are mixed in with a hash), so they are read and dropped, as a write
to the device is.
"""
import struct

from .. import errno as E
from ..creds import CAP_SYS_ADMIN
from ..errno import GuestErrno

POOL_READY_BITS = 256

RNDGETENTCNT = 0x80045200          # _IOR('R', 0x00, int)
RNDADDTOENTCNT = 0x40045201        # _IOW('R', 0x01, int)
RNDADDENTROPY = 0x40085203         # _IOW('R', 0x03, int [2])
RNDZAPENTCNT = 0x5204              # _IO('R', 0x04)
RNDCLEARPOOL = 0x5206              # _IO('R', 0x06)
RNDRESEEDCRNG = 0x5207             # _IO('R', 0x07)
PRIVILEGED = (RNDADDTOENTCNT, RNDADDENTROPY, RNDZAPENTCNT, RNDCLEARPOOL, RNDRESEEDCRNG)


def random_ioctl(ctx, request: int, arg: int) -> int:
    """random_fops' and urandom_fops' unlocked_ioctl."""
    if request == RNDGETENTCNT:
        ctx.write(arg, struct.pack("<i", POOL_READY_BITS))
        return 0
    if request not in PRIVILEGED:
        raise GuestErrno(E.EINVAL)              # random_ioctl's default (RNDGETPOOL is gone)
    if not ctx.proc.creds.capable(CAP_SYS_ADMIN):
        raise GuestErrno(E.EPERM)
    if request == RNDADDTOENTCNT:
        _entropy_count(ctx, arg)
    elif request == RNDADDENTROPY:
        _add_entropy(ctx, arg)
    return 0                    # ZAPENTCNT, CLEARPOOL: no longer any effect; RESEEDCRNG: ready


def _entropy_count(ctx, arg: int) -> int:
    """get_user(ent_count, p): EFAULT, then a negative count is EINVAL."""
    count, = struct.unpack("<i", ctx.read(arg, 4))
    if count < 0:
        raise GuestErrno(E.EINVAL)
    return count


def _add_entropy(ctx, arg: int) -> None:
    """struct rand_pool_info {int entropy_count; int buf_size; u32 buf[]}: the count's checks,
    then the buffer must be readable whole (write_pool_user short: EFAULT); a negative size is
    a size_t past MAX_RW_COUNT, which no buffer is."""
    _entropy_count(ctx, arg)
    size, = struct.unpack("<i", ctx.read(arg + 4, 4))
    if size < 0:
        raise GuestErrno(E.EFAULT)
    ctx.read(arg + 8, size)

"""The AIO structures user space shares with the kernel (include/uapi/linux/aio_abi.h), the same
on i386 and x86-64: a pointer field is a __u64 (PADDED) on both ABIs."""
import struct

# struct iocb: aio_data, aio_key, aio_rw_flags, aio_lio_opcode, aio_reqprio, aio_fildes,
# aio_buf, aio_nbytes, aio_offset, aio_reserved2, aio_flags, aio_resfd (64 bytes)
IOCB = struct.Struct("<QIIHhIQQqQII")
IOCB_KEY_OFFSET = 8                   # aio_key: io_submit stores KIOCB_KEY there
KIOCB_KEY = 0                         # fs/aio.c: the key every submitted iocb gets
IO_EVENT = struct.Struct("<QQqq")     # struct io_event: data, obj, res, res2 (32 bytes)
# struct aio_ring (fs/aio.c): id, nr, head, tail, magic, compat_features, incompat_features,
# header_length, then the io_events
AIO_RING = struct.Struct("<8I")
AIO_RING_MAGIC = 0xA10A10A1
AIO_RING_COMPAT_FEATURES = 1
AIO_RING_INCOMPAT_FEATURES = 0
RING_HEAD_OFFSET, RING_TAIL_OFFSET = 8, 12

IOCB_CMD_PREAD, IOCB_CMD_PWRITE, IOCB_CMD_FSYNC, IOCB_CMD_FDSYNC = 0, 1, 2, 3
IOCB_CMD_POLL, IOCB_CMD_NOOP, IOCB_CMD_PREADV, IOCB_CMD_PWRITEV = 5, 6, 7, 8
IOCB_FLAG_RESFD, IOCB_FLAG_IOPRIO = 1, 2


class Iocb:
    """One struct iocb as io_submit copied it from the user."""
    __slots__ = ("data", "key", "rw_flags", "opcode", "reqprio", "fildes", "buf", "nbytes",
                 "offset", "reserved2", "flags", "resfd")

    def __init__(self, raw: bytes):
        for name, value in zip(self.__slots__, IOCB.unpack(raw)):
            setattr(self, name, value)

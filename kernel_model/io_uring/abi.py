"""include/uapi/linux/io_uring.h: the structures (fixed-width fields, the same on i386 and
x86-64) and constants the model uses, and the layout of struct io_rings (io_uring/io_uring.h)
as a 64-byte cache line puts it."""
import struct

IORING_MAX_ENTRIES = 32768
IORING_MAX_CQ_ENTRIES = 2 * IORING_MAX_ENTRIES
IORING_SETUP_CQSIZE, IORING_SETUP_CLAMP = 1 << 3, 1 << 4
SETUP_FLAGS = IORING_SETUP_CQSIZE | IORING_SETUP_CLAMP      # those the model takes
IORING_OFF_SQ_RING, IORING_OFF_CQ_RING, IORING_OFF_SQES = 0, 0x8000000, 0x10000000
IORING_ENTER_GETEVENTS = 1
ENTER_FLAGS = IORING_ENTER_GETEVENTS                           # the others: SQPOLL's, EXT_ARG...
# SINGLE_MMAP | NODROP | SUBMIT_STABLE | RW_CUR_POS
FEATURES = 1 | 2 | 4 | 8
IORING_REGISTER_BUFFERS, IORING_UNREGISTER_BUFFERS = 0, 1

IORING_OP_NOP, IORING_OP_READV, IORING_OP_WRITEV, IORING_OP_FSYNC = 0, 1, 2, 3
IORING_OP_READ_FIXED, IORING_OP_WRITE_FIXED, IORING_OP_READ, IORING_OP_WRITE = 4, 5, 22, 23

# struct io_uring_params: sq_entries, cq_entries, flags, sq_thread_cpu, sq_thread_idle,
# features, wq_fd, resv[3], then the two offset structures (40 bytes each)
PARAMS = struct.Struct("<10I")
# io_sqring_offsets: head tail ring_mask ring_entries flags dropped array resv1, user_addr
SQ_OFFSETS = struct.Struct("<8IQ")
# io_cqring_offsets: head tail ring_mask ring_entries overflow cqes flags resv1, user_addr
CQ_OFFSETS = struct.Struct("<8IQ")
PARAMS_SIZE = PARAMS.size + SQ_OFFSETS.size + CQ_OFFSETS.size     # 120
# struct io_uring_sqe (64 bytes): opcode, flags, ioprio, fd, off, addr, len, rw_flags,
# user_data, buf_index, personality, splice_fd_in, addr3, pad
SQE = struct.Struct("<BBHiQQIIQHHiQQ")
CQE = struct.Struct("<QiI")            # user_data, res, flags

# struct io_rings: sq {head; tail} and cq {head; tail}, each field on its own cache line,
# then the masks, entry counts, sq_dropped, sq_flags, cq_flags, cq_overflow, and the CQEs
SQ_HEAD, SQ_TAIL, CQ_HEAD, CQ_TAIL = 0, 64, 128, 192
SQ_MASK, CQ_MASK, SQ_ENTRIES, CQ_ENTRIES = 256, 260, 264, 268
SQ_DROPPED, SQ_FLAGS, CQ_FLAGS, CQ_OVERFLOW = 272, 276, 280, 284
CQES = 320
CACHE_LINE = 64

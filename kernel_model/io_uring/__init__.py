"""io_uring (io_uring/*.c): submission and completion rings shared with the process.

The model keeps Linux's shapes, so that programs that drive the rings themselves (liburing,
LTP) find what they expect: one region holding both rings' indexes and the completion
entries then the submission array (IORING_FEAT_SINGLE_MMAP, mapped at IORING_OFF_SQ_RING or
IORING_OFF_CQ_RING), and the submission entries apart (IORING_OFF_SQES). A request runs when
io_uring_enter submits it, and its completion is posted at once: there is no worker to wait
for. What the model runs: NOP, READV, WRITEV, FSYNC, READ_FIXED, WRITE_FIXED, READ, WRITE;
any other opcode completes with -EINVAL.
"""

"""The C helpers the io_uring tests' programs share: the headers, a `result` printer, the three
calls by number (io_uring_setup, io_uring_enter, io_uring_register), and the ring's submission
(`queue`), completion (`reap`) and both at once (`run`) over the rings `map_rings` maps into
`sq_tail`... `cqes` (include/uapi/linux/io_uring.h's layout, as liburing reads it)."""

RING_HELPERS = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
static struct io_uring_sqe *sqes;
static struct io_uring_cqe *cqes;
static int ring;

static void result(const char *what, long r) {
    printf("%-30s %ld %s\n", what, r < 0 ? -1L : r, r < 0 ? strerrorname_np(errno) : "");
}
static long setup(unsigned n, struct io_uring_params *p) { return syscall(__NR_io_uring_setup, n, p); }
static long enter(int fd, unsigned sub, unsigned min, unsigned flags) {
    return syscall(__NR_io_uring_enter, fd, sub, min, flags, NULL, 0);
}
static long reg(unsigned op, void *arg, unsigned n) {
    return syscall(__NR_io_uring_register, ring, op, arg, n);
}
static void queue(int op, int fd, void *addr, unsigned len, long long off, uint64_t data) {
    unsigned i = *sq_tail & *sq_mask;
    memset(&sqes[i], 0, sizeof sqes[i]);
    sqes[i].opcode = op; sqes[i].fd = fd; sqes[i].addr = (uintptr_t)addr;
    sqes[i].len = len; sqes[i].off = off; sqes[i].user_data = data;
    sq_array[i] = i;
    __atomic_store_n(sq_tail, *sq_tail + 1, __ATOMIC_RELEASE);
}
static void reap(const char *what) {
    while (*cq_head != __atomic_load_n(cq_tail, __ATOMIC_ACQUIRE)) {
        struct io_uring_cqe *c = &cqes[*cq_head & *cq_mask];
        printf("%-30s data=%llu res=%d\n", what, (unsigned long long)c->user_data, c->res);
        __atomic_store_n(cq_head, *cq_head + 1, __ATOMIC_RELEASE);
    }
}
static void map_rings(struct io_uring_params *pp, char **sqp, char **cqp) {
    struct io_uring_params p = *pp;
    size_t sqsize = p.sq_off.array + p.sq_entries * 4, cqsize = p.cq_off.cqes + p.cq_entries * 16;
    char *sq = mmap(0, sqsize, PROT_READ | PROT_WRITE, MAP_SHARED, ring, IORING_OFF_SQ_RING);
    char *cq = mmap(0, cqsize, PROT_READ | PROT_WRITE, MAP_SHARED, ring, IORING_OFF_CQ_RING);
    sqes = mmap(0, p.sq_entries * sizeof *sqes, PROT_READ | PROT_WRITE, MAP_SHARED, ring, IORING_OFF_SQES);
    sq_tail = (unsigned *)(sq + p.sq_off.tail); sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
    sq_array = (unsigned *)(sq + p.sq_off.array);
    cq_head = (unsigned *)(cq + p.cq_off.head); cq_tail = (unsigned *)(cq + p.cq_off.tail);
    cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
    cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
    *sqp = sq; *cqp = cq;
}
static void run(const char *what, int op, int fd, void *addr, unsigned len, long long off, uint64_t data) {
    queue(op, fd, addr, len, off, data);
    long r = enter(ring, 1, 1, IORING_ENTER_GETEVENTS);
    if (r != 1) result(what, r);
    reap(what);
}
"""

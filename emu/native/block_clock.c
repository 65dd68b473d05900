/* The block clock's hook (emu/block_clock.py): Unicorn calls it as every translated block
 * begins (UC_HOOK_BLOCK), with the block's guest address and length in bytes. It adds the
 * block's instructions to `executed` and, once `executed` has reached `deadline`, stops the
 * run (uc_emu_stop) before the block runs: Unicorn emits the block hook's call ahead of the
 * block's exit-request check (translator.c), so the stop lands on this block's first
 * instruction, and the next run begins with it.
 *
 * With a tick handler in C (`take`: tick_capture.c, the profiler's samples), a tick it takes
 * does not stop the run: the deadline moves on by `interval` and the block runs. One it does
 * not take stops the run as above, for the kernel to deliver; one it takes and asks to stop
 * after (`paused`) stops the run there too, with no tick left to deliver.
 *
 * Why C: a hook in Python costs more than many a block itself; this one costs little beside it
 * (where Unicorn's own per-instruction counting hook, the only other way to stop after N
 * instructions, makes the run several times slower: docs/unicorn.md, bench/profile.py).
 *
 * The instructions of a block are learned once per (address, length) by decoding its bytes
 * with capstone (cs_disasm_iter: no Python on the way) and kept in an
 * open-addressing table; the table is emptied when code changes (block_clock_clear). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int (*stop_fn)(void *uc);
typedef int (*take_fn)(void *uc, uint64_t address, void *capture, int64_t executed);
typedef int (*mem_read_fn)(void *uc, uint64_t address, void *bytes, uint64_t size);
typedef int (*disasm_iter_fn)(size_t handle, const uint8_t **code, size_t *size,
                              uint64_t *address, void *insn);

#define RECENT 256

struct entry {
    uint64_t address;
    uint32_t size;          /* 0: a free slot (Unicorn never reports an empty block) */
    uint32_t insns;
};

struct block_clock {
    /* direct-mapped, in front of `table`: no hash to compute. First in the struct, so that
     * an entry's address is the hook's only pointer (it compares through it and stores it
     * as `last`, where at an offset it took three instructions more a block). */
    struct entry recent[RECENT];
    int64_t executed;       /* instructions of the blocks begun */
    int64_t deadline;       /* stop at the first block that begins at or after it; < 0: never */
    int64_t stopped_at;     /* the block a stop landed on */
    int32_t fired;          /* the deadline stopped the run */
    int32_t failed;         /* a block's bytes could not be read (counted as 1 instruction) */
    stop_fn stop;           /* uc_emu_stop */
    mem_read_fn mem_read;   /* uc_mem_read */
    disasm_iter_fn disasm_iter;   /* capstone's cs_disasm_iter */
    size_t capstone;        /* a capstone handle in the Machine's mode (csh) */
    void *insn;             /* cs_malloc(capstone): the iterator's instruction */
    struct entry *table;
    uint64_t mask;          /* capacity - 1, capacity a power of two */
    uint64_t used;
    take_fn take;           /* the tick's handler in C (tick_capture.c); 0: none */
    void *capture;          /* its state */
    int64_t interval;       /* the next tick after one `take` took: deadline + interval */
    int32_t paused;         /* `take` took the tick and asked for the run to stop */
    /* The block begun last, for an exact count inside it (emu/lazy_count.py): its entry in
     * `recent` (where it starts, its length and instructions), which no other block can
     * take before the next block begins; 0 before the first. One store a block, where its
     * three fields and a count of blocks took four (issue 31). */
    struct entry *last;
};

static uint64_t slot_of(uint64_t address, uint32_t size, uint64_t mask)
{
    uint64_t h = (address ^ ((uint64_t)size << 48)) * 0x9e3779b97f4a7c15ull;
    return (h >> 17) & mask;
}

static int grow(struct block_clock *c)
{
    uint64_t capacity = c->table ? (c->mask + 1) * 2 : 1024;
    struct entry *table = calloc(capacity, sizeof *table);
    if (!table)
        return 0;
    for (uint64_t i = 0; c->table && i <= c->mask; i++) {
        struct entry *e = &c->table[i];
        if (e->size) {
            uint64_t j = slot_of(e->address, e->size, capacity - 1);
            while (table[j].size)
                j = (j + 1) & (capacity - 1);
            table[j] = *e;
        }
    }
    free(c->table);
    c->table = table;
    c->mask = capacity - 1;
    return 1;
}

/* Decode [address, address + size): bytes capstone cannot decode end the block with an
 * instruction that raises #UD, counted as one. */
static uint32_t decode(struct block_clock *c, void *uc, uint64_t address, uint32_t size)
{
    uint8_t small[4096];
    uint8_t *bytes = size <= sizeof small ? small : malloc(size);
    uint32_t insns = 0;
    if (!bytes || c->mem_read(uc, address, bytes, size) != 0) {
        c->failed = 1;
        insns = 1;
    } else {
        const uint8_t *code = bytes;
        size_t left = size;
        uint64_t pc = address;
        while (left && c->disasm_iter(c->capstone, &code, &left, &pc, c->insn))
            insns++;
        insns += left != 0;
    }
    if (bytes != small)
        free(bytes);
    return insns;
}

static uint32_t insns_of(struct block_clock *c, void *uc, uint64_t address, uint32_t size)
{
    /* Most blocks begun are the few of a hot loop: a direct-mapped look first, which spares
     * them the hashed table's multiply and probe. */
    struct entry *r = &c->recent[(address ^ (address >> 8)) & (RECENT - 1)];
    if (r->address == address && r->size == size)
        return r->insns;
    if (c->table) {
        for (uint64_t i = slot_of(address, size, c->mask);; i = (i + 1) & c->mask) {
            struct entry *e = &c->table[i];
            if (!e->size)
                break;
            if (e->address == address && e->size == size) {
                *r = *e;
                return e->insns;
            }
        }
    }
    uint32_t insns = decode(c, uc, address, size);
    if ((!c->table || 2 * (c->used + 1) > c->mask + 1) && !grow(c))
        return insns;                   /* no memory for the table: decode again next time */
    uint64_t i = slot_of(address, size, c->mask);
    while (c->table[i].size)
        i = (i + 1) & c->mask;
    c->table[i].address = address;
    c->table[i].size = size;
    c->table[i].insns = insns;
    c->used++;
    return insns;
}

/* A block not in `recent`: counted from the table (or decoded), and made the block begun
 * last through its `recent` entry, which takes it. */
static void count_block(struct block_clock *c, void *uc, uint64_t address, uint32_t size)
{
    uint32_t insns = size ? insns_of(c, uc, address, size) : 0;
    struct entry *r = &c->recent[(address ^ (address >> 8)) & (RECENT - 1)];
    r->address = address;
    r->size = size;
    r->insns = insns;
    c->executed += insns;
    c->last = r;
}

static void on_block_slow(void *uc, uint64_t address, uint32_t size, void *user);

void block_clock_on_block(void *uc, uint64_t address, uint32_t size, void *user)
{
    /* The path of nearly every block, in the hook itself: the look in `recent`, an add and
     * a store, with no call and no frame. Behind a call to insns_of, whose slow path inlines
     * decode's 4 KiB buffer, fib's emulation under trace took 0.29 s instead of 0.22 s
     * (fib 32; `run`: 0.18 s). (A free slot matches only an empty block at 0: it counts
     * the 0 instructions count_block would.)
     * Two things keep it short (issue 31: ~24 host instructions a block, the most of what
     * `trace` costs beyond `run` on code no probe touches): "no deadline, or before it" is
     * one unsigned compare (`executed` is never negative, and a deadline of -1 is the
     * largest unsigned value), and the slow path takes the hook's own arguments in the same
     * registers, so the hot path moves none of them for it. */
    struct block_clock *c = user;
    struct entry *r = &c->recent[(address ^ (address >> 8)) & (RECENT - 1)];
    if (r->address == address && r->size == size
            && (uint64_t)c->executed < (uint64_t)c->deadline) {
        c->executed += r->insns;
        c->last = r;
        return;
    }
    on_block_slow(uc, address, size, user);
}

__attribute__((noinline))
static void on_block_slow(void *uc, uint64_t address, uint32_t size, void *user)
{
    struct block_clock *c = user;
    if (c->deadline < 0) {
        count_block(c, uc, address, size);
        return;
    }
    if (c->executed >= c->deadline && c->take && !c->fired) {
        int taken = c->take(uc, address, c->capture, c->executed);
        if (taken) {
            do
                c->deadline += c->interval;
            while (c->deadline <= c->executed);
            if (taken == 2) {       /* stop before this block runs: it is counted next run */
                c->paused = 1;
                c->stop(uc);
                return;
            }
        }
    }
    if (c->deadline >= 0 && c->executed >= c->deadline) {
        if (!c->fired) {
            c->fired = 1;
            c->stopped_at = (int64_t)address;
            c->stop(uc);
        }
        return;
    }
    count_block(c, uc, address, size);
}

/* Nothing: Unicorn's block hook alone (its helper call before every block, the globals it
 * syncs, its walk of the hook list), the floor under the clock that bench/trace_cost.py
 * measures beside `run`. */
void block_clock_none(void *uc, uint64_t address, uint32_t size, void *user)
{
    (void)uc, (void)address, (void)size, (void)user;
}

void block_clock_clear(struct block_clock *c)
{
    memset(c->recent, 0, sizeof c->recent);
    free(c->table);
    c->table = 0;
    c->mask = 0;
    c->used = 0;
}

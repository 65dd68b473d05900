/* The profiling timer's tick, taken in C (emu/tick_capture.py): the top half of the timer
 * interrupt, as perf's NMI handler is to perf_events. The block clock (block_clock.c) calls
 * tick_capture_take when a tick falls due; it reads the interrupted thread's PC and stack
 * pointer and, in stack mode, walks its stack with the unwind rules the profiler taught it,
 * appends the sample to a buffer, and says whether it took the tick. A tick it cannot take
 * whole (a return address it has no rule for, a word it cannot read, a full buffer) is left
 * to the kernel's full path: the clock stops the run there and the tick goes through the IDT
 * with the live registers, as before — so a taken tick's stack is exactly the one the Python
 * unwinder (instrumenter/profiler/unwind.py) would have found, or no tick is taken at all.
 *
 * A rule is what unwind.py calls the plain form of a CFI row: CFA = register + offset, and the
 * return address and saved registers at CFA + n; or, for gcc's realigned i386 frames (main's
 * DRAP), CFA = *(register + offset) and registers saved at register + n; or "outermost" (the
 * walk ends there); or
 * "zero frame": code without CFI where a frame pointer of 0 ends the walk; or a signal
 * frame (SIGNAL_FRAME: a realigned rule whose register is the SP, reading the registers the
 * kernel saved), after which the PC is an interrupted one again and the SP may be anywhere
 * (sigaltstack). Rules are keyed by the address the walk looks up: the PC for an interrupted
 * frame (the tick's, or the one a signal frame saved), a return address - 1 for the others
 * (the call before it).
 *
 * In PC mode a capture may keep a histogram instead of a record a tick (`histogram`: the
 * profiler's report counts samples per PC and needs no tick's time or SP): a tick adds one to
 * its PC's tally, found through an open-addressing index, and the drain reads one tally per
 * distinct PC, in the order of each PC's first tick, with that tick's `executed` (what names a
 * sample: the image map in force then, which the kernel does not change before the drain).
 * The table grows up to `tally_limit` tallies; a tick whose PC finds no room gets its record
 * in the buffer as without a histogram, so no tick is lost. (A BPF profiler counts so too: its
 * samples per IP in a map in the kernel, bpftrace's `@[...] = count()`, where perf reads a
 * record a sample.)
 *
 * Registers are numbered by their place in `reg_ids` (0: the IP, 1: the SP, then the others
 * the rules name); `keep` is the mask of those a callee preserves (psABI), carried into the
 * caller's frame unless a rule says where they were saved. */
#include <stdint.h>
#include <string.h>
#include <stdlib.h>

#define MAX_REGS 16
#define MAX_SAVED 8
#define MAX_DEPTH 256
#define PAGE 4096
#define PAGES 8

typedef int (*reg_read_fn)(void *uc, int regid, void *value);
typedef int (*mem_read_fn)(void *uc, uint64_t address, void *bytes, uint64_t size);

enum { RULE_FREE, RULE_PLAIN, RULE_OUTERMOST, RULE_ZERO_FRAME };
#define RETURNS_ONLY 1          /* the rule holds for return addresses, not an interrupted PC */
#define CFA_DEREF 2             /* CFA = the word at register + offset (a realigned stack) */
#define FIRST_ONLY 4            /* the rule holds for an interrupted PC, not a return address */
#define SIGNAL_FRAME 8          /* the caller's PC is an interrupted one (the kernel saved it) */

struct rule {
    uint64_t lookup;
    int8_t kind;
    int8_t cfa_reg;             /* OUTERMOST: needs it known (-1: nothing); ZERO_FRAME: the
                                 * frame pointer, whose 0 marks the deepest frame (psABI) */
    int8_t nsaved;
    int8_t flags;
    uint32_t lost;              /* registers the caller's frame does not have */
    int64_t cfa_offset;
    int8_t saved_reg[MAX_SAVED];
    int32_t saved_offset[MAX_SAVED];
    int8_t saved_base[MAX_SAVED];   /* -1: the offset is from the CFA; else from that register */
};

struct tick_capture {
    reg_read_fn reg_read;       /* uc_reg_read */
    mem_read_fn mem_read;       /* uc_mem_read */
    int32_t nregs;
    int32_t reg_ids[MAX_REGS];
    uint32_t keep;
    int32_t word;               /* 4 or 8 */
    int32_t stack;              /* 0: the PC only; 1: the whole stack */
    uint64_t *buffer;           /* records: executed, sp, n | shared << 32, frames[n - shared] */
    uint64_t capacity;          /* words */
    uint64_t used;              /* words */
    uint64_t records;
    uint64_t stop_after;        /* records after which the run stops (0: never) */
    int32_t declined;           /* why the last tick was left to the kernel (tick_capture.py) */
    struct rule *rules;
    uint64_t mask;              /* capacity - 1 of `rules` */
    uint64_t nrules;
    /* The stack of the record buffered last (while `used` is not 0): the next record keeps
     * only the frames inside the outermost ones it shares with it (see tick_capture_take). */
    uint64_t last_n;
    uint64_t last_frames[MAX_DEPTH];
    /* PC mode's histogram (see above); `tallies` in the order of their first ticks. */
    int32_t histogram;
    struct tally *tallies;
    uint64_t ntallies;
    uint64_t tally_capacity;    /* tallies allocated */
    uint64_t tally_limit;       /* the most tallies a drain holds */
    uint32_t *tally_index;      /* slot -> tally + 1, 0: free; more than twice the tallies */
    uint64_t tally_mask;        /* the index's slots - 1 */
};

struct tally {
    uint64_t pc;
    uint64_t count;
    int64_t first;              /* the `executed` of the PC's first tick since the drain */
};

enum { TAKEN, NO_RULE, NO_REGISTER, NO_MEMORY, NO_ROOM, TOO_DEEP, NO_GROWTH, NO_PC };

struct pages {
    uint64_t at[PAGES];
    int n;
    uint8_t bytes[PAGES][PAGE];
};

static uint64_t slot_of(uint64_t lookup, uint64_t mask)
{
    return ((lookup * 0x9e3779b97f4a7c15ull) >> 20) & mask;
}

static struct rule *find(struct tick_capture *c, uint64_t lookup)
{
    if (!c->rules)
        return 0;
    for (uint64_t i = slot_of(lookup, c->mask);; i = (i + 1) & c->mask) {
        struct rule *r = &c->rules[i];
        if (r->kind == RULE_FREE)
            return 0;
        if (r->lookup == lookup)
            return r;
    }
}

static int grow(struct tick_capture *c)
{
    uint64_t capacity = c->rules ? (c->mask + 1) * 2 : 1024;
    struct rule *rules = calloc(capacity, sizeof *rules);
    if (!rules)
        return 0;
    for (uint64_t i = 0; c->rules && i <= c->mask; i++) {
        if (c->rules[i].kind != RULE_FREE) {
            uint64_t j = slot_of(c->rules[i].lookup, capacity - 1);
            while (rules[j].kind != RULE_FREE)
                j = (j + 1) & (capacity - 1);
            rules[j] = c->rules[i];
        }
    }
    free(c->rules);
    c->rules = rules;
    c->mask = capacity - 1;
    return 1;
}

/* Learn (or replace) the rule at `rule->lookup`; 0 when there is no memory for it. */
int tick_capture_teach(struct tick_capture *c, const struct rule *rule)
{
    struct rule *known = find(c, rule->lookup);
    if (known) {
        *known = *rule;
        return 1;
    }
    if ((!c->rules || 2 * (c->nrules + 1) > c->mask + 1) && !grow(c))
        return 0;
    uint64_t i = slot_of(rule->lookup, c->mask);
    while (c->rules[i].kind != RULE_FREE)
        i = (i + 1) & c->mask;
    c->rules[i] = *rule;
    c->nrules++;
    return 1;
}

void tick_capture_forget(struct tick_capture *c)
{
    free(c->rules);
    c->rules = 0;
    c->mask = 0;
    c->nrules = 0;
}

/* A word of guest memory, through a few cached pages (a stack walk reads a page or two). */
static int read_word(struct tick_capture *c, void *uc, struct pages *p, uint64_t address,
                     uint64_t *value)
{
    uint64_t page = address & ~(uint64_t)(PAGE - 1);
    uint64_t offset = address - page;
    if (offset + c->word > PAGE) {          /* across pages: read it directly */
        *value = 0;
        return c->mem_read(uc, address, value, c->word) == 0;
    }
    int k;
    for (k = 0; k < p->n && p->at[k] != page; k++)
        ;
    if (k == p->n) {
        if (p->n == PAGES || c->mem_read(uc, page, p->bytes[p->n], PAGE) != 0) {
            *value = 0;
            return c->mem_read(uc, address, value, c->word) == 0;
        }
        p->at[p->n++] = page;
    }
    *value = 0;
    memcpy(value, p->bytes[k] + offset, c->word);
    return 1;
}

/* One frame up with `rule`; the caller's registers replace `regs`/`valid`. */
static int step(struct tick_capture *c, void *uc, struct pages *p, const struct rule *r,
                uint64_t *regs, uint32_t *valid, uint64_t mask)
{
    if (!(*valid & (1u << r->cfa_reg)))
        return NO_REGISTER;
    uint64_t cfa = (regs[r->cfa_reg] + (uint64_t)r->cfa_offset) & mask;
    if ((r->flags & CFA_DEREF) && !read_word(c, uc, p, cfa, &cfa))
        return NO_MEMORY;
    /* The saved values are all read from this frame's registers before any becomes the
     * caller's, which then replace them in place (a walk step is per frame of every tick). */
    uint64_t saved[MAX_SAVED];
    uint32_t has = (*valid & c->keep) | 2u;
    for (int i = 0; i < r->nsaved; i++) {
        uint64_t base = cfa;
        if (r->saved_base[i] >= 0) {
            if (!(*valid & (1u << r->saved_base[i])))
                return NO_REGISTER;
            base = regs[r->saved_base[i]];
        }
        if (!read_word(c, uc, p, (base + (uint64_t)(int64_t)r->saved_offset[i]) & mask, &saved[i]))
            return NO_MEMORY;
        has |= 1u << r->saved_reg[i];
    }
    has &= ~r->lost;
    if (!(has & 1u))
        return NO_REGISTER;                 /* (a plain rule always saves the return address) */
    regs[1] = cfa;
    for (int i = 0; i < r->nsaved; i++)
        regs[r->saved_reg[i]] = saved[i];
    *valid = has;
    return TAKEN;
}

static int walk(struct tick_capture *c, void *uc, uint64_t *regs, uint64_t *frames, uint64_t *n)
{
    struct pages p;
    uint32_t valid = c->nregs >= 32 ? ~0u : (1u << c->nregs) - 1;
    uint64_t mask = c->word == 8 ? ~0ull : 0xffffffffull;
    int interrupted = 1;        /* the PC is where the thread was stopped, not a return address */
    p.n = 0;
    *n = 0;
    for (;;) {
        uint64_t pc = regs[0];
        if (pc == 0)
            return *n ? TAKEN : NO_PC;
        if (*n == MAX_DEPTH)
            return TOO_DEEP;
        frames[(*n)++] = pc;
        struct rule *r = find(c, interrupted ? pc : pc - 1);
        if (!r || (interrupted && (r->flags & RETURNS_ONLY)) || (!interrupted && (r->flags & FIRST_ONLY)))
            return NO_RULE;
        if (r->kind == RULE_OUTERMOST)
            return r->cfa_reg < 0 || (valid & (1u << r->cfa_reg)) ? TAKEN : NO_REGISTER;
        if (r->kind == RULE_ZERO_FRAME)
            return (valid & (1u << r->cfa_reg)) && regs[r->cfa_reg] == 0 ? TAKEN : NO_RULE;
        uint64_t old_sp = regs[1];
        int result = step(c, uc, &p, r, regs, &valid, mask);
        if (result != TAKEN)
            return result;
        interrupted = (r->flags & SIGNAL_FRAME) != 0;
        if (!interrupted && regs[0] && regs[1] <= old_sp)
            return NO_GROWTH;
    }
}

/* How many of the outermost frames of `frames` are those of the stack buffered last: ticks
 * close in time share the frames from the thread's start down to the function both are in
 * (most of them in a deep recursion: fib), which the record
 * then leaves out and the drain takes from the record before. Never the PC of either: an
 * interrupted PC is named as itself, a return address by the call before it (symbolize.py),
 * so an address shared as the one would not be the same frame as the other. */
static uint64_t shared_with_last(const struct tick_capture *c, const uint64_t *frames, uint64_t n)
{
    if (!c->used || !c->last_n)
        return 0;                       /* the buffer was drained: no record before this one */
    uint64_t most = (n < c->last_n ? n : c->last_n) - 1, shared = 0;
    while (shared < most && frames[n - 1 - shared] == c->last_frames[c->last_n - 1 - shared])
        shared++;
    return shared;
}

/* tick_capture_take's answer for a tick it took (`records` counts the tallied ones too: the
 * tool's batch is of ticks). */
static int taken(struct tick_capture *c)
{
    c->records++;
    c->declined = TAKEN;
    return c->stop_after && c->records >= c->stop_after ? 2 : 1;
}

/* The tally of `pc`, or where it goes in the index (its slot holds 0). */
static uint32_t *tally_slot(const struct tick_capture *c, uint64_t pc)
{
    uint64_t mask = c->tally_mask;
    for (uint64_t i = slot_of(pc, mask);; i = (i + 1) & mask) {
        uint32_t *slot = &c->tally_index[i];
        if (!*slot || c->tallies[*slot - 1].pc == pc)
            return slot;
    }
}

/* Twice the tallies (256 at first), up to `tally_limit`: 0 when there is no more room. */
static int grow_tallies(struct tick_capture *c)
{
    uint64_t capacity = c->tally_capacity ? 2 * c->tally_capacity : 256;
    if (capacity > c->tally_limit)
        capacity = c->tally_limit;
    if (capacity <= c->tally_capacity || capacity >= UINT32_MAX)
        return 0;
    uint64_t slots = 1;
    while (slots < 2 * capacity + 1)    /* (so that a probe always meets a free slot) */
        slots *= 2;
    struct tally *tallies = realloc(c->tallies, capacity * sizeof *tallies);
    if (!tallies)
        return 0;
    c->tallies = tallies;
    uint32_t *index = calloc(slots, sizeof *index);
    if (!index)
        return 0;                       /* (the tallies stay, in the larger block) */
    free(c->tally_index);
    c->tally_index = index;
    c->tally_mask = slots - 1;
    c->tally_capacity = capacity;
    for (uint64_t i = 0; i < c->ntallies; i++)
        *tally_slot(c, tallies[i].pc) = (uint32_t)(i + 1);
    return 1;
}

/* Count a tick at `pc` in the histogram: 0 when a new PC finds no room (it needs a record). */
static int tally(struct tick_capture *c, uint64_t pc, int64_t executed)
{
    uint32_t *slot = c->tally_index ? tally_slot(c, pc) : 0;
    if (slot && *slot) {
        c->tallies[*slot - 1].count++;
        return 1;
    }
    if (c->ntallies == c->tally_capacity) {
        if (!grow_tallies(c))
            return 0;
        slot = tally_slot(c, pc);
    }
    struct tally *t = &c->tallies[c->ntallies++];
    t->pc = pc;
    t->count = 1;
    t->first = executed;
    *slot = (uint32_t)c->ntallies;
    return 1;
}

/* The drain has read the tallies: the histogram is empty. */
void tick_capture_clear_tallies(struct tick_capture *c)
{
    if (c->ntallies)
        memset(c->tally_index, 0, (c->tally_mask + 1) * sizeof *c->tally_index);
    c->ntallies = 0;
}

/* The capture's C memory (its rules and its histogram): the capture is gone. */
void tick_capture_release(struct tick_capture *c)
{
    tick_capture_forget(c);
    free(c->tallies);
    free(c->tally_index);
    c->tallies = 0;
    c->tally_index = 0;
    c->ntallies = c->tally_capacity = c->tally_mask = 0;
}

/* The tick at the block `address` begins, after `executed` instructions: 1 when it was taken
 * (a record is in the buffer), 2 when it was and the run must stop now (`stop_after` records
 * are buffered: the tool asked to see them before the guest goes on), 0 when the kernel must
 * deliver it (the reason in `declined`). */
int tick_capture_take(void *uc, uint64_t address, void *user, int64_t executed)
{
    struct tick_capture *c = user;
    if (c->histogram && tally(c, address, executed))
        return taken(c);
    uint64_t regs[MAX_REGS] = {0};
    uint64_t frames[MAX_DEPTH];
    uint64_t n = 1;
    /* PC mode records the SP alone: the other registers only serve a walk (each read is a
     * call into Unicorn, several a tick). */
    int nregs = c->stack ? c->nregs : 2;
    for (int i = 1; i < nregs; i++)
        c->reg_read(uc, c->reg_ids[i], &regs[i]);
    if (c->word == 4)
        for (int i = 1; i < nregs; i++)
            regs[i] &= 0xffffffffull;
    regs[0] = address;
    frames[0] = address;
    uint64_t sp = regs[1];              /* the record's SP is the tick's (the walk moves regs) */
    if (c->stack) {
        int result = walk(c, uc, regs, frames, &n);
        if (result != TAKEN) {
            c->declined = result;
            return 0;
        }
    }
    uint64_t shared = shared_with_last(c, frames, n);
    if (c->used + 3 + n - shared > c->capacity) {
        c->declined = NO_ROOM;
        return 0;
    }
    uint64_t *record = c->buffer + c->used;
    record[0] = (uint64_t)executed;
    record[1] = sp;
    record[2] = n | shared << 32;       /* (n <= MAX_DEPTH) */
    memcpy(record + 3, frames, (n - shared) * sizeof *frames);
    c->used += 3 + n - shared;
    memcpy(c->last_frames, frames, n * sizeof *frames);
    c->last_n = n;
    return taken(c);
}

/* The Machine's interrupt hook in C (emu/int3_sites.py): the int3 of a known probe site is
 * taken here, every other interrupt goes on to the Python hook (`fallback`, the Machine's own).
 *
 * For vector 3 raised in ring 3 (CS's RPL, Intel SDM Vol. 3A 6.12.1.1: the redirect's
 * precondition, kernel_model/cpu/traps.py) while the kernel says the C path may take hits
 * (`armed`), the int3's address (the saved EIP/RIP minus its one byte) is looked up in an
 * open-addressing table of sites. A site found has its `hit` called: one Python function,
 * the site's hooks (the probe's record and action), which gives the IP to resume at (the
 * trampoline), or 0 when it failed (its exception is kept on the Uc and the run stops, as
 * the Python hook does). The IP goes straight into the CPU state: cpu_exec looks for the next
 * block there as soon as this hook returns (emu/cpu_state.py). Anything else, a site not
 * found or the C path not armed, is the Python hook's, exactly as without this one.
 *
 * Why C: the Python interrupt hook, the trap dispatcher's redirect and the door's stand-in
 * were three Python frames and a dozen look-ups a hit before the probe's own work (issue 31:
 * an int3 probe with a Python action at 440-490 k hits/s against a 3.2-4.0 M/s floor). */
#include <stdint.h>
#include <stdlib.h>

typedef void (*intr_fn)(void *uc, uint32_t intno, void *user);
typedef uint64_t (*hit_fn)(void);

/* The Machine's instruction clock, as emu/clock_parts.py publishes it: the sum
 * Machine.read_clock computes, here before each hit into hit_ts (a record's ts), -1 after. */
struct clock_parts {
    int64_t *total;         /* InstructionClock.cell: finished slices (0: no clock, ts 0) */
    int64_t *executed;      /* the block clock's count (lazy_count.py) */
    uint64_t *insns;        /* Unicorn's count of this run (0: not located) */
    int64_t offset;         /* the block count's offset */
    int32_t running;        /* a run is under way: the live count is added */
    int32_t blocks;         /* the live count is the block count's, else Unicorn's */
    int64_t hit_ts;         /* the clock at the hit under way, -1: ask read_clock */
};

/* Machine.read_clock's value, or -1 when a part is not readable here. */
static int64_t clock_now(const struct clock_parts *c)
{
    if (!c->total)
        return 0;
    if (!c->running)
        return *c->total;
    if (c->blocks)
        return *c->total + *c->executed - c->offset;
    if (c->insns)
        return *c->total + (int64_t)*c->insns;
    return -1;
}

struct site {
    uint64_t address;       /* the int3's address */
    hit_fn hit;             /* 0: a free slot */
    uint64_t *count;        /* the tool's count of hits taken (0: none), bumped when hit() gave
                               an IP: a Python dict increment a hit less (issue 31) */
};

struct int3_sites {
    uint64_t *eip;          /* the CPU state's EIP/RIP (emu/cpu_state.py) */
    uint32_t *cs;           /* its CS selector */
    uint64_t pc_mask;       /* EIP may hold bits above 31 in 32-bit mode (emu/machine.py) */
    int32_t armed;          /* the kernel lets this path take hits (int3_sites.py says when) */
    int32_t kernel_entry;   /* the Machine has an on_kernel_entry: it must see every event */
    intr_fn fallback;       /* the Machine's Python interrupt hook */
    uint64_t taken;         /* hits taken here */
    struct site *table;
    uint64_t mask;          /* capacity - 1, a power of two; 0 with no table */
    uint64_t used;
    struct clock_parts *clock;  /* the Machine's (int3_sites.py) */
};

static uint64_t slot_of(uint64_t address, uint64_t mask)
{
    return ((address * 0x9e3779b97f4a7c15ull) >> 20) & mask;
}

void int3_sites_on_interrupt(void *uc, uint32_t intno, void *user)
{
    struct int3_sites *s = user;
    if (intno == 3 && s->armed && !s->kernel_entry && s->table && (*s->cs & 3) == 3) {
        uint64_t address = (*s->eip & s->pc_mask) - 1;
        for (uint64_t i = slot_of(address, s->mask);; i = (i + 1) & s->mask) {
            struct site *e = &s->table[i];
            if (!e->hit)
                break;
            if (e->address == address) {
                uint64_t ip;
                s->taken++;
                s->clock->hit_ts = clock_now(s->clock);
                ip = e->hit();
                s->clock->hit_ts = -1;
                if (ip) {
                    *s->eip = ip;
                    if (e->count)
                        ++*e->count;
                }
                return;
            }
        }
    }
    s->fallback(uc, intno, 0);
}

static int insert(struct site *table, uint64_t mask, struct site site)
{
    uint64_t i = slot_of(site.address, mask);
    while (table[i].hit && table[i].address != site.address)
        i = (i + 1) & mask;
    int added = !table[i].hit;
    table[i] = site;
    return added;
}

static int grow(struct int3_sites *s)
{
    uint64_t capacity = s->table ? (s->mask + 1) * 2 : 64;
    struct site *table = calloc(capacity, sizeof *table);
    if (!table)
        return 0;
    for (uint64_t i = 0; s->table && i <= s->mask; i++)
        if (s->table[i].hit)
            insert(table, capacity - 1, s->table[i]);
    free(s->table);
    s->table = table;
    s->mask = capacity - 1;
    return 1;
}

/* Add or replace the site at `address`, whose hits taken are counted in `*count` (0: not
 * counted here); 0 when no memory (the Python path keeps it). */
int int3_sites_set(struct int3_sites *s, uint64_t address, hit_fn hit, uint64_t *count)
{
    if ((!s->table || 2 * (s->used + 1) > s->mask + 1) && !grow(s))
        return 0;
    struct site site = {address, hit, count};
    s->used += insert(s->table, s->mask, site);
    return 1;
}

/* Remove the site at `address` (backward-shift deletion: no tombstones on the hit path). */
void int3_sites_clear(struct int3_sites *s, uint64_t address)
{
    if (!s->table)
        return;
    uint64_t i = slot_of(address, s->mask);
    while (s->table[i].address != address || !s->table[i].hit) {
        if (!s->table[i].hit)
            return;
        i = (i + 1) & s->mask;
    }
    for (uint64_t j = (i + 1) & s->mask; s->table[j].hit; j = (j + 1) & s->mask) {
        uint64_t home = slot_of(s->table[j].address, s->mask);
        /* the entry at j may move to the hole at i if its home is not in (i, j] */
        if (((j - home) & s->mask) >= ((j - i) & s->mask)) {
            s->table[i] = s->table[j];
            i = j;
        }
    }
    s->table[i].hit = 0;
    s->table[i].address = 0;
    s->table[i].count = 0;
    s->used--;
}

/* Whether the table holds `address` (the tests' view of it). */
int int3_sites_holds(struct int3_sites *s, uint64_t address)
{
    for (uint64_t i = slot_of(address, s->mask); s->table && s->table[i].hit; i = (i + 1) & s->mask)
        if (s->table[i].address == address)
            return 1;
    return 0;
}

void int3_sites_free(struct int3_sites *s)
{
    free(s->table);
    s->table = 0;
    s->mask = 0;
    s->used = 0;
}

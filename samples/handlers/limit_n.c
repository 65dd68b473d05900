/*
 * limit_n.c -- a user handler for uprobe:fib:fib: fib's first argument is at
 * most LIMIT after it, so `fib 10` prints "fib(10) = 5".  It also counts the
 * calls that it changed, in its own .bss and in the first word of scratch
 * (a relocation into the object's writable data).  The limit is read through
 * a pointer in the object's data: an absolute relocation in the .o
 * (R_X86_64_64 / R_386_32), a RELATIVE one in the shared object.
 */
#include "trapline_regs.h"

#define LIMIT 5

static unsigned long long changed;
static volatile unsigned long limits[2] = { LIMIT, LIMIT };
static volatile unsigned long *volatile limit = limits;

TRAPLINE_HANDLER void limit_n(struct trapline_regs *regs, unsigned long long *scratch)
{
    if (TRAPLINE_ARG0(regs) > limit[changed & 1]) {
        TRAPLINE_ARG0(regs) = limit[changed & 1];
        changed++;
    }
    scratch[0] = changed;
}

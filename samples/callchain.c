/*
 * callchain.c -- a known call structure that keeps its own shadow stack (issue 18).
 *
 * Exercises: stack unwinding (frame pointers and .eh_frame CFI) and the profiler's
 * hot-spot walk-up.  Every tracked function stores its own address on the global
 * shadow_stack at entry and removes it before it returns, so a tool that stops the
 * program at any instruction can compare the stack it unwinds with the stack the
 * program says it has: the frames suspended in a call are always on the shadow stack;
 * the innermost function may be between its entry and its push, or its pop and its
 * return.
 *
 * Structure (all counts fixed, so a walk-up's invocation counts can be checked):
 *   main -> outer (ROUNDS) -> middle (3 each) -> inner (4 each) -> leaf (hot, 1 each)
 *   main -> spiral(round % 5) -> spiral(n-1) ... spiral(0) -> leaf   (recursion)
 * leaf runs LEAF_STEPS rounds of a 32-bit LCG (both arches agree), so it is the hot spot,
 * reached through three levels of callers.
 *
 * Usage: callchain [ROUNDS]   (ROUNDS defaults to 20)
 * Output: "callchain(ROUNDS) = XXXXXXXX leaf=L inner=I middle=M outer=O spiral=S\n".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define SHADOW_MAX 64
#define LEAF_STEPS 100

volatile uintptr_t shadow_stack[SHADOW_MAX];
volatile unsigned shadow_depth;
unsigned long calls_leaf, calls_inner, calls_middle, calls_outer, calls_spiral;

#define ENTER(f) (shadow_stack[shadow_depth] = (uintptr_t)&(f), shadow_depth = shadow_depth + 1)
#define LEAVE() (shadow_depth = shadow_depth - 1)

__attribute__((noinline, disable_tail_calls))
uint32_t leaf(uint32_t x)
{
    ENTER(leaf);
    calls_leaf++;
    for (int i = 0; i < LEAF_STEPS; i++)
        x = x * 1664525u + 1013904223u;
    LEAVE();
    return x;
}

__attribute__((noinline, disable_tail_calls))
uint32_t inner(uint32_t x)
{
    ENTER(inner);
    calls_inner++;
    for (uint32_t i = 0; i < 4; i++)
        x = leaf(x + i);
    LEAVE();
    return x;
}

__attribute__((noinline, disable_tail_calls))
uint32_t middle(uint32_t x)
{
    ENTER(middle);
    calls_middle++;
    for (uint32_t i = 0; i < 3; i++)
        x = inner(x ^ i);
    LEAVE();
    return x;
}

__attribute__((noinline, disable_tail_calls))
uint32_t outer(uint32_t x)
{
    ENTER(outer);
    calls_outer++;
    x = middle(x);
    LEAVE();
    return x;
}

__attribute__((noinline, disable_tail_calls))
uint32_t spiral(uint32_t n, uint32_t x)
{
    ENTER(spiral);
    calls_spiral++;
    x = n == 0 ? leaf(x) : spiral(n - 1, x ^ n);
    LEAVE();
    return x;
}

int main(int argc, char **argv)
{
    unsigned rounds = 20;
    uint32_t x = 1;

    if (argc > 1)
        rounds = (unsigned)strtoul(argv[1], NULL, 10);
    for (unsigned r = 0; r < rounds; r++) {
        x = outer(x);
        x = spiral(r % 5, x);
    }
    printf("callchain(%u) = %08x leaf=%lu inner=%lu middle=%lu outer=%lu spiral=%lu\n",
           rounds, (unsigned)x, calls_leaf, calls_inner, calls_middle, calls_outer, calls_spiral);
    return 0;
}

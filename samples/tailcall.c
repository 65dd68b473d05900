/*
 * tailcall.c -- functions that return through another function's `ret` (issue 26: return
 * probes on tail calls). The compiler turns `return f(...)` into `jmp f` (a sibling call):
 * the callee returns straight to its caller's caller, through the same return slot.
 *
 * Structure (all counts fixed; the program prints them, so a tool's counts can be checked):
 *   top -> mid (a call) ; mid -> hot (a tail jump)
 *   c3 -> c2 -> c1 -> hot: a chain of three tail jumps
 *   via -> relay -> hot: tail jumps through a function a test leaves unprobed
 *   even <-> odd: recursion by tail jumps (n+1 frames on one return slot), then last
 *   jumper -> thrower (tail jumps), which longjmps back to main: a chain abandoned
 *   s0..s3 walk a SHAPE string: 't'D tail-calls sD through a pointer (an indirect jmp),
 *   'd' tail-calls the next one directly, 'c'D calls sD (a real call), 'h' tail-calls sleaf,
 *   anything else returns.
 * Every tail call is `__attribute__((musttail))`: LLVM makes an i386 sibling call only when the
 * callee's stack arguments are the caller's own, unchanged, so `return hot(x + 1)` would stay a
 * call there; musttail writes them into the caller's argument area and jumps on both arches
 * (callee and caller have the same prototype, as musttail requires).
 * hot() is a 32-bit LCG step (both arches agree); every function's value is checked
 * against nothing but is printed as a checksum.
 *
 * Usage: tailcall [ROUNDS [SHAPE]]   (defaults 200 and "t2ct1dh")
 * Output: the call counts and the checksum, one line, the same on both arches.
 */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define TAIL __attribute__((musttail))

unsigned long calls_hot, calls_mid, calls_top, calls_chain, calls_via, calls_even, calls_odd,
    calls_last, calls_jumper, calls_steps;
static jmp_buf escape;

__attribute__((noinline))
uint32_t hot(uint32_t x)
{
    calls_hot++;
    return x * 1664525u + 1013904223u;
}

__attribute__((noinline))
uint32_t mid(uint32_t x)
{
    calls_mid++;
    TAIL return hot(x + 1);
}

__attribute__((noinline))
uint32_t top(uint32_t x)
{
    calls_top++;
    return mid(x) ^ 0x5a5a5a5au;
}

__attribute__((noinline))
uint32_t c1(uint32_t x)
{
    calls_chain++;
    TAIL return hot(x ^ 3u);
}

__attribute__((noinline))
uint32_t c2(uint32_t x)
{
    TAIL return c1(x + 2u);
}

__attribute__((noinline))
uint32_t c3(uint32_t x)
{
    TAIL return c2(x * 5u);
}

__attribute__((noinline))
uint32_t relay(uint32_t x)
{
    TAIL return hot(x + 7u);
}

__attribute__((noinline))
uint32_t via(uint32_t x)
{
    calls_via++;
    TAIL return relay(x ^ 0x1234u);
}

uint32_t odd(uint32_t n, uint32_t acc);

/* The recursion's end: a leaf with even's and odd's prototype (musttail needs it). */
__attribute__((noinline))
uint32_t last(uint32_t acc, uint32_t parity)
{
    calls_last++;
    return (acc ^ parity) * 1664525u + 1013904223u;
}

__attribute__((noinline))
uint32_t even(uint32_t n, uint32_t acc)
{
    calls_even++;
    if (n == 0)
        TAIL return last(acc, 0);
    TAIL return odd(n - 1, acc + n);
}

__attribute__((noinline))
uint32_t odd(uint32_t n, uint32_t acc)
{
    calls_odd++;
    if (n == 0)
        TAIL return last(acc, 1u);
    TAIL return even(n - 1, acc * 3u);
}

__attribute__((noinline))
uint32_t thrower(uint32_t x)
{
    longjmp(escape, (int)(x | 1u));
}

__attribute__((noinline))
uint32_t jumper(uint32_t x)
{
    calls_jumper++;
    TAIL return thrower(x + 11u);
}

typedef uint32_t (*step_fn)(const char *, uint32_t);
uint32_t s0(const char *p, uint32_t x);
uint32_t s1(const char *p, uint32_t x);
uint32_t s2(const char *p, uint32_t x);
uint32_t s3(const char *p, uint32_t x);
step_fn steps[4] = {s0, s1, s2, s3};

/* The walk's end by `h`: a leaf with the steps' prototype. */
__attribute__((noinline))
uint32_t sleaf(const char *p, uint32_t x)
{
    (void)p;
    return x * 1664525u + 1013904223u;
}

/* One step of the shape walk: `t` and `c` take the next step's number from the string. */
#define STEP(N, NEXT)                                                                  \
    __attribute__((noinline)) uint32_t s##N(const char *p, uint32_t x)                 \
    {                                                                                  \
        calls_steps++;                                                                 \
        x = x * 2654435761u + N##u;                                                    \
        switch (p[0]) {                                                                \
        case 't':                                                                      \
            TAIL return steps[(p[1] - '0') & 3](p + 2, x);                             \
        case 'd':                                                                      \
            TAIL return s##NEXT(p + 1, x);                                             \
        case 'c':                                                                      \
            return steps[(p[1] - '0') & 3](p + 2, x) ^ (N##u + 1u);                   \
        case 'h':                                                                      \
            TAIL return sleaf(p, x);                                                   \
        default:                                                                       \
            return x;                                                                  \
        }                                                                              \
    }

STEP(0, 1)
STEP(1, 2)
STEP(2, 3)
STEP(3, 0)

int main(int argc, char **argv)
{
    unsigned rounds = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 200;
    const char *shape = argc > 2 ? argv[2] : "t2ct1dh";
    uint32_t sum = 0;
    volatile unsigned jumps = 0;
    for (unsigned i = 0; i < rounds; i++) {
        sum += top(i);
        sum ^= c3(sum);
        sum += via(i);
        sum ^= even(i % 5u, sum);
        sum += s0(shape, sum);
        int caught = setjmp(escape);
        if (caught == 0)
            sum += jumper(sum);
        else
            jumps++;
        sum ^= (uint32_t)caught;
    }
    printf("hot=%lu mid=%lu top=%lu chain=%lu via=%lu even=%lu odd=%lu last=%lu jumper=%lu jumps=%u "
           "steps=%lu sum=%08x\n", calls_hot, calls_mid, calls_top, calls_chain, calls_via,
           calls_even, calls_odd, calls_last, calls_jumper, jumps, calls_steps, sum);
    return 0;
}

/*
 * manyfuncs.c -- a hot function among ten thousand cold ones: the probe-cost experiment's target
 * (trapline/experiments/specs/probe-cost.toml), which places up to 10 000 probes, one per
 * function, besides the one on the hot function.
 *
 * fib() is fib.c's (noinline, disable_tail_calls: fib(n) makes 2*F(n+1)-1 calls of itself).
 * cold0000 ... cold9999 are 10 000 real functions, each with its own symbol and the
 * frame-pointer prologue (build.py's flags), kept by the table that names them all: main calls
 * the first K of them once each (none by default), so a probe on one costs its placement and
 * fires at most once.
 *
 * Usage: manyfuncs [N [K]]   (N defaults to 16, K to 0)
 * Output: "fib(N) = X\n", then "cold(K) = S\n" with S the sum of the K calls.
 */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline, disable_tail_calls))
unsigned long fib(unsigned int n)
{
    if (n < 2)
        return n;
    return fib(n - 1) + fib(n - 2);
}

#define COLD(n) \
    __attribute__((noinline)) unsigned long cold##n(unsigned long x) { return x * 1##n + 1; }
#define COLD10(p) COLD(p##0) COLD(p##1) COLD(p##2) COLD(p##3) COLD(p##4) \
                  COLD(p##5) COLD(p##6) COLD(p##7) COLD(p##8) COLD(p##9)
#define COLD100(p) COLD10(p##0) COLD10(p##1) COLD10(p##2) COLD10(p##3) COLD10(p##4) \
                   COLD10(p##5) COLD10(p##6) COLD10(p##7) COLD10(p##8) COLD10(p##9)
#define COLD1000(p) COLD100(p##0) COLD100(p##1) COLD100(p##2) COLD100(p##3) COLD100(p##4) \
                    COLD100(p##5) COLD100(p##6) COLD100(p##7) COLD100(p##8) COLD100(p##9)
COLD1000(0) COLD1000(1) COLD1000(2) COLD1000(3) COLD1000(4)
COLD1000(5) COLD1000(6) COLD1000(7) COLD1000(8) COLD1000(9)

#define NAME(n) cold##n,
#define NAME10(p) NAME(p##0) NAME(p##1) NAME(p##2) NAME(p##3) NAME(p##4) \
                  NAME(p##5) NAME(p##6) NAME(p##7) NAME(p##8) NAME(p##9)
#define NAME100(p) NAME10(p##0) NAME10(p##1) NAME10(p##2) NAME10(p##3) NAME10(p##4) \
                   NAME10(p##5) NAME10(p##6) NAME10(p##7) NAME10(p##8) NAME10(p##9)
#define NAME1000(p) NAME100(p##0) NAME100(p##1) NAME100(p##2) NAME100(p##3) NAME100(p##4) \
                    NAME100(p##5) NAME100(p##6) NAME100(p##7) NAME100(p##8) NAME100(p##9)

unsigned long (*const cold_functions[])(unsigned long) = {
    NAME1000(0) NAME1000(1) NAME1000(2) NAME1000(3) NAME1000(4)
    NAME1000(5) NAME1000(6) NAME1000(7) NAME1000(8) NAME1000(9)
};
#define COLD_COUNT (sizeof cold_functions / sizeof cold_functions[0])

int main(int argc, char **argv)
{
    unsigned int n = 16;
    unsigned long k = 0, sum = 0;

    if (argc > 1)
        n = (unsigned int)strtoul(argv[1], NULL, 10);
    if (argc > 2)
        k = strtoul(argv[2], NULL, 10);
    if (k > COLD_COUNT)
        k = COLD_COUNT;
    printf("fib(%u) = %lu\n", n, fib(n));
    for (unsigned long i = 0; i < k; i++)
        sum += cold_functions[i](i);
    printf("cold(%lu) = %lu\n", k, sum);
    return 0;
}

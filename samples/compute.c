/*
 * compute.c -- a deterministic CPU-bound loop for benchmarks.
 *
 * Exercises: straight-line integer code in a hot loop with almost no
 * syscalls (one write at the end), so emulator and instrumentation overhead
 * dominate the run time.  An array of 1024 words is seeded from a linear
 * congruential generator (the Numerical Recipes constants, 32-bit so both
 * arches agree) and then mixed N times with a xorshift-multiply hash.
 *
 * Usage: compute [N]   (N defaults to 1000)   Output: "compute(N) = XXXXXXXX\n".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define WORDS 1024

static uint32_t table[WORDS];

__attribute__((noinline))
void seed_table(uint32_t seed)
{
    uint32_t x = seed;
    for (int i = 0; i < WORDS; i++) {
        x = x * 1664525u + 1013904223u;
        table[i] = x;
    }
}

__attribute__((noinline))
uint32_t mix(uint32_t v)
{
    v ^= v >> 16;
    v *= 0x7feb352du;
    v ^= v >> 15;
    v *= 0x846ca68bu;
    v ^= v >> 16;
    return v;
}

__attribute__((noinline))
uint32_t run_rounds(unsigned rounds)
{
    uint32_t acc = 0;
    for (unsigned r = 0; r < rounds; r++) {
        for (int i = 0; i < WORDS; i++) {
            table[i] = mix(table[i] ^ acc);
            acc += table[i] ^ (uint32_t)i;
        }
    }
    return acc;
}

int main(int argc, char **argv)
{
    unsigned rounds = 1000;

    if (argc > 1)
        rounds = (unsigned)strtoul(argv[1], NULL, 10);
    seed_table(12345u);
    printf("compute(%u) = %08x\n", rounds, (unsigned)run_rounds(rounds));
    return 0;
}

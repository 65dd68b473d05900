/*
 * fib.c -- the probe target: a plain recursive function.
 *
 * Exercises: deep call/return chains with frame pointers (push %ebp/%rbp;
 * mov %esp,%ebp prologue), which the entry/return probes and the emulate
 * strategy patch.  fib() must stay one real function making two real calls
 * to itself, so that fib(n) performs exactly 2*F(n+1)-1 calls of fib, which
 * probe tests count:
 *   - noinline: main calls the real fib, and fib is not inlined into itself;
 *   - disable_tail_calls: LLVM's tail-recursion elimination otherwise turns
 *     the second call into an accumulator loop (it does so even at -O1);
 *   - fib has external linkage, so clang does not clone or specialise it;
 *   - build.py disables shrink-wrapping, so the frame-pointer prologue stays
 *     at the entry even though the n < 2 path does not need a frame.
 * build.py checks the disassembly (two `call fib`, no jump to fib).
 *
 * Usage: fib [N]   (N defaults to 20)     Output: "fib(N) = X\n".
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

int main(int argc, char **argv)
{
    unsigned int n = 20;

    if (argc > 1)
        n = (unsigned int)strtoul(argv[1], NULL, 10);
    printf("fib(%u) = %lu\n", n, fib(n));
    return 0;
}

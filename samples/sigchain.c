/*
 * sigchain.c -- callchain's shadow stack through signal handlers (issue 26).
 *
 * Exercises: unwinding through signal frames. Every tracked function pushes its address
 * on the global shadow_stack at entry and pops it before it returns (callchain.c), the
 * handlers too, so a tool that stops the program anywhere can compare the stack it
 * unwinds (through the handler, the signal frame, raise and the function that raised)
 * with the stack the program says it has. The signals are raised synchronously (raise),
 * after the raiser's push: the shadow stack is never caught half-written.
 *
 * Structure: main -> outer (ROUNDS) -> middle -> leaf; every round middle raises SIGUSR1
 * (a plain handler: i386's non-rt sigframe and musl's __restore) and SIGUSR2 (SA_SIGINFO:
 * rt_sigframe, __restore_rt); each handler -> inner -> leaf, and on_usr1 once more
 * raises SIGUSR2 from inside itself (a handler interrupted by a handler).
 *
 * Usage: sigchain [ROUNDS]   (ROUNDS defaults to 10)
 * Output: "sigchain(ROUNDS) = XXXXXXXX usr1=U usr2=V\n", the same on both arches.
 */
#define _GNU_SOURCE            /* siginfo_t, SA_SIGINFO under -std=c11 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHADOW_MAX 64
#define LEAF_STEPS 100

volatile uintptr_t shadow_stack[SHADOW_MAX];
volatile unsigned shadow_depth;
volatile uint32_t state = 1;
unsigned long calls_usr1, calls_usr2;

#define ENTER(f) (shadow_stack[shadow_depth] = (uintptr_t)&(f), shadow_depth = shadow_depth + 1)
#define LEAVE() (shadow_depth = shadow_depth - 1)

__attribute__((noinline, disable_tail_calls))
uint32_t leaf(uint32_t x)
{
    ENTER(leaf);
    for (int i = 0; i < LEAF_STEPS; i++)
        x = x * 1664525u + 1013904223u;
    LEAVE();
    return x;
}

__attribute__((noinline, disable_tail_calls))
uint32_t inner(uint32_t x)
{
    ENTER(inner);
    x = leaf(x ^ 0x5a5a);
    LEAVE();
    return x;
}

__attribute__((noinline, disable_tail_calls))
void on_usr1(int sig)
{
    ENTER(on_usr1);
    calls_usr1++;
    state = inner(state + (uint32_t)sig);
    raise(SIGUSR2);
    LEAVE();
}

__attribute__((noinline, disable_tail_calls))
void on_usr2(int sig, siginfo_t *info, void *context)
{
    ENTER(on_usr2);
    (void)info;
    (void)context;
    calls_usr2++;
    state = inner(state ^ (uint32_t)sig);
    LEAVE();
}

__attribute__((noinline, disable_tail_calls))
uint32_t middle(uint32_t x)
{
    ENTER(middle);
    x = leaf(x);
    raise(SIGUSR1);
    raise(SIGUSR2);
    x ^= state;
    LEAVE();
    return x;
}

__attribute__((noinline, disable_tail_calls))
uint32_t outer(uint32_t x)
{
    ENTER(outer);
    x = middle(x);
    LEAVE();
    return x;
}

int main(int argc, char **argv)
{
    unsigned rounds = 10;
    uint32_t x = 1;
    struct sigaction plain, with_info;

    if (argc > 1)
        rounds = (unsigned)strtoul(argv[1], NULL, 10);
    memset(&plain, 0, sizeof plain);
    plain.sa_handler = on_usr1;
    sigaction(SIGUSR1, &plain, NULL);
    memset(&with_info, 0, sizeof with_info);
    with_info.sa_sigaction = on_usr2;
    with_info.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGUSR2, &with_info, NULL);
    for (unsigned r = 0; r < rounds; r++)
        x = outer(x);
    printf("sigchain(%u) = %08x usr1=%lu usr2=%lu\n", rounds, (unsigned)x, calls_usr1, calls_usr2);
    return 0;
}

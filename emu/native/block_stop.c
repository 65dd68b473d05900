/* A stop of a Unicorn run asked from any host thread and taken at the next block's start
 * (emu/block_stop.py): a debugger's Ctrl-C, from the GDB connection's reader thread.
 *
 * Why not uc_emu_stop from the asking thread: Unicorn 2.1.4 checks the exit request after every
 * guest load and store too (tcg-op.c check_exit_request) and leaves through
 * cpu_loop_exit_restore, which puts the guest back at the start of the instruction, so a stop
 * landing after the store of a read-modify-write instruction (`addl $1, counter`, `xadd`) runs
 * it again when the run resumes (host_clock.c says more). Here the asking thread only sets
 * `due`; the block hook on each Machine that may run (UC_HOOK_BLOCK, block_stop_hook) calls
 * uc_emu_stop on the CPU's own thread, and Unicorn emits the block hook's call ahead of the
 * block's exit-request check (translator.c), so the run ends before the block's first
 * instruction, where no instruction has half run.
 *
 * The hook takes the request it acts on (`due` back to 0): one request ends one run, and a
 * later run (a debugger's step inside its stop) is not ended by a stale one. */
#include <stdint.h>
#include <stdlib.h>

typedef int (*stop_fn)(void *uc);

struct block_stop {
    int due;                /* a stop is asked and not taken: first, the hook's only load */
    stop_fn stop;           /* uc_emu_stop */
};

struct block_stop *block_stop_new(stop_fn stop)
{
    struct block_stop *request = calloc(1, sizeof *request);
    if (request)
        request->stop = stop;
    return request;
}

/* From any host thread. */
void block_stop_ask(struct block_stop *request)
{
    __atomic_store_n(&request->due, 1, __ATOMIC_RELEASE);
}

/* Withdraw a request not taken (the caller took what it asked for another way). */
void block_stop_withdraw(struct block_stop *request)
{
    __atomic_store_n(&request->due, 0, __ATOMIC_RELEASE);
}

/* UC_HOOK_BLOCK's callback (user data: the request). The plain load first: every block of a
 * debugged run pays this, a request is rare. */
void block_stop_hook(void *uc, uint64_t address, uint32_t size, struct block_stop *request)
{
    (void)address;
    (void)size;
    if (__atomic_load_n(&request->due, __ATOMIC_RELAXED)
            && __atomic_exchange_n(&request->due, 0, __ATOMIC_ACQ_REL))
        request->stop(uc);
}

void block_stop_free(struct block_stop *request)
{
    free(request);
}

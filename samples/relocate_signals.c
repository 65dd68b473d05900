/*
 * relocate_signals.c -- a signal handler sees the PC it interrupted (US 6,957,421:
 * signal handlers never see a relocated function's address, US 6,898,785).
 *
 *  a. spin(n) loops n times over a few arithmetic instructions while an
 *     ITIMER_REAL interval timer raises SIGALRM every 20 us; the handler
 *     (SA_SIGINFO) takes the interrupted PC from its ucontext
 *     (uc_mcontext.gregs[REG_RIP] / [REG_EIP]) and checks that it lies in the
 *     program's text (between __ehdr_start and etext), and counts those that
 *     lie in spin() (between spin and spin_end, the function after it). spin's
 *     result shows that no instruction ran twice or was skipped.
 *  b. poke(p, v) writes to a page made PROT_NONE three times: each write is a
 *     SIGSEGV whose handler checks that the faulting PC lies in poke() and
 *     makes the page writable, so that the write is retried (then the page
 *     is made PROT_NONE again).
 *
 * Under trapline's relocate strategy spin and poke run as copies in the
 * tool's pages; the signal frames must still hold their original addresses
 * and sigreturn must go on in the copy. One line per check; exit 0, or a
 * message on stderr and exit 1. The output is the same natively.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

extern const char __ehdr_start[];
extern const char etext[];

static volatile unsigned long alarms, alarms_in_spin, alarms_outside_text;
/* Only alarms taken while main computes are checked: one that lands during a system call
 * (setitimer, write) shows the vDSO's __kernel_vsyscall natively on i386, outside the text. */
static volatile int checking;
static volatile unsigned long faults, faults_in_poke;
static char *page;

unsigned spin(unsigned n)
{
    unsigned x = 1;
    for (unsigned i = 0; i < n; i++)
        x = x * 2654435761u + i;
    return x;
}

void spin_end(void)
{
}

void poke(volatile unsigned *p, unsigned v)
{
    *p = v;
}

void poke_end(void)
{
}

uintptr_t interrupted_pc(void *ucontext)
{
    ucontext_t *uc = ucontext;
#if defined(__x86_64__)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#else
    return (uintptr_t)uc->uc_mcontext.gregs[REG_EIP];
#endif
}

int inside(uintptr_t pc, const void *start, const void *end)
{
    return pc >= (uintptr_t)start && pc < (uintptr_t)end;
}

void on_alarm(int sig, siginfo_t *info, void *ucontext)
{
    (void)sig;
    (void)info;
    uintptr_t pc = interrupted_pc(ucontext);
    if (!checking)
        return;
    alarms++;
    if (inside(pc, (const void *)spin, (const void *)spin_end))
        alarms_in_spin++;
    if (!inside(pc, __ehdr_start, etext))
        alarms_outside_text++;
}

void on_segv(int sig, siginfo_t *info, void *ucontext)
{
    (void)sig;
    (void)info;
    faults++;
    if (inside(interrupted_pc(ucontext), (const void *)poke, (const void *)poke_end))
        faults_in_poke++;
    if (mprotect(page, 4096, PROT_READ | PROT_WRITE) != 0)
        _exit(2);
}

void install(int sig, void (*handler)(int, siginfo_t *, void *))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    if (sigaction(sig, &sa, 0) != 0) {
        perror("relocate_signals: sigaction");
        exit(1);
    }
}

void set_timer(long usec)
{
    struct itimerval it = {{0, usec}, {0, usec}};
    if (setitimer(ITIMER_REAL, &it, 0) != 0) {
        perror("relocate_signals: setitimer");
        exit(1);
    }
}

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], 0, 10) : 3000000;
    install(SIGALRM, on_alarm);
    install(SIGSEGV, on_segv);
    if (!((uintptr_t)spin < (uintptr_t)spin_end && (uintptr_t)poke < (uintptr_t)poke_end)) {
        fprintf(stderr, "relocate_signals: functions out of source order\n");
        return 1;
    }
    set_timer(20);
    checking = 1;
    unsigned x = spin(n);
    checking = 0;
    set_timer(0);
    printf("spin(%u) = %08x\n", n, x);
    printf("alarms taken: %s\n", alarms >= 3 ? "yes" : "no");
    printf("interrupted PCs in the program's text: %s\n", alarms_outside_text == 0 ? "all" : "NOT ALL");
    printf("most of them in spin: %s\n", alarms_in_spin * 2 > alarms ? "yes" : "no");

    page = mmap(0, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) {
        perror("relocate_signals: mmap");
        return 1;
    }
    unsigned sum = 0;
    for (unsigned i = 0; i < 3; i++) {
        poke((volatile unsigned *)(page + 64 * i), 7 * i + 1);
        sum += *(unsigned *)(page + 64 * i);
        if (mprotect(page, 4096, PROT_NONE) != 0)
            return 1;
    }
    printf("faults: %lu, in poke: %lu, sum %u\n", faults, faults_in_poke, sum);
    return alarms_outside_text == 0 && faults_in_poke == 3 ? 0 : 1;
}

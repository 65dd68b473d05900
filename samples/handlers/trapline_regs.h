/*
 * trapline_regs.h -- the saved-register block a user handler gets (US 9,336,001's
 * Save_Registers), as instrumenter/strategies/page_layout.py lays it out: the
 * general registers in Linux pt_regs' order, then the flags, the probed
 * address and the stack pointer at the probe.  Changes to the general
 * registers and the flags are the thread's when it goes on; ip and sp are for
 * reading (writes are ignored).
 *
 *   void handler(struct trapline_regs *regs, void *scratch);
 *
 * scratch: 256 zeroed bytes per handler and probe site, kept across hits.
 */
#ifndef TRAPLINE_REGS_H
#define TRAPLINE_REGS_H

#if defined(__x86_64__)
struct trapline_regs {
    unsigned long r15, r14, r13, r12, rbp, rbx, r11, r10, r9, r8;
    unsigned long rax, rcx, rdx, rsi, rdi, flags, ip, sp;
};
#define TRAPLINE_ARG0(r) ((r)->rdi)
#else
struct trapline_regs {
    unsigned long ebx, ecx, edx, esi, edi, ebp, eax, flags, ip, sp;
};
/* cdecl: the first argument is on the stack, above the return address. */
#define TRAPLINE_ARG0(r) (((unsigned long *)(r)->sp)[1])
#endif

/* Exported from a shared object (the build hides everything else). */
#define TRAPLINE_HANDLER __attribute__((visibility("default")))

_Static_assert(sizeof(struct trapline_regs) == 18 * sizeof(long) ||
               sizeof(struct trapline_regs) == 10 * sizeof(long), "layout");
#endif

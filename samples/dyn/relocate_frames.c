/*
 * relocate_frames: what a function's callees see of it (US 6,898,785: a relocated
 * function's callees must see ORIGINAL-space return pointers).  Probed with
 * `--strategy relocate`, the functions below run from instrumented copies; this program
 * must print exactly what it prints unprobed:
 *   - each callee prints which function its __builtin_return_address(0) lies in;
 *   - a callee unwinds the stack with libgcc's _Unwind_Backtrace and prints the functions
 *     of this program it finds (frames in libraries are not printed: their addresses vary);
 *   - a callee longjmps out of two relocated frames back to its caller's setjmp;
 *   - a signal handler, run from raise() in a relocated function, unwinds through the
 *     signal frame and the relocated frame to main;
 *   - a relocated loop waits for an alarm signal, whose handler counts, and goes on.
 * Function names are found from a table of this program's functions (the one starting at
 * the highest address not above the code address), so the output is the same for both
 * arches, PIE or not.  Exit status 0.
 */
#define _DEFAULT_SOURCE         /* usleep, alarm under -std=c11 */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <unwind.h>

/* Every function stays a real function making real calls (no inlining, no tail call: a
 * relocated frame must be on the stack for its callees to see). */
#define FRAME __attribute__((noinline, disable_tail_calls))

void show_caller(const char *who, void *ra);
void unwind_here(const char *who);
int leaf(int depth);
int middle(int depth);
int outer(int depth);
int jump_leaf(int value);
int jump_middle(int value);
int jumper(int value);
void on_usr1(int sig);
int signalled(int value);
int spin(int rounds);
int main(void);

struct known { const char *name; void *start; };
static struct known functions[] = {
    {"show_caller", (void *)show_caller}, {"unwind_here", (void *)unwind_here},
    {"leaf", (void *)leaf}, {"middle", (void *)middle}, {"outer", (void *)outer},
    {"jump_leaf", (void *)jump_leaf}, {"jump_middle", (void *)jump_middle},
    {"jumper", (void *)jumper}, {"on_usr1", (void *)on_usr1},
    {"signalled", (void *)signalled}, {"spin", (void *)spin}, {"main", (void *)main},
};

/* The function of this table that holds `address`, or "?" (a library, or no function).
 * The distance is unsigned: on i386 a pointer difference is a 32-bit ptrdiff_t, and an
 * address 2 GiB or more above a function (the vDSO, libraries) would come out negative. */
static const char *function_of(void *address)
{
    const struct known *best = 0;
    for (unsigned i = 0; i < sizeof functions / sizeof functions[0]; i++) {
        char *start = functions[i].start;
        if (start <= (char *)address && (uintptr_t)address - (uintptr_t)start < 0x400
                && (!best || start > (char *)best->start))
            best = &functions[i];
    }
    return best ? best->name : "?";
}

FRAME void show_caller(const char *who, void *ra)
{
    printf("%s returns into %s\n", who, function_of(ra));
}

struct walk { char text[256]; int frames; };

static _Unwind_Reason_Code one_frame(struct _Unwind_Context *context, void *data)
{
    struct walk *walk = data;
    const char *name = function_of((void *)_Unwind_GetIP(context));
    walk->frames++;
    if (strcmp(name, "?") != 0 && strlen(walk->text) + strlen(name) + 2 < sizeof walk->text) {
        strcat(walk->text, " ");
        strcat(walk->text, name);
    }
    return strcmp(name, "main") == 0 ? _URC_END_OF_STACK : _URC_NO_REASON;
}

FRAME void unwind_here(const char *who)
{
    struct walk walk = {"", 0};
    _Unwind_Backtrace(one_frame, &walk);
    printf("%s unwinds:%s\n", who, walk.text);
}

FRAME int leaf(int depth)
{
    show_caller("leaf", __builtin_return_address(0));
    unwind_here("leaf");
    return depth + 1;
}

FRAME int middle(int depth)
{
    int value = leaf(depth + 1);
    show_caller("middle", __builtin_return_address(0));
    return value * 2;
}

FRAME int outer(int depth)
{
    int value = middle(depth + 1);
    show_caller("outer", __builtin_return_address(0));
    return value + 3;
}

static jmp_buf back;

FRAME int jump_leaf(int value)
{
    if (value > 2)
        longjmp(back, value);
    return value;
}

FRAME int jump_middle(int value)
{
    int got = jump_leaf(value + 1);
    printf("jump_middle: not reached for %d\n", got);
    return got;
}

FRAME int jumper(int value)
{
    int came = setjmp(back);
    if (came) {
        printf("jumper: longjmp brought %d\n", came);
        show_caller("jumper", __builtin_return_address(0));
        return came;
    }
    return jump_middle(value + 1);
}

static volatile sig_atomic_t ticks;

FRAME void on_usr1(int sig)
{
    /* Through the signal frame (the kernel's, then raise's in libc): i386's libgcc skips
     * the frame of raise's caller there, so only reaching main is printed. */
    struct walk walk = {"", 0};
    (void)sig;
    _Unwind_Backtrace(one_frame, &walk);
    printf("on_usr1 unwinds to main: %s\n",
           strlen(walk.text) >= 5 && strcmp(walk.text + strlen(walk.text) - 5, " main") == 0
           ? "yes" : "no");
}

FRAME int signalled(int value)
{
    raise(SIGUSR1);
    return value + 1;
}

static void on_alarm(int sig)
{
    (void)sig;
    ticks++;
}

FRAME int spin(int rounds)
{
    /* SIGALRM comes while this loop waits (trapline's clock is virtual: it moves with the
     * guest's sleeps and system calls, so the wait is a sleep). */
    while (!ticks && rounds > 0)
        usleep(50000);
    return ticks;
}

FRAME int main(void)
{
    printf("outer: %d\n", outer(0));
    printf("jumper: %d\n", jumper(1));
    signal(SIGUSR1, on_usr1);
    printf("signalled: %d\n", signalled(4));
    signal(SIGALRM, on_alarm);
    alarm(1);
    printf("spin: %d tick\n", spin(1));
    return 0;
}

/* The vDSO's clocks and i386 signal trampolines, as glibc uses them (tests/e2e/strace/test_vdso.py).
   Without arguments it only calls them (its strace is compared with native strace's); with
   "report" it prints what the sandbox makes deterministic: how far apart a vDSO read, a
   system call read and another vDSO read of CLOCK_MONOTONIC are, and whether AT_SYSINFO_EHDR
   is the [vdso] mapping of /proc/self/maps and an ELF image. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static long long ns(struct timespec t) { return t.tv_sec * 1000000000LL + t.tv_nsec; }
static volatile int handled;
static void on_usr1(int sig) { handled = sig; }

static int vdso_is_mapped(void) {
    unsigned long ehdr = getauxval(AT_SYSINFO_EHDR), start = 0;
    char line[256];
    FILE *maps = fopen("/proc/self/maps", "r");
    while (fgets(line, sizeof line, maps))
        if (strstr(line, "[vdso]"))
            sscanf(line, "%lx", &start);
    fclose(maps);
    return ehdr != 0 && ehdr == start && memcmp((void *)ehdr, "\177ELF", 4) == 0;
}

int main(int argc, char **argv) {
    int report = argc > 1 && strcmp(argv[1], "report") == 0;
    struct timespec a, b, real, cpu;
    struct { long long sec, nsec; } raw;       /* the kernel's __kernel_timespec */
    struct timeval tv;
    clock_gettime(CLOCK_MONOTONIC, &a);
#ifdef SYS_clock_gettime64
    syscall(SYS_clock_gettime64, CLOCK_MONOTONIC, &raw);
#else
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &raw);
#endif
    clock_gettime(CLOCK_MONOTONIC, &b);
    clock_gettime(CLOCK_REALTIME, &real);
    gettimeofday(&tv, NULL);
    time_t now = time(NULL);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);     /* not the vDSO's: a system call */
    if (report) {
        long long between = raw.sec * 1000000000LL + raw.nsec;
        printf("syscall after vdso: %lld ns, vdso after syscall: %lld ns\n",
               between - ns(a), ns(b) - between);
        printf("gettimeofday after realtime: %lld us, time: %lld s\n",
               (tv.tv_sec * 1000000LL + tv.tv_usec) - ns(real) / 1000, (long long)(now - real.tv_sec));
        printf("AT_SYSINFO_EHDR is the [vdso] ELF image: %d\n", vdso_is_mapped());
    }
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_handler = on_usr1;
    sigaction(SIGUSR1, &act, NULL);
    raise(SIGUSR1);
    printf("handler ran: %d\n", handled == SIGUSR1);
    return 0;
}

/*
 * shared_mem.c -- MAP_SHARED memory between processes: anonymous, a file,
 * futexes on it, across fork and across exec, and msync.
 *
 * Usage: shared_mem [DIR]   (DIR: where the shared file is made, default
 * /dev/shm; the output does not depend on it.)
 *
 * Exercises: mmap MAP_SHARED (anonymous and of a file), fork, execve, futex
 * FUTEX_WAIT/FUTEX_WAKE without FUTEX_PRIVATE_FLAG on a shared word, msync,
 * munmap, ftruncate, pread, wait4.
 *
 *  1. anon: an anonymous MAP_SHARED page; the forked child stores 0x1234 and
 *     exits; the parent, after reaping it, reads 0x1234.  A MAP_PRIVATE page
 *     the child also stores into keeps the parent's value.
 *  2. futex: the parent sleeps in FUTEX_WAIT on a shared word while it is 0;
 *     the child, after a 20 ms nanosleep, sets it to 1 and FUTEX_WAKEs it:
 *     the parent is woken and reads 1 (without the wake it would sleep on).
 *     Then a wake that leaves the word at 0, the child exiting right after:
 *     the parent's timed wait returns 0, not ETIMEDOUT.
 *  3. file: DIR/shared_mem_file, one page, mapped MAP_SHARED and filled with
 *     a "magic" word; the child execs this program with "reader PATH": it
 *     opens the file, maps it, checks the magic, adds 1 to a counter and
 *     FUTEX_WAKEs the parent, which waits on that counter.  After msync, the
 *     file's bytes (pread) hold what was stored through the mapping.
 *
 * Only the parent prints, in a fixed order.  A failed check prints a message
 * to stderr and exits 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096
#define MAGIC 0x4c545021u

struct region {
    uint32_t magic;
    uint32_t counter;    /* the reader's futex */
    uint32_t flag;       /* the futex of part 2 */
};

void fail(const char *what)
{
    fprintf(stderr, "shared_mem: %s: %s\n", what, strerror(errno));
    exit(1);
}

void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "shared_mem: check failed: %s\n", what);
        exit(1);
    }
}

long futex(uint32_t *word, int op, uint32_t value)
{
    return syscall(SYS_futex, word, op, value, NULL, NULL, 0);
}

/* Sleep while *word == value (a shared futex: not FUTEX_PRIVATE_FLAG). */
void wait_while(uint32_t *word, uint32_t value)
{
    while (__atomic_load_n(word, __ATOMIC_SEQ_CST) == value) {
        if (futex(word, FUTEX_WAIT, value) < 0 && errno != EAGAIN && errno != EINTR)
            fail("futex wait");
    }
}

int reap(pid_t pid)
{
    int status;
    if (waitpid(pid, &status, 0) != pid)
        fail("waitpid");
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void *map_shared_anonymous(void)
{
    void *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        fail("mmap shared anonymous");
    return p;
}

void anonymous_part(void)
{
    uint32_t *shared = map_shared_anonymous();
    uint32_t *private = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (private == MAP_FAILED)
        fail("mmap private");
    *private = 7;
    pid_t pid = fork();
    if (pid < 0)
        fail("fork");
    if (pid == 0) {
        *shared = 0x1234;
        *private = 8;
        _exit(0);
    }
    check(reap(pid) == 0, "anon child status");
    printf("anon: shared %#x, private %u\n", *shared, *private);
    munmap(private, PAGE);
    munmap(shared, PAGE);
}

void futex_part(void)
{
    struct region *r = map_shared_anonymous();
    pid_t pid = fork();
    if (pid < 0)
        fail("fork");
    if (pid == 0) {
        /* Give the parent time to fall asleep in FUTEX_WAIT first: then only a
         * wake that reaches the other process ends its wait. */
        struct timespec pause = {0, 20 * 1000 * 1000};
        nanosleep(&pause, NULL);
        __atomic_store_n(&r->flag, 1, __ATOMIC_SEQ_CST);
        futex(&r->flag, FUTEX_WAKE, 1);
        _exit(0);
    }
    wait_while(&r->flag, 0);
    check(reap(pid) == 0, "futex child status");
    printf("futex: woken with flag %u\n", r->flag);

    /* A wake that leaves the word as it was, and the waker's exit right after
     * it (its SIGCHLD, ignored, reaches the parent before the parent runs):
     * the wait still ends with 0, long before its time limit. */
    r->flag = 0;
    pid = fork();
    if (pid < 0)
        fail("fork");
    if (pid == 0) {
        struct timespec pause = {0, 20 * 1000 * 1000};
        nanosleep(&pause, NULL);
        futex(&r->flag, FUTEX_WAKE, 1);
        _exit(0);
    }
    struct timespec limit = {10, 0};
    long woken = syscall(SYS_futex, &r->flag, FUTEX_WAIT, 0, &limit, NULL, 0);
    printf("futex: a bare wake then exit: wait returned %s\n",
           woken == 0 ? "0" : strerror(errno));
    check(reap(pid) == 0, "futex child status");
    munmap(r, PAGE);
}

int reader(const char *path)
{
    int fd = open(path, O_RDWR);
    if (fd < 0)
        fail("reader open");
    struct region *r = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (r == MAP_FAILED)
        fail("reader mmap");
    close(fd);
    check(r->magic == MAGIC, "reader sees the magic");
    __atomic_add_fetch(&r->counter, 1, __ATOMIC_SEQ_CST);
    futex(&r->counter, FUTEX_WAKE, 1);
    return 0;
}

void file_part(const char *self, const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/shared_mem_file", dir);
    int fd = open(path, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0)
        fail("open");
    if (ftruncate(fd, PAGE) < 0)
        fail("ftruncate");
    struct region *r = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (r == MAP_FAILED)
        fail("mmap file");
    memset(r, 0, PAGE);
    r->magic = MAGIC;
    pid_t pid = fork();
    if (pid < 0)
        fail("fork");
    if (pid == 0) {
        execl(self, self, "reader", path, (char *)NULL);
        fail("execl");
    }
    wait_while(&r->counter, 0);
    check(reap(pid) == 0, "reader status");
    printf("file: counter %u after the reader's exec\n", r->counter);
    if (msync(r, PAGE, MS_SYNC) < 0)
        fail("msync");
    struct region on_disk;
    if (pread(fd, &on_disk, sizeof on_disk, 0) != (ssize_t)sizeof on_disk)
        fail("pread");
    printf("file: after msync the file holds magic %s, counter %u\n",
           on_disk.magic == MAGIC ? "ok" : "wrong", on_disk.counter);
    munmap(r, PAGE);
    close(fd);
    unlink(path);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "reader") == 0)
        return reader(argv[2]);
    setvbuf(stdout, NULL, _IONBF, 0);
    anonymous_part();
    futex_part();
    file_part(argv[0], argc > 1 ? argv[1] : "/dev/shm");
    return 0;
}

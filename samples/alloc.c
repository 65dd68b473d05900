/*
 * alloc.c -- allocator- and address-space-heavy guest.
 *
 * Exercises the page mapper through every path a libc program uses:
 *   - malloc/free of many small blocks and of large blocks (>= 256 KiB, which
 *     allocators serve with their own mmap), in an interleaved pattern;
 *   - realloc growth of one buffer from 16 bytes to 1 MiB (mremap or copy);
 *   - calloc, whose memory must read back as zero;
 *   - explicit program-break growth and shrink with the raw brk syscall (musl's
 *     brk() and sbrk(n != 0) always fail with ENOMEM, so libc cannot be used);
 *   - anonymous mmap / partial munmap / munmap.
 * Every block is filled with a pattern derived from its index and read back
 * into a checksum, so any lost or corrupted page changes the printed value.
 * Output is a fixed set of lines; a failed check exits with status 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SMALL_BLOCKS 512
#define LARGE_BLOCKS 8
#define LARGE_SIZE (256 * 1024)
#define BRK_GROWTH (64 * 1024)
#define MMAP_PAGES 16
#define PAGE 4096

void fail(const char *what)
{
    fprintf(stderr, "alloc: %s failed: %s\n", what, strerror(errno));
    exit(1);
}

/* FNV-1a over a byte range: cheap, order-sensitive, no host dependence. */
uint32_t fnv1a(uint32_t h, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 16777619u;
    }
    return h;
}

void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(seed * 31u + i * 7u);
}

size_t small_size(unsigned i)
{
    return 1 + (i * 37u) % 2000u;
}

uint32_t small_and_large_blocks(uint32_t h)
{
    unsigned char *small[SMALL_BLOCKS];
    unsigned char *large[LARGE_BLOCKS];

    for (unsigned i = 0; i < SMALL_BLOCKS; i++) {
        small[i] = malloc(small_size(i));
        if (small[i] == NULL)
            fail("malloc small");
        fill(small[i], small_size(i), i);
        if (i % LARGE_BLOCKS == 0) {
            unsigned j = i / (SMALL_BLOCKS / LARGE_BLOCKS);
            large[j] = malloc(LARGE_SIZE + j * PAGE);
            if (large[j] == NULL)
                fail("malloc large");
            fill(large[j], LARGE_SIZE + j * PAGE, 1000 + j);
        }
        if (i % 3 == 2) { /* free every third block early: holes to reuse */
            h = fnv1a(h, small[i - 1], small_size(i - 1));
            free(small[i - 1]);
            small[i - 1] = NULL;
        }
    }
    for (unsigned i = 0; i < SMALL_BLOCKS; i++) {
        if (small[i] != NULL)
            h = fnv1a(h, small[i], small_size(i));
        free(small[i]);
    }
    for (unsigned j = 0; j < LARGE_BLOCKS; j++) {
        h = fnv1a(h, large[j], LARGE_SIZE + j * PAGE);
        free(large[j]);
    }
    return h;
}

uint32_t realloc_growth(uint32_t h)
{
    size_t size = 16;
    unsigned char *buf = malloc(size);
    if (buf == NULL)
        fail("malloc for realloc");
    fill(buf, size, 7);
    while (size < 1024 * 1024) {
        size_t old = size;
        size *= 2;
        unsigned char *grown = realloc(buf, size);
        if (grown == NULL)
            fail("realloc");
        buf = grown;
        fill(buf + old, size - old, (unsigned)old);
    }
    h = fnv1a(h, buf, size);
    free(buf);
    return h;
}

uint32_t calloc_zeroed(uint32_t h)
{
    const size_t count = 3000, size = 100; /* 300 000 bytes: a large block */
    unsigned char *p = calloc(count, size);
    if (p == NULL)
        fail("calloc");
    for (size_t i = 0; i < count * size; i++) {
        if (p[i] != 0) {
            errno = EINVAL;
            fail("calloc memory not zero");
        }
    }
    h = fnv1a(h, p, count * size);
    free(p);
    return h;
}

/* Linux brk returns the new break on success and the old one on failure. */
uintptr_t raw_brk(uintptr_t addr)
{
    return (uintptr_t)syscall(SYS_brk, addr);
}

uint32_t brk_growth(uint32_t h)
{
    uintptr_t start = raw_brk(0);
    if (raw_brk(start + BRK_GROWTH) != start + BRK_GROWTH) {
        errno = ENOMEM;
        fail("brk grow");
    }
    fill((unsigned char *)start, BRK_GROWTH, 42);
    h = fnv1a(h, (unsigned char *)start, BRK_GROWTH);
    if (raw_brk(start) != start) {
        errno = ENOMEM;
        fail("brk shrink");
    }
    printf("brk: grew and shrank by %d bytes\n", BRK_GROWTH);
    return h;
}

uint32_t mmap_anonymous(uint32_t h)
{
    size_t len = MMAP_PAGES * PAGE;
    unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        fail("mmap");
    fill(p, len, 99);
    /* Unmap the first half, then check the second half survived intact. */
    if (munmap(p, len / 2) != 0)
        fail("munmap first half");
    h = fnv1a(h, p + len / 2, len / 2);
    if (munmap(p + len / 2, len / 2) != 0)
        fail("munmap second half");
    printf("mmap: %zu bytes mapped, unmapped in two halves\n", len);
    return h;
}

int main(void)
{
    uint32_t h = 2166136261u;

    h = small_and_large_blocks(h);
    printf("malloc/free: %d small, %d large blocks\n", SMALL_BLOCKS, LARGE_BLOCKS);
    h = realloc_growth(h);
    printf("realloc: grew to %d bytes\n", 1024 * 1024);
    h = calloc_zeroed(h);
    printf("calloc: zeroed\n");
    h = brk_growth(h);
    h = mmap_anonymous(h);
    printf("checksum: %08x\n", (unsigned)h);
    return 0;
}

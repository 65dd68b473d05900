/*
 * fileio.c -- file-system round trip in the current directory.
 *
 * Exercises: open(O_CREAT|O_EXCL), write, lseek (SEEK_SET and SEEK_END),
 * read, fstat, stat, getdents64 (through opendir/readdir), rename, unlink,
 * close.  Each step prints one line with its result.  Directory entries are
 * printed sorted by name so that the output does not depend on the order in
 * which a file system returns them.  Any failure prints the step and its
 * errno message to stderr and exits with status 1.
 */
#define _POSIX_C_SOURCE 200809L /* strdup is POSIX.1-2008, not ISO C */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_ENTRIES 256

static const char payload[] = "trapline fileio sample: 0123456789\n";

void fail(const char *step)
{
    fprintf(stderr, "fileio: %s failed: %s\n", step, strerror(errno));
    exit(1);
}

int create_and_write(void)
{
    int fd = open("data.txt", O_CREAT | O_EXCL | O_RDWR, 0644);
    if (fd < 0)
        fail("open data.txt");
    printf("open data.txt: ok\n");
    ssize_t n = write(fd, payload, sizeof payload - 1);
    if (n != (ssize_t)(sizeof payload - 1))
        fail("write");
    printf("write: %zd bytes\n", n);
    return fd;
}

void seek_and_read(int fd)
{
    char buf[64];
    off_t end = lseek(fd, 0, SEEK_END);
    if (end < 0)
        fail("lseek SEEK_END");
    printf("lseek SEEK_END: %lld\n", (long long)end);
    if (lseek(fd, 9, SEEK_SET) != 9)
        fail("lseek SEEK_SET");
    ssize_t n = read(fd, buf, sizeof buf - 1);
    if (n < 0)
        fail("read");
    buf[n] = '\0';
    printf("read at 9: %zd bytes: %s", n, buf);
    if (strcmp(buf, payload + 9) != 0) {
        errno = EIO;
        fail("read back compare");
    }
}

void print_sizes(int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        fail("fstat");
    printf("fstat size: %lld regular: %d\n", (long long)st.st_size,
           S_ISREG(st.st_mode) ? 1 : 0);
    if (stat("data.txt", &st) != 0)
        fail("stat");
    printf("stat size: %lld\n", (long long)st.st_size);
}

int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void list_directory(void)
{
    char *names[MAX_ENTRIES];
    size_t count = 0;
    DIR *dir = opendir(".");
    if (dir == NULL)
        fail("opendir");
    errno = 0;
    for (struct dirent *de; (de = readdir(dir)) != NULL; errno = 0) {
        if (count == MAX_ENTRIES) {
            errno = ENOMEM;
            fail("readdir (too many entries)");
        }
        names[count] = strdup(de->d_name);
        if (names[count] == NULL)
            fail("strdup");
        count++;
    }
    if (errno != 0)
        fail("readdir");
    closedir(dir);
    qsort(names, count, sizeof names[0], compare_names);
    printf("readdir: %zu entries\n", count);
    for (size_t i = 0; i < count; i++) {
        printf("  %s\n", names[i]);
        free(names[i]);
    }
}

void rename_and_unlink(void)
{
    struct stat st;
    if (rename("data.txt", "data2.txt") != 0)
        fail("rename");
    printf("rename data.txt -> data2.txt: ok\n");
    if (stat("data.txt", &st) == 0) {
        errno = EEXIST;
        fail("old name still present after rename");
    }
    if (errno != ENOENT)
        fail("stat data.txt after rename");
    if (unlink("data2.txt") != 0)
        fail("unlink");
    printf("unlink data2.txt: ok\n");
}

int main(void)
{
    int fd = create_and_write();
    seek_and_read(fd);
    print_sizes(fd);
    if (close(fd) != 0)
        fail("close");
    printf("close: ok\n");
    list_directory();
    rename_and_unlink();
    printf("done\n");
    return 0;
}

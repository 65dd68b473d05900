/* malloc_count [N]: calls malloc exactly N times (default 100) and prints how many calls
 * it made, for the uprobe:libc.so.6:malloc oracle.  Output goes through write(2) only:
 * stdio would allocate its buffer with malloc, and so would make a call the program did
 * not count.  Nothing else here calls malloc (no threads, no stdio, no locale). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

unsigned long malloc_calls;

void *counted_malloc(size_t size)
{
    malloc_calls++;
    return malloc(size);
}

unsigned long parse_count(const char *text)
{
    unsigned long n = 0;
    while (*text >= '0' && *text <= '9')
        n = n * 10 + (unsigned long)(*text++ - '0');
    return n;
}

void print_line(const char *label, unsigned long value)
{
    char buffer[64];
    size_t length = strlen(label);
    memcpy(buffer, label, length);
    char digits[24];
    int count = 0;
    do {
        digits[count++] = (char)('0' + value % 10);
        value /= 10;
    } while (value != 0);
    while (count > 0)
        buffer[length++] = digits[--count];
    buffer[length++] = '\n';
    if (write(1, buffer, length) != (ssize_t)length)
        _exit(1);
}

int main(int argc, char **argv)
{
    unsigned long n = argc > 1 ? parse_count(argv[1]) : 100;
    unsigned long checksum = 0;
    for (unsigned long i = 0; i < n; i++) {
        size_t size = 16 + (i * 37) % 4000; /* small and larger chunks, from the tcache and bins */
        unsigned char *block = counted_malloc(size);
        if (block == NULL)
            return 1;
        memset(block, (int)(i & 0xff), size);
        checksum += block[size - 1] + size;
        free(block);
    }
    print_line("malloc calls: ", malloc_calls);
    print_line("checksum: ", checksum);
    return 0;
}

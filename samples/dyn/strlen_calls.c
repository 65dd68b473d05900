/* strlen_calls: calls libc's strlen (through the PLT, -fno-builtin) on known strings and
 * prints each result, for the uretprobe:libc.so.6:strlen oracle: the return values a
 * probe records must be exactly the printed lengths, in order.  Output goes through
 * write(2) only, because printf calls strlen internally. */
#include <string.h>
#include <unistd.h>

const char *const strings[] = {
    "", "a", "hello", "hello, world", "trapline probes shared libraries",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef!", /* 65: crosses 64 */
};

void print_length(unsigned index, size_t length)
{
    char line[32] = "strlen[ ] = ";
    line[7] = (char)('0' + index);
    size_t at = 12;
    char digits[24];
    int count = 0;
    do {
        digits[count++] = (char)('0' + length % 10);
        length /= 10;
    } while (length != 0);
    while (count > 0)
        line[at++] = digits[--count];
    line[at++] = '\n';
    if (write(1, line, at) != (ssize_t)at)
        _exit(1);
}

int main(void)
{
    for (unsigned i = 0; i < sizeof strings / sizeof strings[0]; i++)
        print_length(i, strlen(strings[i]));
    return 0;
}

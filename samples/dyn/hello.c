/* hello: the smallest dynamically linked program: ld.so, libc.so.6, one printf. */
#include <stdio.h>

int main(int argc, char **argv)
{
    (void)argv;
    printf("hello, world (%s, %d argument%s)\n", "glibc", argc - 1, argc == 2 ? "" : "s");
    return 0;
}

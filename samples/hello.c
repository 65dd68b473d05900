/*
 * hello.c -- the smallest useful guest.
 *
 * Exercises: process start-up (initial stack, auxv, libc init), one write(2)
 * to stdout through stdio, and exit_group(2) with status 0.
 * Expected output: "hello, world\n".
 */
#include <stdio.h>

int main(void)
{
    fputs("hello, world\n", stdout);
    return 0;
}

/*
 * args_env.c -- dumps what the loader put on the initial stack.
 *
 * Exercises: argc/argv/envp layout built by the loader (System V psABI,
 * "Process Initialization"), and libc's view of it through `environ`.
 * Output, one item per line:
 *     argc=N
 *     argv[i]=STRING        for each argument
 *     env: KEY=VALUE        for each environment entry, in stack order
 * Nothing host-dependent is printed beyond what the caller passes in.
 */
#include <stdio.h>

extern char **environ;

void print_args(int argc, char **argv)
{
    printf("argc=%d\n", argc);
    for (int i = 0; i < argc; i++)
        printf("argv[%d]=%s\n", i, argv[i]);
}

void print_env(char **envp)
{
    for (char **e = envp; *e != NULL; e++)
        printf("env: %s\n", *e);
}

int main(int argc, char **argv)
{
    print_args(argc, argv);
    print_env(environ);
    return 0;
}

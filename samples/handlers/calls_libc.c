/* calls_libc.c -- a handler that calls outside its object: trapline refuses it. */
int puts(const char *);

void calls_libc(void *regs, void *scratch)
{
    (void)regs; (void)scratch;
    puts("hello from a handler");
}

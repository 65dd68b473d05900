# A user breakpoint handler (US 9,336,001) for uprobe:fib:fib: fib's first argument n
# (rdi, psABI 3.2.3) is at most 5 after it: `fib 10` prints "fib(10) = 5".
#   rdi = struct trapline_regs * (page_layout.py: rdi at offset 112)
    mov rax, qword ptr [rdi + 112]
    cmp rax, 5
    jbe done
    mov qword ptr [rdi + 112], 5
done:
    ret

# A user breakpoint handler (US 9,336,001) for uprobe:fib:fib: fib's first argument n
# ([esp+4] at entry, i386 psABI 2.2) is at most 5 after it: `fib 10` prints "fib(10) = 5".
#   [esp+4] = struct trapline_regs * (page_layout.py: esp at offset 36)
    mov eax, dword ptr [esp + 4]
    mov eax, dword ptr [eax + 36]
    cmp dword ptr [eax + 4], 5
    jbe done
    mov dword ptr [eax + 4], 5
done:
    ret

"""The vDSO's code, as assembly (Intel syntax): the source of code.py's bytes.

`python3 -m kernel_model.vdso.assemble` assembles each function with keystone and rewrites
code.py (a run never imports keystone); tests/unit/kernel_model/vdso/test_code.py checks that
code.py is what this source assembles to.

Every function finds the clock page from its own address: the code sits in the image's first
page (elf_image.py checks it), and the first vvar page (vvar.py) is VVAR_DISTANCE bytes below
that page. The clocks read the time-stamp counter, which RDTSC gives on the virtual clock
(kernel_model/cpu/tsc.py: CR4.TSD traps it, the kernel emulates it: CLOCK_MONOTONIC in
nanoseconds, and the read costs the clock one tick), and add the clock's offset from the page,
as Linux's vDSO adds vdso_data's base time to the scaled TSC delta
(lib/vdso/gettimeofday.c do_hres). A clock the page does not serve (the CPU-time clocks, the
alarm clocks, a negative id naming a process's clock) is asked of the kernel with the system
call, as Linux's vDSO falls back (clock_gettime_fallback).

Signatures are the psABIs': x86-64 arguments in rdi, rsi, rdx; i386 on the stack (cdecl),
ebx/esi/edi/ebp kept. A 64-bit nanosecond count fits the i386 `div` by 10^9 (quotient under
2^32) until 2106.
"""
from kernel_model.vdso.vvar import SERVED_CLOCKS, VVAR_DISTANCE

# (name, version, assembly) in the order the image lays them out
X86_64 = (
    ("__vdso_clock_gettime", "LINUX_2.6", f"""
        mov edi, edi
        cmp edi, {SERVED_CLOCKS - 1}
        ja fallback
        lea rcx, [rip]
        and rcx, -4096
        mov rcx, [rcx + rdi*8 - {VVAR_DISTANCE}]
        cmp rcx, -1
        je fallback
        rdtsc
        shl rdx, 32
        or rax, rdx
        add rax, rcx
        xor edx, edx
        mov ecx, 1000000000
        div rcx
        mov [rsi], rax
        mov [rsi + 8], rdx
        xor eax, eax
        ret
    fallback:
        mov eax, 228
        syscall
        ret
    """),
    ("__vdso_gettimeofday", "LINUX_2.6", f"""
        test rdi, rdi
        jz zone
        lea rcx, [rip]
        and rcx, -4096
        mov r8, [rcx - {VVAR_DISTANCE}]
        rdtsc
        shl rdx, 32
        or rax, rdx
        add rax, r8
        xor edx, edx
        mov ecx, 1000000000
        div rcx
        mov [rdi], rax
        mov rax, rdx
        xor edx, edx
        mov ecx, 1000
        div rcx
        mov [rdi + 8], rax
    zone:
        test rsi, rsi
        jz done
        mov qword ptr [rsi], 0
    done:
        xor eax, eax
        ret
    """),
    ("__vdso_time", "LINUX_2.6", f"""
        lea rcx, [rip]
        and rcx, -4096
        mov r8, [rcx - {VVAR_DISTANCE}]
        rdtsc
        shl rdx, 32
        or rax, rdx
        add rax, r8
        xor edx, edx
        mov ecx, 1000000000
        div rcx
        test rdi, rdi
        jz done
        mov [rdi], rax
    done:
        ret
    """),
    ("__vdso_getcpu", "LINUX_2.6", """
        test rdi, rdi
        jz node
        mov dword ptr [rdi], 0
    node:
        test rsi, rsi
        jz done
        mov dword ptr [rsi], 0
    done:
        xor eax, eax
        ret
    """),
    ("__vdso_clock_getres", "LINUX_2.6", f"""
        mov edi, edi
        cmp edi, {SERVED_CLOCKS - 1}
        ja fallback
        lea rcx, [rip]
        and rcx, -4096
        cmp qword ptr [rcx + rdi*8 - {VVAR_DISTANCE}], -1
        je fallback
        test rsi, rsi
        jz done
        mov qword ptr [rsi], 0
        mov qword ptr [rsi + 8], 1
    done:
        xor eax, eax
        ret
    fallback:
        mov eax, 229
        syscall
        ret
    """),
)


def _i386_clock_gettime(number: int, wide: bool) -> str:
    """clock_gettime (32-bit timespec) or clock_gettime64 (64-bit tv_sec and tv_nsec)."""
    store = ("mov [ecx], eax\n mov dword ptr [ecx + 4], 0\n mov [ecx + 8], edx\n"
             " mov dword ptr [ecx + 12], 0" if wide else "mov [ecx], eax\n mov [ecx + 4], edx")
    return f"""
        mov eax, [esp + 4]
        cmp eax, {SERVED_CLOCKS - 1}
        ja fallback
        call here
    here:
        pop ecx
        and ecx, -4096
        lea ecx, [ecx + eax*8 - {VVAR_DISTANCE}]
        cmp dword ptr [ecx], -1
        jne served
        cmp dword ptr [ecx + 4], -1
        je fallback
    served:
        push ebx
        push esi
        mov ebx, [ecx]
        mov esi, [ecx + 4]
        rdtsc
        add eax, ebx
        adc edx, esi
        mov ecx, 1000000000
        div ecx
        mov ecx, [esp + 16]
        {store}
        pop esi
        pop ebx
        xor eax, eax
        ret
    fallback:
        push ebx
        mov ebx, [esp + 8]
        mov ecx, [esp + 12]
        mov eax, {number}
        int 0x80
        pop ebx
        ret
    """


def _i386_clock_getres(number: int, wide: bool) -> str:
    store = ("mov dword ptr [ecx], 0\n mov dword ptr [ecx + 4], 0\n mov dword ptr [ecx + 8], 1\n"
             " mov dword ptr [ecx + 12], 0" if wide else
             "mov dword ptr [ecx], 0\n mov dword ptr [ecx + 4], 1")
    return f"""
        mov eax, [esp + 4]
        cmp eax, {SERVED_CLOCKS - 1}
        ja fallback
        call here
    here:
        pop ecx
        and ecx, -4096
        lea ecx, [ecx + eax*8 - {VVAR_DISTANCE}]
        cmp dword ptr [ecx], -1
        jne served
        cmp dword ptr [ecx + 4], -1
        je fallback
    served:
        mov ecx, [esp + 8]
        test ecx, ecx
        jz done
        {store}
    done:
        xor eax, eax
        ret
    fallback:
        push ebx
        mov ebx, [esp + 8]
        mov ecx, [esp + 12]
        mov eax, {number}
        int 0x80
        pop ebx
        ret
    """


I386 = (
    # arch/x86/entry/vdso/vdso32/system_call.S: the system call entry AT_SYSINFO points at
    # (int $0x80: the path Linux's takes on a CPU without SYSENTER/SYSCALL for it)
    ("__kernel_vsyscall", "LINUX_2.5", """
        int 0x80
        ret
    """),
    # vdso32/sigreturn.S: the byte sequences gdb and libgcc's unwinders recognise as the
    # signal trampolines (popl %eax; movl $__NR_sigreturn, %eax; int $0x80, and rt_sigreturn)
    ("__kernel_sigreturn", "LINUX_2.5", """
        pop eax
        mov eax, 119
        int 0x80
    """),
    ("__kernel_rt_sigreturn", "LINUX_2.5", """
        mov eax, 173
        int 0x80
    """),
    ("__vdso_clock_gettime", "LINUX_2.6", _i386_clock_gettime(265, wide=False)),
    ("__vdso_clock_gettime64", "LINUX_2.6", _i386_clock_gettime(403, wide=True)),
    ("__vdso_gettimeofday", "LINUX_2.6", f"""
        push ebx
        push esi
        mov esi, [esp + 12]
        test esi, esi
        jz zone
        call here
    here:
        pop ebx
        and ebx, -4096
        rdtsc
        add eax, [ebx - {VVAR_DISTANCE}]
        adc edx, [ebx - {VVAR_DISTANCE - 4}]
        mov ecx, 1000000000
        div ecx
        mov [esi], eax
        mov eax, edx
        xor edx, edx
        mov ecx, 1000
        div ecx
        mov [esi + 4], eax
    zone:
        mov esi, [esp + 16]
        test esi, esi
        jz done
        mov dword ptr [esi], 0
        mov dword ptr [esi + 4], 0
    done:
        pop esi
        pop ebx
        xor eax, eax
        ret
    """),
    ("__vdso_time", "LINUX_2.6", f"""
        push ebx
        call here
    here:
        pop ebx
        and ebx, -4096
        rdtsc
        add eax, [ebx - {VVAR_DISTANCE}]
        adc edx, [ebx - {VVAR_DISTANCE - 4}]
        mov ecx, 1000000000
        div ecx
        mov ecx, [esp + 8]
        test ecx, ecx
        jz done
        mov [ecx], eax
    done:
        pop ebx
        ret
    """),
    ("__vdso_clock_getres", "LINUX_2.6", _i386_clock_getres(266, wide=False)),
    ("__vdso_clock_getres_time64", "LINUX_2.6", _i386_clock_getres(406, wide=True)),
    ("__vdso_getcpu", "LINUX_2.6", """
        mov ecx, [esp + 4]
        test ecx, ecx
        jz node
        mov dword ptr [ecx], 0
    node:
        mov ecx, [esp + 8]
        test ecx, ecx
        jz done
        mov dword ptr [ecx], 0
    done:
        xor eax, eax
        ret
    """),
)

FUNCTIONS = {"x86_64": X86_64, "i386": I386}

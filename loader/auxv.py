"""Auxiliary vector entry types (include/uapi/linux/auxvec.h and arch/x86/include/uapi/asm/auxvec.h)."""

AT_NULL = 0             # end of the vector
AT_IGNORE = 1
AT_EXECFD = 2
AT_PHDR = 3             # program headers of the executable, in memory
AT_PHENT = 4            # size of one program header
AT_PHNUM = 5            # number of program headers
AT_PAGESZ = 6
AT_BASE = 7             # load address of the interpreter (0 for a static executable)
AT_FLAGS = 8
AT_ENTRY = 9            # entry point of the executable
AT_NOTELF = 10
AT_UID = 11
AT_EUID = 12
AT_GID = 13
AT_EGID = 14
AT_PLATFORM = 15        # address of a string naming the CPU ("x86_64", "i686")
AT_HWCAP = 16           # CPUID.01H:EDX on x86
AT_CLKTCK = 17          # frequency of times()
AT_SECURE = 23
AT_BASE_PLATFORM = 24
AT_RANDOM = 25          # address of 16 random bytes (stack protector / pointer guard seeds)
AT_HWCAP2 = 26
AT_RSEQ_FEATURE_SIZE = 27
AT_RSEQ_ALIGN = 28
AT_EXECFN = 31          # address of the filename passed to execve
AT_SYSINFO = 32         # i386 only: entry point of the vDSO's __kernel_vsyscall
AT_SYSINFO_EHDR = 33    # address of the vDSO's ELF header
AT_MINSIGSTKSZ = 51

# For reports and debugging output; a tuple of pairs so iteration order is fixed.
AUXV_NAMES: dict[int, str] = dict((
    (AT_NULL, "AT_NULL"), (AT_IGNORE, "AT_IGNORE"), (AT_EXECFD, "AT_EXECFD"), (AT_PHDR, "AT_PHDR"),
    (AT_PHENT, "AT_PHENT"), (AT_PHNUM, "AT_PHNUM"), (AT_PAGESZ, "AT_PAGESZ"), (AT_BASE, "AT_BASE"),
    (AT_FLAGS, "AT_FLAGS"), (AT_ENTRY, "AT_ENTRY"), (AT_NOTELF, "AT_NOTELF"), (AT_UID, "AT_UID"),
    (AT_EUID, "AT_EUID"), (AT_GID, "AT_GID"), (AT_EGID, "AT_EGID"), (AT_PLATFORM, "AT_PLATFORM"),
    (AT_HWCAP, "AT_HWCAP"), (AT_CLKTCK, "AT_CLKTCK"), (AT_SECURE, "AT_SECURE"),
    (AT_BASE_PLATFORM, "AT_BASE_PLATFORM"), (AT_RANDOM, "AT_RANDOM"), (AT_HWCAP2, "AT_HWCAP2"),
    (AT_RSEQ_FEATURE_SIZE, "AT_RSEQ_FEATURE_SIZE"), (AT_RSEQ_ALIGN, "AT_RSEQ_ALIGN"), (AT_EXECFN, "AT_EXECFN"),
    (AT_SYSINFO, "AT_SYSINFO"), (AT_SYSINFO_EHDR, "AT_SYSINFO_EHDR"), (AT_MINSIGSTKSZ, "AT_MINSIGSTKSZ"),
))


def auxv_name(key: int) -> str:
    return AUXV_NAMES.get(key, f"AT_{key}")

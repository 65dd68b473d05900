"""Machine code of the vDSO's functions, written by `python3 -m kernel_model.vdso.assemble`
from source.py (do not edit by hand)."""

CODE = {
    'x86_64': {
        '__vdso_clock_gettime': bytes.fromhex('89ff83ff0f773c488d0d000000004881e100f0ffff488b8cf900a0ffff4883f9ff74200f3148c1e2204809d04801c831d2b900ca9a3b48f7f14889064889560831c0c3b8e40000000f05c3'),
        '__vdso_gettimeofday': bytes.fromhex('4885ff743f488d0d000000004881e100f0ffff4c8b8100a0ffff0f3148c1e2204809d04c01c031d2b900ca9a3b48f7f14889074889d031d2b9e803000048f7f1488947084885f6740748c7060000000031c0c3'),
        '__vdso_time': bytes.fromhex('488d0d000000004881e100f0ffff4c8b8100a0ffff0f3148c1e2204809d04c01c031d2b900ca9a3b48f7f14885ff7403488907c3'),
        '__vdso_getcpu': bytes.fromhex('4885ff7406c707000000004885f67406c7060000000031c0c3'),
        '__vdso_clock_getres': bytes.fromhex('89ff83ff0f7730488d0d000000004881e100f0ffff4883bcf900a0ffffff74174885f6740f48c7060000000048c746080100000031c0c3b8e50000000f05c3'),
    },
    'i386': {
        '__kernel_vsyscall': bytes.fromhex('cd80c3'),
        '__kernel_sigreturn': bytes.fromhex('58b877000000cd80'),
        '__kernel_rt_sigreturn': bytes.fromhex('b8ad000000cd80'),
        '__vdso_clock_gettime': bytes.fromhex('8b44240483f80f7740e8000000005981e100f0ffff8d8cc100a0ffff8339ff7506837904ff742253568b198b71040f3101d811f2b900ca9a3bf7f18b4c241089018951045e5b31c0c3538b5c24088b4c240cb809010000cd805bc3'),
        '__vdso_clock_gettime64': bytes.fromhex('8b44240483f80f774ee8000000005981e100f0ffff8d8cc100a0ffff8339ff7506837904ff743053568b198b71040f3101d811f2b900ca9a3bf7f18b4c24108901c7410400000000895108c7410c000000005e5b31c0c3538b5c24088b4c240cb893010000cd805bc3'),
        '__vdso_gettimeofday': bytes.fromhex('53568b74240c85f67431e8000000005b81e300f0ffff0f31038300a0ffff139304a0ffffb900ca9a3bf7f1890689d031d2b9e8030000f7f18946048b74241085f6740dc70600000000c74604000000005e5b31c0c3'),
        '__vdso_time': bytes.fromhex('53e8000000005b81e300f0ffff0f31038300a0ffff139304a0ffffb900ca9a3bf7f18b4c240885c9740289015bc3'),
        '__vdso_clock_getres': bytes.fromhex('8b44240483f80f7736e8000000005981e100f0ffff8d8cc100a0ffff8339ff7506837904ff74188b4c240885c9740dc70100000000c741040100000031c0c3538b5c24088b4c240cb80a010000cd805bc3'),
        '__vdso_clock_getres_time64': bytes.fromhex('8b44240483f80f7744e8000000005981e100f0ffff8d8cc100a0ffff8339ff7506837904ff74268b4c240885c9741bc70100000000c7410400000000c7410801000000c7410c0000000031c0c3538b5c24088b4c240cb896010000cd805bc3'),
        '__vdso_getcpu': bytes.fromhex('8b4c240485c97406c701000000008b4c240885c97406c7010000000031c0c3'),
    },
}

# (offset, CFA = stack pointer + this) where the CFA moves (cfa_rows.py)
CFA_ROWS = {
    'x86_64': {
        '__vdso_clock_gettime': ((0, 8),),
        '__vdso_gettimeofday': ((0, 8),),
        '__vdso_time': ((0, 8),),
        '__vdso_getcpu': ((0, 8),),
        '__vdso_clock_getres': ((0, 8),),
    },
    'i386': {
        '__kernel_vsyscall': ((0, 4),),
        '__kernel_sigreturn': ((0, 4), (1, 0)),
        '__kernel_rt_sigreturn': ((0, 4),),
        '__vdso_clock_gettime': ((0, 4), (14, 8), (15, 4), (40, 8), (41, 12), (69, 8), (70, 4), (74, 8), (90, 4)),
        '__vdso_clock_gettime64': ((0, 4), (14, 8), (15, 4), (40, 8), (41, 12), (83, 8), (84, 4), (88, 8), (104, 4)),
        '__vdso_gettimeofday': ((0, 4), (1, 8), (2, 12), (15, 16), (16, 12), (81, 8), (82, 4)),
        '__vdso_time': ((0, 4), (1, 8), (6, 12), (7, 8), (45, 4)),
        '__vdso_clock_getres': ((0, 4), (14, 8), (15, 4), (64, 8), (80, 4)),
        '__vdso_clock_getres_time64': ((0, 4), (14, 8), (15, 4), (78, 8), (94, 4)),
        '__vdso_getcpu': ((0, 4),),
    },
}

"""Which futex a word of guest memory is (Linux kernel/futex/core.c get_futex_key).

A private futex (FUTEX_PRIVATE_FLAG), or any word in private memory, is named by its address
space and address: only threads of that space can meet on it. A word in shared pages (a
MAP_SHARED area, a file's page cache) is named by the pages and its offset in them, so two
processes that map the page — at any address, even after one of them has exec'd and mapped
it anew — wait and wake on the same futex.
"""


def futex_key(space, uaddr: int, private: bool = False) -> tuple:
    if not private:
        found = space.machine.mem.shared_at(uaddr)
        if found is not None:
            pages, offset = found
            return ("futex", "shared", pages.serial, offset)
    return ("futex", space.serial, uaddr)

"""userfaultfd (fs/userfaultfd.c, mm/userfaultfd.c): page faults of registered ranges handed to
a thread of the process through a file, instead of being resolved by the kernel.

A page of a range registered for missing pages has no page in the Machine until it is filled
(UFFDIO_COPY, UFFDIO_ZEROPAGE) or touched before the registration; a write to a page of a
range registered for write protection faults while UFFDIO_WRITEPROTECT protects it. Such a
fault queues a message on the file and puts the faulting thread to sleep (handle_userfault),
and the instruction runs again once a resolving ioctl wakes it.
"""

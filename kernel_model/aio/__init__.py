"""Native asynchronous I/O (fs/aio.c): io_setup, io_submit, io_getevents, io_cancel, io_destroy.

A context is a ring of completion events mapped into the process, as Linux maps it (struct
aio_ring at the context's address: libaio and LTP read it), and an entry in the address
space's table of contexts. Requests complete when they are submitted (the model has no
device to wait for), except a poll whose file is not ready yet: it completes when a later
io_getevents finds the file ready, or when io_cancel cancels it.
"""

"""The mark a traced system call carries between its entry stop and its run (the tracing
facility's syscall-enter-stop, kernel_model/debug/tracing/syscall_stops.py): the facility sets
it in `thread.restart` when it stops the thread at the call's entry, and the dispatcher
(dispatch.py) reads it when the tracer resumes the thread, so that the call runs without a
second entry stop. Here, beside the dispatcher, so that the dispatcher needs nothing of the door.
"""
ENTERED = "trace_entry_stopped"         # thread.restart key: the entry stop was made

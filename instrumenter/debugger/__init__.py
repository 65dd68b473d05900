"""The debugger of US 6,957,421 (US 6,957,421): debugging instrumented code through the debug
interface (debugger.py); the GDB remote stub on it is trapline/gdbserver/."""

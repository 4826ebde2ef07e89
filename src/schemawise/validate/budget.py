"""The static check under the run's deadline.

The check is pure Python (sqlglot's parser and scope analysis, then ours). Some shapes of SQL
make it slow — an outside attack found 400 NATURAL JOINs taking 28 s to analyse — and no cap
on shapes can be proved complete, so the check itself gets the run's deadline: a timer raises
`CheckTimeoutError` inside the thread doing the check (CPython's PyThreadState_SetAsyncExc, the
only way to stop pure Python code in any thread, main or not). The exception arrives at the
next bytecode boundary; a C call in progress (a regex, the tokenizer) finishes first, and
those are linear in the 100 KB input cap.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable


class CheckTimeoutError(Exception):
    """The check did not finish before the run's deadline."""


def within[T](seconds: float, work: Callable[[], T]) -> T:
    """`work()` in this thread, interrupted with CheckTimeoutError after `seconds`."""
    if seconds <= 0:
        raise CheckTimeoutError
    thread_id = threading.get_ident()
    lock = threading.Lock()
    state = {"done": False, "fired": False}

    def interrupt() -> None:
        with lock:
            if state["done"]:
                return
            state["fired"] = True
            ctypes.pythonapi.PyThreadState_SetAsyncExc(
                ctypes.c_ulong(thread_id), ctypes.py_object(CheckTimeoutError)
            )

    timer = threading.Timer(seconds, interrupt)
    timer.daemon = True
    timer.start()
    try:
        try:
            return work()
        finally:
            # Once done is set no interrupt can be sent; one sent before it is delivered at
            # the next bytecode, which is still inside this try.
            with lock:
                state["done"] = True
            timer.cancel()
    finally:
        if state["fired"]:
            # Clear an interrupt that could not be delivered yet (none should remain).
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), None)

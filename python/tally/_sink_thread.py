"""A remote sink's calls on a Python thread of its own (docs/contract/remote-sinks.md "At exit").

The sink's follower, a Rust thread, hands each call here and waits outside the interpreter for
its reply. A call that is still waiting on the network when the interpreter exits is then on a
daemon thread Python started, which CPython ends cleanly, instead of on a thread whose Rust
frames would abort the process.
"""

from __future__ import annotations

import queue
import threading
from typing import Any, Callable, Optional, Tuple

_Reply = Callable[[Optional[BaseException], Any], None]


class SinkThread:
    """One daemon thread making the calls :meth:`submit` hands it, in order."""

    def __init__(self, name: str) -> None:
        self._calls: "queue.SimpleQueue[Optional[Tuple[Callable[..., Any], Tuple[Any, ...], _Reply]]]" = queue.SimpleQueue()
        threading.Thread(target=self._run, name=f"tally-{name}", daemon=True).start()

    def submit(self, fn: Callable[..., Any], args: Tuple[Any, ...], reply: _Reply) -> None:
        """Call ``fn(*args)`` on the thread, then ``reply(error, result)``."""
        self._calls.put((fn, args, reply))

    def stop(self) -> None:
        """End the thread once the calls before are made."""
        self._calls.put(None)

    def _run(self) -> None:
        while True:
            call = self._calls.get()
            if call is None:
                return
            fn, args, reply = call
            try:
                result = fn(*args)
            except BaseException as e:  # the follower reports it, naming the sink
                reply(e, None)
            else:
                reply(None, result)

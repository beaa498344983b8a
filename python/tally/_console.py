"""The user's output while a Logger's live panel runs.

`print()`, `logging` and `warnings` write to `sys.stdout`/`sys.stderr`. While the live panel
draws at the bottom of the terminal, those writes would land inside its frame, so the streams
that write to the terminal are replaced by line proxies: each complete line goes above the
panel and stays in the scrollback. `Redirect.restore()` puts the originals back when the panel
stops, leaving alone any stream the user replaced meanwhile. See `docs/contract/panel.md`,
"The user's output under the panel".
"""

from __future__ import annotations

import io
import logging
import os
import sys
import threading
from typing import Any, Protocol, TextIO


class _Console(Protocol):
    def above(self, line: str) -> bool: ...


def _writes_to_terminal(stream: Any) -> bool:
    try:
        return os.isatty(stream.fileno())
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return False


class LineProxy(io.TextIOBase):
    """A text stream that hands complete lines to the panel.

    A partial line waits for its newline, or for `flush()` (as `print(..., flush=True)` calls
    it), except one with a carriage return: a progress bar redrawn in place would otherwise
    leave one line per redraw, so it waits for its newline and shows its final state. Partial lines are kept per thread: `print()` writes its text and
    its newline in separate calls, so threads printing at once would otherwise splice their
    lines. Once the panel has stopped, lines go to the original stream.
    Anything else (`fileno()`, `encoding`, `buffer`) is the original stream's, so binary
    writes to `sys.stdout.buffer` bypass the panel.
    """

    def __init__(self, console: _Console, original: TextIO) -> None:
        super().__init__()
        self._console = console
        self._original = original
        self._partial: dict[int, list[str]] = {}
        self._lock = threading.RLock()

    @property
    def original(self) -> TextIO:
        """The stream this proxy replaced."""
        return self._original

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        thread = threading.get_ident()
        with self._lock:
            lines = text.split("\n")
            if len(lines) > 1:
                lines[0] = "".join(self._partial.pop(thread, ())) + lines[0]
                for line in lines[:-1]:
                    self._emit(line)
            if lines[-1]:
                self._partial.setdefault(thread, []).append(lines[-1])
        return len(text)

    def _emit(self, line: str) -> None:
        if not self._console.above(line):
            self._original.write(line + "\n")
            self._original.flush()

    def flush(self) -> None:
        """Hand over this thread's partial line."""
        thread = threading.get_ident()
        with self._lock:
            partial = "".join(self._partial.get(thread, ()))
            if partial and "\r" not in partial:
                del self._partial[thread]
                self._emit(partial)

    def flush_all(self) -> None:
        """Hand over every thread's partial line (the panel is about to stop)."""
        with self._lock:
            partials, self._partial = self._partial, {}
            for partial in partials.values():
                self._emit("".join(partial))

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self._original.isatty()

    def fileno(self) -> int:
        return self._original.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._original.encoding

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return self._original.errors

    def __getattr__(self, name: str) -> Any:
        return getattr(self._original, name)


class Redirect:
    """`sys.stdout`/`sys.stderr`, when they write to the terminal, and the logging handlers
    holding them, redirected to line proxies until `restore()`."""

    def __init__(self, console: _Console) -> None:
        self._streams: list[tuple[str, LineProxy]] = []
        self._handlers: list[tuple[logging.StreamHandler[Any], LineProxy]] = []
        for name in ("stdout", "stderr"):
            original = getattr(sys, name)
            if isinstance(original, LineProxy) or not _writes_to_terminal(original):
                continue
            proxy = LineProxy(console, original)
            setattr(sys, name, proxy)
            self._streams.append((name, proxy))
        # Handlers made before the panel (logging.basicConfig) hold the stream object itself,
        # not `sys.stderr`: point those at the proxy too, on every logger.
        by_original = {id(p.original): p for _, p in self._streams}
        for handler in _stream_handlers():
            target = by_original.get(id(handler.stream))
            if target is not None:
                handler.setStream(target)
                self._handlers.append((handler, target))

    def flush(self) -> None:
        """Hand partial lines to the panel (before its last frame)."""
        for _, proxy in self._streams:
            proxy.flush_all()

    def restore(self) -> None:
        """Put the original streams back where the proxies still are. Idempotent."""
        self.flush()
        for handler, proxy in self._handlers:
            if handler.stream is proxy:
                handler.setStream(proxy.original)
        for name, proxy in self._streams:
            if getattr(sys, name) is proxy:
                setattr(sys, name, proxy.original)
        self._handlers.clear()
        self._streams.clear()


def _stream_handlers() -> list[logging.StreamHandler[Any]]:
    loggers: list[Any] = [logging.getLogger()]
    loggers += list(logging.Logger.manager.loggerDict.values())
    found: list[logging.StreamHandler[Any]] = []
    for lg in loggers:
        for h in getattr(lg, "handlers", ()):
            if isinstance(h, logging.StreamHandler) and h not in found:
                found.append(h)
    return found

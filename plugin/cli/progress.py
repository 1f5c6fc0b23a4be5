"""A minimal progress bar on stderr, drawn only when stderr is a terminal."""

from __future__ import annotations

import sys
import time
from typing import IO

__all__ = ["ProgressBar"]


class ProgressBar:
    """``\\r``-redrawn bar; silent unless ``stream.isatty()`` (or ``enabled=True``).

    Parameters
    ----------
    label : str
        Shown before the bar.
    total : int, optional
        Units of work; without it only the count is shown.
    stream : file, default: sys.stderr
    enabled : bool, optional
        Force on or off; default: on exactly when ``stream`` is a terminal.
    min_interval : float, default: 0.1
        Seconds between redraws.
    """

    def __init__(self, label: str, total: int | None = None, *, stream: IO[str] | None = None,
                 enabled: bool | None = None, min_interval: float = 0.1) -> None:
        self.stream = sys.stderr if stream is None else stream
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty()) if callable(isatty) else False
        self.enabled = enabled
        self.label = label
        self.total = total
        self.min_interval = min_interval
        self._last = 0.0
        self._drawn = False

    def update(self, done: int, total: int | None = None, label: str | None = None) -> None:
        if not self.enabled:
            return
        if total is not None:
            self.total = total
        if label is not None:
            self.label = label
        now = time.monotonic()
        final = self.total is not None and done >= self.total
        if not final and now - self._last < self.min_interval:
            return
        self._last = now
        if self.total:
            fraction = min(done / self.total, 1.0)
            width = 24
            filled = int(round(fraction * width))
            text = f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] {done}/{self.total}"
        else:
            text = f"\r{self.label} {done}"
        self.stream.write(text + "\x1b[K")
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self.enabled and self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._drawn = False

    def __enter__(self) -> "ProgressBar":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

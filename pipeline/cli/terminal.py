"""The terminal sink's one sanitiser: everything the CLI prints goes out through `out` or `err`.

Stored text (log lines, incident titles, people's names, comments, reasons, audit notes and their
CSV export) is printed where it stands, so an escape sequence in it would act on the reader's
terminal: OSC 52 writes the clipboard, OSC 0 sets the window title, `ESC[2J` clears the screen, a
carriage return hides what came before it. Every control character other than newline and tab
(C0, DEL and C1) is shown instead, as its `\\xNN` escape, and every character that is invisible or
changes the text's direction (a right-to-left override makes `gpj.exe` read `exe.jpg`; zero-width
spaces, the byte-order mark, tag characters) as `‹U+XXXX›` (`pipeline.state.visible`). JSON needs no
care (json.dumps escapes them as `\\u001b`, `\\u202e`), but goes the same way. tqdm's progress bars (pipeline/cli/progress.py) draw on
stderr themselves and carry no stored text. Log records (a warning quoting a log line or a path) go
out through `err` too, once `log_to_terminal` has set the handler (`python -m pipeline` does).
"""
from __future__ import annotations

import logging
import re
import sys

from pipeline.state import visible

_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def shown(text: str) -> str:
    """`text` with every control character but newline and tab written out as `\\xNN`, and every
    invisible or direction-changing one as `‹U+XXXX›`."""
    return visible(_CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text))


def out(text: str) -> None:
    """Print `text` (a whole line or lines, newline included) on stdout, its controls shown."""
    sys.stdout.write(shown(text))


def err(text: str) -> None:
    """Print `text` on stderr, its controls shown."""
    sys.stderr.write(shown(text))


class _TerminalHandler(logging.Handler):
    """Log records written through `err`: a logged message holds no live escape sequence either."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            err(self.format(record) + "\n")
        except Exception:  # logging's own contract: a failed emit is reported by handleError, never raised
            self.handleError(record)


def log_to_terminal() -> None:
    """Warnings and errors of every logger to stderr through the sanitiser (what Python's last-resort
    handler printed raw), unless the process configured logging itself."""
    root = logging.getLogger()
    if not root.handlers:
        handler = _TerminalHandler(logging.WARNING)
        handler.setFormatter(logging.Formatter("%(message)s"))  # as the last-resort handler wrote them
        root.addHandler(handler)

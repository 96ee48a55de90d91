"""The terminal sink's one sanitiser: everything the CLI prints goes out through `out` or `err`.

Stored text (log lines, incident titles, people's names, comments, reasons, audit notes and their
CSV export) is printed where it stands, so an escape sequence in it would act on the reader's
terminal: OSC 52 writes the clipboard, OSC 0 sets the window title, `ESC[2J` clears the screen, a
carriage return hides what came before it. Every control character other than newline and tab
(C0, DEL and C1) is shown instead, as its `\\xNN` escape. JSON needs no care (json.dumps escapes
them as `\\u001b`), but goes the same way. tqdm's progress bars (pipeline/cli/progress.py) draw on
stderr themselves and carry no stored text.
"""
from __future__ import annotations

import re
import sys

_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def shown(text: str) -> str:
    """`text` with every control character but newline and tab written out as `\\xNN`."""
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def out(text: str) -> None:
    """Print `text` (a whole line or lines, newline included) on stdout, its controls shown."""
    sys.stdout.write(shown(text))


def err(text: str) -> None:
    """Print `text` on stderr, its controls shown."""
    sys.stderr.write(shown(text))

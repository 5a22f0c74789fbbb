"""The characters the PDF can show: a translation adds no character that no font of the PDF has.

XeLaTeX stops the PDF at a character its fonts lack (conf.py sets
``\\tracinglostchars=3``), so one such character in one translation would
fail ``make pdf`` and Read the Docs for every later build, while browsers
show it from any font. ``make check`` (checks/safety.py) and every build
(extensions/compiled_catalogs.py, which leaves the entry out and fails)
refuse it, from ``pdf_glyphs.txt``: the characters for which XeLaTeX, with
the PDF's fonts in every family and style, reported no missing glyph
(tools/pdf_glyphs.py writes it; tests/test_pdf_glyphs.py checks it against
XeLaTeX where TeX is installed). Invisible characters have a rule of their
own (words.controls).
"""

import bisect
import functools
import unicodedata
from pathlib import Path

from gate.words import controls

TABLE = Path(__file__).with_name("pdf_glyphs.txt")


def ranges(codes):
    """The sorted code points *codes* as ``[(first, last)]`` runs."""
    runs = []
    for code in codes:
        if runs and runs[-1][1] == code - 1:
            runs[-1][1] = code
        else:
            runs.append([code, code])
    return [tuple(run) for run in runs]


@functools.cache
def _table():
    """The table's runs: (first code points, last code points), sorted."""
    firsts, lasts = [], []
    for line in TABLE.read_text("utf-8").splitlines():
        if line and not line.startswith("#"):
            first, _, last = line.partition("-")
            firsts.append(int(first, 16))
            lasts.append(int(last or first, 16))
    return firsts, lasts


def in_pdf(char):
    """True if every font of the PDF has *char* (a line break and a tab need none)."""
    if char in "\n\t":
        return True
    firsts, lasts = _table()
    at = bisect.bisect_right(firsts, ord(char)) - 1
    return at >= 0 and ord(char) <= lasts[at]


def glyphless(english, translation):
    """Why *translation* of *english* cannot be in the PDF, or None: the characters it adds
    that no font of the PDF has (invisible ones are words.controls' to name)."""
    missing = [
        c for c in dict.fromkeys(translation) if c not in english and not in_pdf(c) and not controls(c)
    ]
    if not missing:
        return None
    named = ", ".join(f"{c} U+{ord(c):04X} ({unicodedata.name(c, 'unnamed')})" for c in missing[:5])
    return f"it holds characters no font of the PDF has, which would stop make pdf: {named}"

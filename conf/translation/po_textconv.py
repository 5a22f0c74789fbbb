"""Print a catalog the way a reviewer wants to diff it: git's textconv for *.po files.

Usage (once per clone, optional; .gitattributes already names the driver):
    git config diff.po.textconv "python3 conf/translation/po_textconv.py"

Then ``git diff``, ``git log -p`` and ``git show`` print each catalog with its
location comments (``#:``) left out and every string on one line, so a
re-wrapped paragraph or a moved location shows no change and an edited one
shows as one line; ``git diff --word-diff`` then marks the words. Standard
library only, so it runs with any Python 3. A file it cannot read is printed
as it is: a diff never fails because of it.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # conf/: the translation package
from translation.canonical_po import CatalogError, read, render  # noqa: E402

UNWRAPPED = 1 << 30  # a width no string reaches: lines break only after "\n"


def readable(text):
    """Return *text* (a catalog) without locations and with unwrapped strings."""
    try:
        entries = read(text.lstrip("\ufeff"))
    except CatalogError:
        return text
    for entry in entries:
        entry.references = []
    return render(entries, page_width=UNWRAPPED, header=False)


def main(argv=None):
    """Print the readable form of the catalog named on the command line."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    data = Path(argv[0]).read_bytes()
    try:
        text = readable(data.decode("utf-8"))
    except UnicodeDecodeError:
        sys.stdout.buffer.write(data)
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Print a catalog the way a reviewer wants to diff it: git's textconv for *.po files.

Usage (once per clone, optional; .gitattributes already names the driver):
    git config diff.po.textconv "python3 conf/catalogs/textconv.py"

Then ``git diff``, ``git log -p`` and ``git show`` print each catalog with its
location comments (``#:``) left out and every string on one line, so a
re-wrapped paragraph or a moved location shows no change and an edited one
shows as one line; ``git diff --word-diff`` then marks the words. A line
filter, not a reader: it joins each quoted continuation line to the string
before it. Standard library only, so it runs with any Python 3; a file that
is not UTF-8 is printed as it is.
"""

import re
import sys
from pathlib import Path

# A quoted string that goes on: '"', '#| "', '#~ "' at the start of a line.
_CONTINUATION = re.compile(r'^(#~ |#\| |#~\| )?"')


def readable(text):
    """Return *text* (a catalog) without locations and with each string on one line."""
    out = []
    for line in text.splitlines():
        if line.startswith("#:"):
            continue
        match = _CONTINUATION.match(line)
        if match and out and out[-1].endswith('"') and out[-1].startswith(match[1] or ""):
            out[-1] = out[-1][:-1] + line[match.end() :]  # "a" + "b" is "ab"
            continue
        out.append(line)
    return "".join(f"{line}\n" for line in out)


def main(argv=None):
    """Print the readable form of the catalog named on the command line."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    data = Path(argv[0]).read_bytes()
    try:
        sys.stdout.write(readable(data.decode("utf-8")))
    except UnicodeDecodeError:
        sys.stdout.buffer.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())

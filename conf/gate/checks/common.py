"""What every check reports: a Problem at a file and line, an error or a warning."""

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from sphinx.transforms.i18n import parse_noqa

from site_layout import GLOSSARY  # noqa: F401  (the runner reads it from here)
from catalogs.po import printable

ERROR, WARNING = "error", "warning"


@dataclass(frozen=True, order=True)
class Problem:
    """One problem, printed as ``file:line: [check] message`` (``warning: message``)."""

    path: str
    line: int
    check: str
    message: str
    severity: str = ERROR  # errors fail make check; warnings are printed only

    def __str__(self):
        shown = self.message if self.severity == ERROR else f"{self.severity}: {self.message}"
        return f"{self.path}:{self.line}: [{self.check}] {shown}"


@dataclass(frozen=True)
class Finding:
    """What an entry check says about one translation."""

    message: str
    severity: str = ERROR
    at: str = ""  # the part of the msgstr it is about: the problem's line is that one's


def error(message, at=""):
    """A finding that is almost always a real problem: it fails make check."""
    return Finding(message, ERROR, at)


def warning(message, at=""):
    """A finding worth a look that is often fine: printed, never failing."""
    return Finding(message, WARNING, at)


@dataclass(frozen=True)
class Message:
    """One translated entry, as the entry checks see it."""

    msgid: str
    msgstr: str
    lang: str
    syntax: str  # how Sphinx parses it: "rst", "myst" or "text"
    project: object  # project.Project: the roles and targets that exist
    catalog: Path = None  # the catalog it is in

    @property
    def noqa(self):
        """Whether the translation ends with ``#noqa``: Sphinx then leaves its references
        unchecked (sphinx/transforms/i18n.py), and shows it without those words."""
        return parse_noqa(self.msgstr)[1]


def split_url(url):
    """Return urlsplit(*url*), or an empty split for text that is no URL at all.

    Markdown beside a URL (``https://x.org](https://x.org)``) makes urlsplit
    raise on the "]"; such text links nowhere, and a check must not crash on it.
    """
    try:
        return urlsplit(url)
    except ValueError:
        return urlsplit("")


def shown(path):
    """Return *path* relative to the working directory if it lies below it, printable
    (catalogs.printable: a name that is not plain is escaped, never printed as it is)."""
    path = os.path.abspath(path)
    relative = os.path.relpath(path)
    return printable(path if relative.startswith("..") else relative)


def brief(text, width=60):
    """Return *text* on one line, cut to about *width* characters."""
    text = " ".join(text.split())
    return repr(text if len(text) <= width else text[: width - 1] + "…")

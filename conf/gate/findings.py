"""What the checks see and say: a Message in, Findings out, Problems printed at a file's line."""

from dataclasses import dataclass
from pathlib import Path

from sphinx.transforms.i18n import parse_noqa

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
    """What a check says about one translation."""

    message: str
    severity: str = ERROR
    at: str = ""  # the part of the msgstr it is about: the problem's line is that one's
    check: str = ""  # which check says it, where one pass says what several checks find


def error(message, at="", check=""):
    """A finding that is almost always a real problem: it fails make check."""
    return Finding(message, ERROR, at, check)


def warning(message, at="", check=""):
    """A finding worth a look that is often fine: printed, never failing."""
    return Finding(message, WARNING, at, check)


@dataclass(frozen=True)
class Message:
    """One translated entry, as the checks see it."""

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


def brief(text, width=60):
    """Return *text* on one line, cut to about *width* characters."""
    text = " ".join(text.split())
    return repr(text if len(text) <= width else text[: width - 1] + "…")

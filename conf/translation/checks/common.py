"""What every check reports: a Problem at a file and line."""

import os
from dataclasses import dataclass
from pathlib import Path


ROOT = Path(__file__).resolve().parents[3]
GLOSSARY = ROOT / "locale" / "glossary.csv"


@dataclass(frozen=True, order=True)
class Problem:
    """One problem, printed as ``file:line: [check] message``."""

    path: str
    line: int
    check: str
    message: str

    def __str__(self):
        return f"{self.path}:{self.line}: [{self.check}] {self.message}"


def shown(path):
    """Return *path* relative to the working directory if it lies below it."""
    path = os.path.abspath(path)
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def brief(text, width=60):
    """Return *text* on one line, cut to about *width* characters."""
    text = " ".join(text.split())
    return repr(text if len(text) <= width else text[: width - 1] + "…")

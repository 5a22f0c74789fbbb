"""syntax: ``msgfmt -c`` rejects a catalog."""

import os
import re
import subprocess

from .common import Problem, shown


_MSGFMT_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?:\d+:)? (?P<message>.*)$")


def check(po_path):
    """Yield msgfmt -c's errors about *po_path* at msgfmt's file and line."""
    result = subprocess.run(
        ["msgfmt", "-c", "-o", os.devnull, str(po_path)], capture_output=True, text=True
    )
    if result.returncode == 0:
        return  # header warnings (no Last-Translator, ...) do not fail the build
    errors = [_MSGFMT_LINE.match(line) for line in result.stderr.splitlines()]
    errors = [m for m in errors if m and not m["message"].startswith("warning:")]
    for match in errors:
        yield Problem(shown(match["path"]), int(match["line"]), "syntax", match["message"])
    if not errors:
        yield Problem(shown(po_path), 1, "syntax", result.stderr.strip() or "msgfmt -c failed")

"""Where the project's parts are: the one place that knows the checkout's layout."""

import hashlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONF = ROOT / "conf"
DOCS = ROOT / "docs"  # Sphinx's source folder
EXAMPLES = ROOT / "examples"  # the Sphinx-Gallery scripts
GALLERY_NAME = "auto_examples"  # the folder of docs/ Sphinx-Gallery writes their pages into
GALLERY = DOCS / GALLERY_NAME
LOCALE = ROOT / "locale"
GLOSSARY = LOCALE / "glossary.csv"
BUILD = ROOT / "_build"
POT_DIR = BUILD / "gettext"  # the extracted English: one .pot per page, sphinx.pot for the interface


def machinery_version():
    """A digest of what turns sources into pages: conf/ (code, templates) and the pins.

    The site's extensions give it to Sphinx as their ``env_version``: when it
    changes, Sphinx reads and writes every page again.
    """
    digest = hashlib.sha256()
    for path in sorted([ROOT / "requirements.txt", *CONF.rglob("*")]):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def language_digest(lang):
    """A digest of everything *lang*'s pages are made from: the pins, the glossary, docs/,
    examples/, conf/ and the language's catalogs (not generated files).

    ``make html`` keeps it beside each language's site (``_build/stamps/<lang>.sources``):
    the review page compares it to say which built pages predate a change.
    """
    digest = hashlib.sha256()
    files = [ROOT / "requirements.txt", GLOSSARY]
    for folder in (DOCS, EXAMPLES, CONF, LOCALE / lang):
        files += folder.rglob("*")
    for path in sorted(files):
        rel = path.relative_to(ROOT).as_posix()
        if path.is_file() and not re.search(rf"^docs/{GALLERY_NAME}/|__pycache__/|\.mo$", rel):
            digest.update(rel.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()

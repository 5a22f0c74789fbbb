"""Where the project's parts are: the one place that knows the checkout's layout."""

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
    import hashlib

    digest = hashlib.sha256()
    for path in sorted([ROOT / "requirements.txt", *CONF.rglob("*")]):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]

"""Where the project's parts are: the one place that knows the checkout's layout, and how
its files are hashed (:func:`files_digest`) and written (:func:`write_if_changed`)."""

import hashlib
import os
import re
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONF = ROOT / "conf"
DOCS = ROOT / "docs"  # Sphinx's source folder
EXAMPLES = ROOT / "examples"  # the Sphinx-Gallery scripts
GALLERY_NAME = "auto_examples"  # the folder of docs/ Sphinx-Gallery writes their pages into
GALLERY = DOCS / GALLERY_NAME
# The guides of docs/ the repository keeps for maintainers, reviewers and GPU recorders (the
# README's "Where to go next"): no page of the site, so never built, extracted or a change of it.
REPOSITORY_GUIDES = ("maintaining.md", "reviewing.md", "gpu.md")
LOCALE = ROOT / "locale"
GLOSSARY = LOCALE / "glossary.csv"
BUILD = ROOT / "_build"
POT_DIR = BUILD / "gettext"  # the extracted English: one .pot per page, sphinx.pot for the interface
COMPILED = BUILD / "catalogs"  # what Sphinx reads: the translations' checked catalogs, compiled
OFFLINE_FORMATS = ("pdf", "epub")  # make pdf, make epub: _build/<format>/<lang>/, one file each
# The folder of each language's pages (_build/html/<lang>/) the site links its offline copies in.
OFFLINE_FOLDER = "_offline"


def files_digest(paths):
    """The sha256 of the files among *paths* (folders are left out), in the order of their
    paths: each one's path, from the checkout's root where it is under it, and its bytes."""
    digest = hashlib.sha256()
    for path in sorted(map(Path, paths)):
        if path.is_file():
            name = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
            digest.update(name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def write_if_changed(path, data):
    """Replace *path* by the bytes *data* atomically, unless it holds exactly those; make its folder."""
    path = Path(path)
    if path.is_file() and path.read_bytes() == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    partial.write_bytes(data)
    partial.replace(path)


def offline_copies(lang):
    """*lang*'s built offline copies, ``{format: path}``: the one file of _build/<format>/<lang>/."""
    return {
        fmt: found[0]
        for fmt in OFFLINE_FORMATS
        if len(found := sorted((BUILD / fmt / lang).glob(f"*.{fmt}"))) == 1
    }


def linked_copies(lang):
    """The names of *lang*'s built offline copies, which its pages link: a change rewrites them."""
    return ",".join(path.name for path in offline_copies(lang).values())


def machinery_version():
    """A digest of what turns sources into pages: conf/ (code, templates) and the pins."""
    code = [path for path in CONF.rglob("*") if "__pycache__" not in path.parts]
    return files_digest([ROOT / "requirements.txt", *code])[:16]


# What lies among the sources but is no page's source (a path from the checkout's root): the
# gallery Sphinx-Gallery generates, the repository's guides, bytecode, compiled catalogs.
NOT_A_SOURCE = re.compile(
    rf"^docs/({GALLERY_NAME}/|({'|'.join(map(re.escape, REPOSITORY_GUIDES))})$)|__pycache__/|\.(mo|pyc)$"
)


def is_source(rel):
    """Whether the file at *rel* (relative to the checkout's root) is a source of the pages."""
    return not NOT_A_SOURCE.search(rel)


def language_digest(lang):
    """A digest of everything *lang*'s pages are made from: the pins, the glossary, docs/,
    examples/, conf/ and the language's catalogs (not generated files)."""
    files = [ROOT / "requirements.txt", GLOSSARY]
    for folder in (DOCS, EXAMPLES, CONF, LOCALE / lang):
        files += folder.rglob("*")
    return files_digest(path for path in files if is_source(path.relative_to(ROOT).as_posix()))


def copy_project(dest, with_gallery=True):
    """Copy the sources, catalogs and build machinery into *dest*, sharing this checkout's .venv.

    With *with_gallery*, also the executed gallery (docs/auto_examples): no example runs again.
    """
    dest = Path(dest)
    for name in ("docs", "examples", "conf", "locale"):
        shutil.copytree(ROOT / name, dest / name, symlinks=True)
    if not with_gallery:
        shutil.rmtree(dest / "docs" / GALLERY_NAME, ignore_errors=True)
    for name in ("Makefile", "requirements.txt", ".readthedocs.yaml"):
        shutil.copy2(ROOT / name, dest / name)
    (dest / ".venv").symlink_to(ROOT / ".venv")
    return dest

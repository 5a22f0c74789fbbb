"""What the checks know about the project a set of catalogs translates.

* Each catalog's syntax, as Sphinx parses its messages: a catalog translates one
  document (``gettext_compact = False``), which the sources have with its suffix
  (``.rst``: reST, ``.md``: MyST), or the templates name in their ``#:`` lines;
  generated documents (sphinx-gallery's) are reST, ``sphinx`` (the HTML
  templates' words) plain text. Another project's: each entry's ``#:`` line,
  else ``--syntax``.
* The roles the English uses (they exist: the English builds) besides Sphinx's.
* The targets that exist: the sources' labels, terms and documents, and every
  target the English refers to.
"""

import functools
import os
import posixpath
import re
from collections import Counter, defaultdict
from pathlib import Path

from languages import TRANSLATIONS
from catalogs.po import english, language_catalogs, messages, open_catalog, read
from gate.parse import builtin_roles, is_xref, parse, role_names

SUFFIXES = {".rst": "rst", ".txt": "rst", ".py": "rst", ".md": "myst", ".html": "text"}
_SUFFIX = re.compile(r"\.(rst|txt|py|md|html)\b")  # also "x.rst:-1", "x.rstNone"
_RST_LABEL = re.compile(r"^\s*\.\.\s+_([^_:\n][^:\n]*):\s*$", re.MULTILINE)
_MYST_LABEL = re.compile(r"^\(([^()\s]+)\)=\s*$", re.MULTILINE)
# Targets Sphinx itself provides.
STANDARD_LABELS = {"genindex", "modindex", "py-modindex", "search"}


def target_kind(role):
    """Return which inventory a cross-reference role's target must be in."""
    name = role.split(":")[-1]
    if name in ("ref", "numref", "term", "doc"):
        return "term" if name == "term" else "doc" if name == "doc" else "label"
    return None  # Python objects and the like: possibly in another project (intersphinx)


def _glossary_terms(lines):
    """Return the terms of the glossary whose body starts at *lines*[0]."""
    body = []
    for line in lines:
        if line.strip().startswith("```"):
            break  # the end of a MyST glossary
        body.append(line)
    entries = [line for line in body if line.strip() and not line.strip().startswith(":")]
    indent = min((len(line) - len(line.lstrip()) for line in entries), default=0)
    return {line.strip() for line in entries if len(line) - len(line.lstrip()) == indent}


def definitions(text):
    """Return ({labels}, {terms}) defined in a reST or MyST source *text*."""
    labels = {m.lower() for m in _RST_LABEL.findall(text) + _MYST_LABEL.findall(text)}
    terms = set()
    lines = text.splitlines()
    for number, line in enumerate(lines):
        if line.strip() == ".. glossary::":
            indent = len(line) - len(line.lstrip())
            body = []
            for following in lines[number + 1 :]:
                if following.strip() and len(following) - len(following.lstrip()) <= indent:
                    break
                body.append(following)
            terms |= _glossary_terms(body)
        elif line.startswith("```{glossary}"):
            terms |= _glossary_terms(lines[number + 1 :])
    return labels, terms


class Project:
    """The project of a locale folder: its catalogs' syntax, roles and targets."""

    def __init__(
        self, locale_dir, sources=None, pot_dir=None, default_syntax="rst", glossary=(), allowed_glossary=None
    ):
        self.locale_dir = Path(locale_dir)
        self.glossary = glossary  # terminology's rows
        # The rows whose words an interface string may add: the base's, with make check BASE=.
        self.allowed_glossary = glossary if allowed_glossary is None else allowed_glossary
        self.sources = Path(sources) if sources else None
        self.pot_dir = Path(pot_dir) if pot_dir else None
        self.default_syntax = default_syntax

    def catalogs(self):
        """Return every catalog of every translation, sorted."""
        return sorted(
            path for lang in TRANSLATIONS for path in language_catalogs(self.locale_dir, lang).values()
        )

    def docname(self, po_path):
        """Return the document (or, compact, the folder) catalog *po_path* translates."""
        relative = Path(os.path.abspath(po_path)).relative_to(os.path.abspath(self.locale_dir))
        return Path(*relative.parts[2:]).with_suffix("").as_posix()

    @functools.cached_property
    def documents(self):
        """Return {document: syntax} from the sources and the templates, or None if unknown."""
        if self.sources is None:
            return None
        found = {}
        for path in sorted(self.sources.rglob("*")):
            if path.suffix in (".rst", ".md", ".txt") and "_build" not in path.parts:
                name = path.relative_to(self.sources).with_suffix("").as_posix()
                found[name] = SUFFIXES[path.suffix]
        for pot in sorted(self.pot_dir.rglob("*.pot")) if self.pot_dir else ():
            named = [_SUFFIX.search(path) for message in messages(read(pot)) for path, _ in message.locations]
            suffixes = Counter(match[0] for match in named if match)
            if suffixes:  # the templates name the documents their messages come from
                name = pot.relative_to(self.pot_dir).with_suffix("").as_posix()
                found[name] = SUFFIXES[suffixes.most_common(1)[0][0]]
        return found

    def syntax(self, po_path, entry):
        """Return how Sphinx parses *entry* of catalog *po_path*: "rst", "myst" or "text"."""
        if self.documents is not None:
            document = self.docname(po_path)
            if document in self.documents:
                return self.documents[document]
            return "text" if document == "sphinx" else "rst"  # templates; generated reST
        for path, _ in entry.locations:
            match = _SUFFIX.search(path)
            if match:
                return SUFFIXES[match[0]]
        return self.default_syntax

    @functools.cached_property
    def interface_strings(self):
        """The English of the extracted sphinx.pot, or None with no extraction at hand."""
        return extracted(self.pot_dir)

    @functools.cache  # noqa: B019 (one Project per run)
    def catalog_file(self, po_path):
        """The po.CatalogFile of *po_path*, read once."""
        return open_catalog(po_path)

    @functools.cached_property
    def _english(self):
        """Return [(catalog, entry, syntax)] of every live entry of every catalog."""
        found = []
        for po_path in self.catalogs():
            for message in self.catalog_file(po_path).entries:  # none if unreadable: syntax says why
                if not message.pluralizable:  # never used: the build leaves them out
                    found.append((po_path, message, self.syntax(po_path, message)))
        return found

    @functools.cached_property
    def roles(self):
        """Return the role names that exist: docutils', Sphinx's and those the English uses."""
        used = set()
        for _, message, syntax in self._english:
            used |= role_names(message.id, syntax)
        return builtin_roles() | used

    @functools.cached_property
    def targets(self):
        """Return {"label"|"term"|"doc"|None: {targets}} that exist."""
        found = defaultdict(set)
        found["label"] |= STANDARD_LABELS
        for po_path, message, syntax in self._english:
            found["doc"].add(self.docname(po_path))
            if syntax == "text" or "\n" in message.id:
                continue
            for role in parse(message.id, syntax, self.roles).roles:
                if is_xref(role.name):
                    kind = target_kind(role.name)
                    target = role.target
                    if kind == "doc":
                        target = self.resolve_doc(po_path, target)
                    found[kind].add(target.lower() if kind == "term" else target)
        if self.sources:
            for path in self.sources.rglob("*"):
                if path.suffix in (".rst", ".md", ".txt", ".py") and "_build" not in path.parts:
                    labels, terms = definitions(path.read_text("utf-8", errors="replace"))
                    found["label"] |= labels
                    found["term"] |= {t.lower() for t in terms}
            found["doc"] |= set(self.documents)
        return found

    def resolve_doc(self, po_path, target):
        """Return the document a ``:doc:`` *target* in catalog *po_path* names."""
        if target.startswith("/"):
            return target.lstrip("/")
        return posixpath.normpath(posixpath.join(posixpath.dirname(self.docname(po_path)), target))

    def resolves(self, po_path, role):
        """Whether a cross-reference resolves: True, False, or None when nobody can tell here."""
        kind = target_kind(role.name)
        target = role.target
        if kind == "doc":
            target = self.resolve_doc(po_path, target)
        elif kind == "term":
            target = target.lower()
        if target in self.targets[kind]:
            return True
        if kind and self.sources:
            return False  # the sources define every label, term and document
        # Without the sources: a target in Chinese is a translated one.
        return False if re.search(r"[\u3000-\u9fff\uff00-\uffef]", target) else None


def extracted(pot_dir):
    """The English of every entry of *pot_dir*'s sphinx.pot, or None where there is none."""
    pot = pot_dir / "sphinx.pot" if pot_dir else None
    if pot is None or not pot.is_file():
        return None
    return {english(message) for message in messages(read(pot))}

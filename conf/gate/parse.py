"""Parse a message the way Sphinx will: reST or MyST Markdown (or plain text), or Python.

Sphinx parses a msgstr with its node's document's parser and keeps the result
only if it is the node class it needs (sphinx/transforms/i18n.py); a message
with a newline comes from a literal block, never parsed. The checks read
Sphinx's own parse (:func:`sphinx_document`: its parsers, roles, directives,
settings); each role marks its nodes with its name and text (:func:`parse`),
and a role the project's English uses that Sphinx does not define stands in
for itself. A tutorial's prose is also its notebook's Markdown cells, read as
Jupyter reads them (:func:`notebook_markdown`).
"""

import ast
import contextlib
import copy
import functools
import io
import logging
import re
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from logging.handlers import BufferingHandler
from pathlib import Path

from docutils import nodes, utils
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser, directives, roles, states
from docutils.parsers.rst.languages import en as rst_en
from docutils.statemachine import string2lines
from markdown_it import MarkdownIt
from sphinx import addnodes
from sphinx import roles as sphinx_roles
from sphinx.application import Sphinx
from sphinx.domains.c import CDomain
from sphinx.domains.cpp import CPPDomain
from sphinx.domains.javascript import JavaScriptDomain
from sphinx.domains.math import MathDomain
from sphinx.domains.python import PythonDomain
from sphinx.domains.rst import ReSTDomain
from sphinx.domains.std import StandardDomain
from sphinx.transforms.i18n import _NodeUpdater
from sphinx.util.docutils import docutils_namespace, sphinx_domains

SYNTAXES = ("rst", "myst", "text")


@dataclass(frozen=True)
class Role:
    """One role: ``:name:`title <target>``` (reST) or ``{name}`title <target>``` (MyST)."""

    name: str
    target: str  # what it points at or stands for; its title is free to translate
    text: str  # everything between the backquotes
    links: bool = False  # whether it makes a link (None: a project's own role, unknown here)


@dataclass
class Markup:
    """What a message contains, as the page's parser sees it."""

    literals: Counter = field(default_factory=Counter)  # ``inline literals``
    roles: list = field(default_factory=list)  # Role, in order
    links: list = field(default_factory=list)  # link URIs
    images: list = field(default_factory=list)  # image URIs
    refnames: Counter = field(default_factory=Counter)  # `named links`_, as written
    anonymous: int = 0  # `anonymous references`__ without a URI
    substitutions: Counter = field(default_factory=Counter)  # |substitutions|
    notes: Counter = field(default_factory=Counter)  # footnote [#]_, citation [x]_ references
    prose: str = ""  # the text outside literals and roles
    stray: Counter = field(default_factory=Counter)  # markup characters left as text
    messages: list = field(default_factory=list)  # the parser's warnings and errors
    html: list = field(default_factory=list)  # HTML tags (MyST and plain text)
    emphasis: int = 0  # *emphasis* and **strong** written as such (not by a role)


# -- Roles ----------------------------------------------------------------------

# Reader-facing words, free to translate: only the role itself must stay.
PROSE_ROLES = frozenset(
    "guilabel menuselection dfn abbr abbreviation ab acronym ac kbd title-reference title t"
    " emphasis strong subscript sub superscript sup".split()
)
# Sphinx's explicit title: "title <target>" (sphinx.util.nodes.explicit_title_re).
EXPLICIT_TITLE = re.compile(r"^(.+?)\s*(?<!\x00)<([^<]*?)>$", re.DOTALL)
_RST_ROLE = re.compile(r"(?<![\w`]):((?:(?!_)\w)+(?:[-._+:](?:(?!_)\w)+)*):`")
_MYST_ROLE = re.compile(r"\{([\w.:+-]+)\}`")
# Sphinx's domains whose cross-references find objects (math's :eq: finds equations).
_FINDING = (StandardDomain, PythonDomain, CDomain, CPPDomain, JavaScriptDomain, ReSTDomain)


@functools.cache
def _sphinx_roles():
    """Return ({role name: is a cross-reference}) of docutils, Sphinx and its domains."""
    known = dict.fromkeys(roles._role_registry, False)
    known.update(dict.fromkeys(rst_en.roles, False))
    for name, role in {**sphinx_roles.generic_docroles, **sphinx_roles.specific_docroles}.items():
        known[name] = isinstance(role, sphinx_roles.XRefRole)
    for domain in (*_FINDING, MathDomain):
        for name, role in domain.roles.items():
            xref = isinstance(role, sphinx_roles.XRefRole)
            known[f"{domain.name}:{name}"] = xref
            if domain.name in ("std", "py"):  # the default domains need no prefix
                known[name] = xref
    return known


@functools.cache
def _lookups():
    """Return {cross-reference role: (domain, the object types it finds or None, adds "()")}."""
    found = {}
    for domain in _FINDING:
        types = {}  # as Domain.__init__ builds objtypes_for_role
        for objtype, obj in domain.object_types.items():
            for role in obj.roles:
                types.setdefault(role, set()).add(objtype)
        for name, role in domain.roles.items():
            entry = (
                domain.name,
                frozenset(types[name]) if name in types else None,
                bool(getattr(role, "fix_parens", False)),
            )
            found[f"{domain.name}:{name}"] = entry
            if domain.name in ("std", "py"):
                found.setdefault(name, entry)
    return found


def lookup(name):
    """How Sphinx resolves cross-reference role *name*: (domain, the object types of its
    ``objtypes_for_role`` or None, whether it adds "()"), or None."""
    return _lookups().get(name.lower())


def builtin_roles():
    """Return the role names docutils and Sphinx define."""
    return frozenset(_sphinx_roles())


def is_xref(name):
    """Whether role *name* is a Sphinx cross-reference (resolved against labels, terms, ...)."""
    return _sphinx_roles().get(name.lower(), False)


def role_names(text, syntax):
    """Return the role names written in *text*."""
    pattern = _MYST_ROLE if syntax == "myst" else _RST_ROLE
    return {name.lower() for name in pattern.findall(text)}


def written(name, text, syntax):
    """Return role *name* with *text* as a translator writes it in *syntax*."""
    return f":{name}:`{text}`" if syntax == "rst" else f"{{{name}}}`{text}`"


def spaced(name, text, msgstr, syntax):
    """The role *name* of *msgstr* written with a space before its `*text*` (which makes the role
    text and its text italics: ``:file: `a.txt```), or None."""
    marker = rf"[:：]{re.escape(name)}[:：]" if syntax == "rst" else rf"\{{{re.escape(name)}\}}"
    found = re.search(marker + r"\s+`" + re.escape(text) + "`", msgstr)
    return found[0] if found else None


def make_role(name, text, links=False):
    """Return the Role for ``:name:`text```: its target, as Sphinx would resolve it."""
    name = name.lower()
    text = text.replace("\x00", "")
    if name in PROSE_ROLES:
        return Role(name, "", text, links)
    match = EXPLICIT_TITLE.match(text)
    target = " ".join((match[2] if match else text).split())
    if is_xref(name):
        target = target.lstrip("~!").removesuffix("()")
        if name in ("ref", "std:ref", "numref", "std:numref"):
            target = target.lower()  # Sphinx lowercases labels
    return Role(name, target, text, links)


# -- reST -----------------------------------------------------------------------

_MARKUP_CHARS = {"rst": "*`|", "myst": "*`"}  # shown as text when inline markup is not recognised
_HTML_TAG = re.compile(r"</?[a-zA-Z][a-zA-Z0-9-]*(?:\s[^<>]*)?/?>")


def _record_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """Stand in for a role: keep its name and text, resolve nothing."""
    return [nodes.inline(rawtext, text)], []


# What Sphinx's Locale transform appends to a translation ending with "::"
# (against "Literal block expected"); the literal block is then dropped.
_DUMMY_LITERAL = "\n\n   dummy literal"


def as_locale_parses(text):
    """*text* as Sphinx's Locale transform hands it to the parser (paragraphs and titles)."""
    return text + _DUMMY_LITERAL if text.strip().endswith("::") else text


@functools.cache
def _rst_settings():
    settings = get_default_settings(Parser)
    settings.report_level = settings.halt_level = 5  # collect, never print or stop
    # A message is a translator's text: its include, raw, csv-table... read no file and no
    # URL (a file's words would reach the checks' messages; /dev/zero would never end).
    settings.file_insertion_enabled = False
    return settings


@functools.cache
def _state_machine():
    """Return docutils' reST state machine and inline parser: building them costs ten parses."""
    inliner = states.Inliner()
    inliner.init_customizations(_rst_settings())
    inliner.init_customizations = lambda settings: None  # compiled already, for these settings
    machine = states.RSTStateMachine(state_classes=states.state_classes, initial_state="Body")
    return machine, inliner


@contextlib.contextmanager
def _role_lookup(lookup):
    """Meanwhile docutils finds the role *name* of a parse as ``lookup(name, find)``; ``find()``
    is how it found it before: ``(role function or None, messages)``."""
    find = roles.role  # in sphinx_domains, Sphinx's: its domains' roles, then docutils'
    roles.role = lambda name, *args: lookup(name.lower(), lambda: find(name, *args))
    try:
        yield
    finally:
        roles.role = find


@functools.lru_cache(maxsize=8192)
def rst_document(text):
    """Parse *text* as a reST document, as Parser().parse does, every role a stand-in (its name
    and text): the messages of a tutorial's prose, inside a build (localized_examples.py). The
    result is shared: do not change it."""
    document = utils.new_document("<message>", _rst_settings())
    with _role_lookup(lambda name, find: (_record_role, []) if name else find()):
        _read_rst(text, document)
    return document


def _read_rst(text, document):
    """Parse reST *text* into *document*, as Parser().parse does, on one reused state machine."""
    machine, inliner = _state_machine()
    machine.run(string2lines(text, tab_width=8, convert_whitespace=True), document, inliner=inliner)
    machine.observers.clear()  # run() attached this document


def _markup(document, syntax):
    """Return the Markup of *document*, Sphinx's parse of a message in *syntax*."""
    found = Markup()
    prose = []

    def walk(node):
        if isinstance(node, nodes.system_message):
            if node["level"] >= 2:
                found.messages.append(node.children[0].astext())
            return
        if isinstance(node, nodes.Element) and WRITTEN in node:
            if node[WRITTEN]:  # a role's first node; the others are ""
                found.roles.append(make_role(*node[WRITTEN]))
            return
        if isinstance(node, nodes.literal):
            found.literals[node.astext()] += 1
            return
        if isinstance(node, nodes.raw) and "html" in node.get("format", "").split():
            found.html += _HTML_TAG.findall(node.astext())  # MyST's HTML
        if isinstance(node, (nodes.FixedTextElement, nodes.target)):
            return  # literal blocks are code; embedded targets repeat their reference
        if isinstance(node, nodes.image):
            found.images.append(node["uri"])
        found.emphasis += isinstance(node, (nodes.emphasis, nodes.strong))
        if isinstance(node, nodes.title_reference):
            found.roles.append(Role("title-reference", "", node.astext()))
        elif isinstance(node, nodes.reference):
            if "refuri" in node:
                found.links.append("".join(node["refuri"].split()))
            elif "refname" in node:  # Sphinx compares these as written
                found.refnames[node.rawsource] += 1
            elif node.get("anonymous"):
                found.anonymous += 1
        elif isinstance(node, addnodes.pending_xref) and node.get("reftype") == "myst":
            found.links.append(node["reftarget"])  # MyST's [text](page.md)
        elif isinstance(node, nodes.substitution_reference):
            found.substitutions[node["refname"]] += 1
            return
        elif isinstance(node, (nodes.footnote_reference, nodes.citation_reference)):
            found.notes[node.get("refname") or node.get("auto") or node.astext()] += 1
            return
        elif isinstance(node, nodes.Text):
            prose.append(node.astext().replace("\n", " ") if syntax == "myst" else node.astext())
        for child in node.children:
            walk(child)

    walk(document)
    found.prose = "".join(prose)
    if syntax == "rst":  # in reST, HTML is text
        found.html = _HTML_TAG.findall(found.prose)
    found.stray = Counter(c for c in found.prose if c in _MARKUP_CHARS[syntax])
    return found


_MARKUP_START = {"rst": set("*`|_[]<>:\\@"), "myst": set("*`_[]<>{}!#|\\~:@$")}
_ENUMERATOR = re.compile(r"\w{1,4}[.)]\s")


def plain(text, syntax):
    """Whether *text* is one paragraph of words that no parser could take for markup."""
    return (
        text[:1].isalnum()
        and "\n" not in text
        and not _ENUMERATOR.match(text)
        and not _MARKUP_START[syntax].intersection(text)
    )


@functools.lru_cache(maxsize=16384)
def parse(text, syntax, known_roles=frozenset()):
    """The Markup of *text* as Sphinx parses *syntax* ("rst", "myst" or "text"); a role is unknown
    unless Sphinx defines it or it is one of *known_roles* (the project's). Shared: do not change it."""
    if syntax == "text" or plain(text, syntax):
        return Markup(prose=text, html=_HTML_TAG.findall(text))  # what a parse would give
    # The project's own roles (its extensions') that Sphinx does not define: stand-ins.
    own = role_names(text, syntax) & known_roles - builtin_roles() if known_roles else ()
    document = sphinx_document(as_locale_parses(text) if syntax == "rst" else text, syntax, frozenset(own))
    return Markup(prose=text) if document is None else _markup(document, syntax)


# -- A notebook's Markdown ---------------------------------------------------------


@functools.cache
def _commonmark():
    return MarkdownIt("commonmark")


# What GitHub-Flavoured Markdown, which Jupyter renders (marked), links in plain text and
# CommonMark does not: www. and http(s):// addresses, and e-mail addresses (its
# "autolinks (extension)"), less the punctuation that ends a sentence.
_GFM_AUTOLINK = re.compile(r"(?<![\w.+-])(?:(?:https?://|www\.)[^\s<]+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+)", re.I)


def gfm_autolinks(text):
    """The URLs GFM's autolinks (extension) make of the plain *text* (``www.x`` as ``http://www.x``)."""
    found = []
    for match in _GFM_AUTOLINK.finditer(text):
        url = match[0].rstrip("?!.,:*_~'\"")
        while url.endswith(")") and url.count(")") > url.count("("):
            url = url[:-1].rstrip("?!.,:*_~'\"")
        if "://" not in url:
            url = f"http://{url}" if url.lower().startswith("www.") else f"mailto:{url}"
        found.append(url)
    return found


@functools.lru_cache(maxsize=8192)
def notebook_markdown(text):
    """The Markup of *text* as a Markdown cell of a notebook: links (and the targets of link
    definitions, and GFM's autolinks), images and HTML, as Jupyter's Markdown (CommonMark and
    GFM's autolinks; no MyST roles) reads them."""
    found, env = Markup(), {}
    tokens = _commonmark().parse(text, env)
    # A link definition links nothing on its own, but every [name] of its notebook cell.
    found.links += [definition["href"] for definition in env.get("references", {}).values()]
    for token in tokens:
        if token.type == "html_block":
            found.html += _HTML_TAG.findall(token.content)
        for child in token.children or []:
            if child.type == "link_open":
                found.links.append(child.attrs["href"])
            elif child.type == "image":
                found.images.append(child.attrs["src"])
            elif child.type == "html_inline":
                found.html += _HTML_TAG.findall(child.content)
            elif child.type == "text":
                found.links += gfm_autolinks(child.content)
    return found


# -- The node Sphinx makes of a translation -------------------------------------


def sphinx_node(text, syntax, title):
    """(node, dropped): the tag of the node Sphinx's Locale transform gets of translation *text*
    for a paragraph (or a section *title*), which it uses only if "paragraph" or "title", and
    the tags of the blocks after it, which it throws away."""
    if not title and syntax in _MARKUP_START and plain(text, syntax):
        return "paragraph", []
    text = text + "\n" + "=" * len(text) * 2 if title else as_locale_parses(text)  # as Locale does
    document = sphinx_document(text, syntax)
    blocks = [b for b in (document or []) if not isinstance(b, nodes.system_message)]
    if not blocks:
        return "nothing", []
    first = blocks[0]
    if title and first.children:
        first = first.next_node()  # Sphinx takes the section's first child: its title
    dropped = [] if title else [b.tagname for b in blocks[1:]]  # below a title: its underline
    if text.endswith(_DUMMY_LITERAL):
        dropped = dropped[:-1]
    return first.tagname, dropped


# -- The paragraph Sphinx makes of a message, with its real roles ---------------------


# The site's parsers (conf/conf.py): MyST for .md, reST for the rest.
CONF = {"extensions": ["myst_parser"], "source_suffix": {".rst": "restructuredtext", ".md": "markdown"}}


@contextlib.contextmanager
def _sphinx_heard():
    """Meanwhile Sphinx's log records are kept in the list this yields, and go nowhere else; its
    logger is as it was after (another Sphinx application in this process keeps its warnings,
    and gets none of these)."""
    heard = BufferingHandler(capacity=1000)  # keeps the records (flushed only when full)
    logger = logging.getLogger("sphinx")
    kept = logger.handlers[:], logger.level, logger.propagate
    logger.handlers[:], logger.propagate = [heard], False
    try:
        yield heard.buffer
    finally:
        logger.handlers[:], _, logger.propagate = kept
        logger.setLevel(kept[1])


@functools.cache
def _sphinx():
    """A Sphinx application that builds nothing, for its parsers and roles: (app, settings, registry).

    Made in its own docutils namespace (its directives and roles reach no other
    parse), its logging set-up undone, its folders removed at once (none is left
    by a process that leaves by os._exit, as the preview's forks do).
    """
    with (
        _sphinx_heard(),
        docutils_namespace(),
        tempfile.TemporaryDirectory(prefix="checks-sphinx-") as folder,
    ):
        quiet, folder = io.StringIO(), Path(folder)
        (folder / "src").mkdir()
        app = Sphinx(folder / "src", None, folder / "out", folder / "doctrees", "dummy", CONF, quiet, quiet)
        registry = dict(directives._directives), dict(roles._roles)
    app.env.prepare_settings("index")  # a document, and the default domain (py)
    settings = copy.copy(_rst_settings())  # no file read, as the build while Locale parses
    settings.env = app.env
    return app, settings, registry


# On the first node each role makes: (its name, its text, whether it links); "" on the others.
WRITTEN = "written_role"


def _linking(node):
    return isinstance(node, (nodes.reference, addnodes.pending_xref, addnodes.download_reference))


def _recorded(name, role):
    """*role*, marking the nodes it makes as :func:`_markup` reads them."""

    def recording(as_written, rawtext, text, *args, **kwargs):
        made, messages = role(as_written, rawtext, text, *args, **kwargs)
        linking = [
            n for n in made if isinstance(n, nodes.Element) and n.next_node(_linking, include_self=True)
        ]
        links = None if role is _record_role else bool(linking)
        for number, node in enumerate(made):
            if isinstance(node, nodes.Element):
                node[WRITTEN] = "" if number else (name, text, links)
        return made, messages

    return recording


def _marking(name, find, known_roles):
    """Find role *name* so that it marks its nodes (:func:`_recorded`); one of *known_roles*
    that Sphinx does not define (a project's own) stands in for itself."""
    function, messages = find()
    if function is None and name in known_roles:
        function, messages = _record_role, []
    if function is None or not name:  # `text`, the default role: a title_reference
        return function, messages
    domain, colon, rest = name.partition(":")
    if colon and domain not in _sphinx()[0].env.domains:
        name = rest  # Sphinx warns of the domain, then finds the role by its own name
    return _recorded(name, function), messages


@functools.lru_cache(maxsize=8192)
def sphinx_document(text, syntax, known_roles=frozenset()):
    """The document Sphinx's own reST or MyST parser makes of *text*, with its roles, directives
    and a build's settings, or None if Sphinx fails on it; *known_roles* stand in for
    themselves. What Sphinx warns of (-W fails) ends it as a system message of level 2.
    Shared: do not change it."""
    app, settings, (own_directives, own_roles) = _sphinx()
    document = utils.new_document("<message>", settings)
    marking = functools.partial(_marking, known_roles=known_roles)
    with docutils_namespace(), sphinx_domains(app.env), _role_lookup(marking), _sphinx_heard() as heard:
        directives._directives.update(own_directives)
        roles._roles.update(own_roles)
        try:
            if syntax == "rst":  # Sphinx's reST parser is docutils', less a new state machine each
                _read_rst(text, document)
            else:
                parser = app.registry.create_source_parser("markdown", config=app.config, env=app.env)
                parser.parse(text, document)
        except Exception:
            return None
    reported = [m[0].astext() for m in document.findall(nodes.system_message) if m.children]
    for record in heard:  # (MyST both reports and logs an unknown role: once is enough)
        said = record.getMessage()
        if record.levelno >= logging.WARNING and not any(r.startswith(said) for r in reported):
            document += nodes.system_message(said, level=2, type="WARNING")
    return document


def sphinx_paragraph(text, syntax):
    """The paragraph Sphinx's Locale transform makes of message *text* (the same nodes the build
    judges, gate/safety.py), or None if it makes none. Shared: do not change it."""
    document = sphinx_document(as_locale_parses(text), syntax)
    first = document[0] if document is not None and document.children else None
    return first if isinstance(first, nodes.paragraph) else None


def inconsistent_references(english, translation, syntax, noqa=False):
    """Sphinx's own "inconsistent ... references" warnings on *translation* of *english* (each
    fails a ``-W`` build), from the comparisons its Locale transform runs (``_NodeUpdater``);
    None if either is no paragraph. With *noqa* Sphinx compares nothing."""
    old, new = sphinx_paragraph(english, syntax), sphinx_paragraph(translation, syntax)
    if old is None or new is None:
        return None
    old, new = old.deepcopy(), new.deepcopy()  # the updater renames and re-links what it compares
    document = utils.new_document("<message>", _sphinx()[1])
    document += old
    with _sphinx_heard() as heard:
        updater = _NodeUpdater(old, new, document, noqa)
        updater.update_autofootnote_references()
        updater.update_refnamed_references()
        updater.update_refnamed_footnote_references()
        updater.update_citation_references()
        updater.update_pending_xrefs()
    return [record.getMessage() for record in heard]


# -- Python ---------------------------------------------------------------------

# What makes a literal block Python code rather than a shell session or output.
_CODE_NODES = tuple(
    getattr(ast, name)
    for name in "Call Assign AugAssign Import ImportFrom FunctionDef AsyncFunctionDef ClassDef For While With Return If Try".split()
)


def is_code_message(text):
    """True for a message that is code shown as it is: a literal block (several lines) or a doctest."""
    return "\n" in text or text.startswith(">>>")


def doctest_source(text):
    """Return the Python of a ``>>>`` doctest (prompts removed), or *text* itself."""
    if not text.lstrip().startswith(">>>"):
        return text
    lines = [line.strip() for line in text.splitlines()]
    return "\n".join(line[4:] for line in lines if line[:4] in (">>> ", "... "))


def python_code(text):
    """The Python program of a literal-block (multi-line) or doctest message, or None."""
    if "\n" not in text and not text.lstrip().startswith(">>>"):
        return None
    source = doctest_source(text)
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    return source if any(isinstance(node, _CODE_NODES) for node in ast.walk(tree)) else None

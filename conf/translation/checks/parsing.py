"""Parse a message the way its page will: reST, MyST Markdown or plain text, or Python."""

import ast
import functools
import re
from collections import Counter
from dataclasses import dataclass, field

from docutils import nodes, utils
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser, roles
from markdown_it.renderer import RendererHTML
from myst_parser.config.main import MdParserConfig
from myst_parser.parsers.mdit import create_md_parser
from sphinx.util.docutils import docutils_namespace


@dataclass
class Markup:
    """What a message contains, as the page's parser sees it."""

    items: Counter = field(default_factory=Counter)  # literals, roles, links, ...
    prose: str = ""  # the text outside literals and roles
    stray: Counter = field(default_factory=Counter)  # markup characters left as text
    blocks: list = field(default_factory=list)  # top-level block types ("paragraph")
    links: list = field(default_factory=list)  # link targets
    html: list = field(default_factory=list)  # HTML tags
    messages: Counter = field(default_factory=Counter)  # docutils' warnings


_EXPLICIT_TITLE = re.compile(r"^(.+?)\s*(?<!\x00)<(.*?)>$", re.DOTALL)
_RST_ROLE = re.compile(r":((?:(?!_)\w)+(?:[-._+:](?:(?!_)\w)+)*):`")
_MARKUP_CHARS = "*`|"  # shown as text when inline markup is not recognised
_HTML_TAG = re.compile(r"</?[a-zA-Z][a-zA-Z0-9-]*(?:\s[^<>]*)?/?>")


def role_item(name, text):
    """Return the comparable part of a role: its target, not its title."""
    match = _EXPLICIT_TITLE.match(text)
    if match:
        return ("role", name, match[2].replace("\x00", ""), True)
    return ("role", name, text.replace("\x00", ""), False)


def source_kind(entry):
    """Return "md", "rst" or "text" from the entry's ``#:`` location comment."""
    name = entry.occurrences[0][0] if entry.occurrences else ""
    if name.endswith(".md"):
        return "md"
    return "rst" if name.endswith((".rst", ".txt", ".py")) else "text"


def _record_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """Stand in for every reST role: keep its name and text, resolve nothing."""
    return [nodes.inline(rawtext, text, role=name)], []


@functools.cache
def _rst_settings():
    settings = get_default_settings(Parser)
    settings.report_level = settings.halt_level = 5  # collect, never print or stop
    return settings


def parse_rst(text):
    """Parse *text* as a reST fragment the way the page's parser will."""
    document = utils.new_document("<message>", _rst_settings())
    with docutils_namespace():  # the stand-in roles vanish afterwards
        for name in set(_RST_ROLE.findall(text)):
            roles.register_local_role(name.lower(), _record_role)
        Parser().parse(text, document)
    found = Markup()
    prose = []

    def walk(node):
        if isinstance(node, nodes.system_message):
            if node["level"] >= 2:
                found.messages[node.children[0].astext()] += 1
            return
        if isinstance(node, nodes.literal):
            found.items["literal", node.astext()] += 1
            return
        if isinstance(node, nodes.FixedTextElement):
            return  # a literal or doctest block is code: see check_code
        if isinstance(node, nodes.inline) and "role" in node:
            found.items[role_item(node["role"], node.astext())] += 1
            return
        if isinstance(node, nodes.reference):
            target = node.get("refuri") or node.get("refname", "")
            found.items["link", target] += 1
            found.links.append(target)
        elif isinstance(node, nodes.substitution_reference):
            found.items["substitution", node["refname"]] += 1
        elif isinstance(node, nodes.Text):
            prose.append(node.astext())
        for child in node.children:
            walk(child)

    for block in document.children:
        if not isinstance(block, nodes.system_message):
            found.blocks.append(block.tagname)
        walk(block)
    found.prose = " ".join(prose)
    found.html = _HTML_TAG.findall(found.prose)
    found.stray = Counter(c for c in found.prose if c in _MARKUP_CHARS)
    return found


@functools.cache
def _markdown():
    return create_md_parser(MdParserConfig(), RendererHTML)


def parse_md(text):
    """Parse *text* as MyST Markdown the way the page's parser will."""
    found = Markup()
    prose = []
    for token in _markdown().parse(text):
        if token.level == 0 and token.nesting >= 0:
            found.blocks.append(token.type.removesuffix("_open"))
        if token.type == "html_block":
            found.html += _HTML_TAG.findall(token.content)
        for child in token.children or []:
            if child.type == "code_inline":
                found.items["literal", child.content] += 1
            elif child.type == "myst_role":
                found.items[role_item(child.meta["name"], child.content)] += 1
            elif child.type == "link_open":
                found.items["link", child.attrs["href"]] += 1
                found.links.append(child.attrs["href"])
            elif child.type == "html_inline":
                found.html += _HTML_TAG.findall(child.content)
            elif child.type == "text":
                prose.append(child.content)
            elif child.type in ("softbreak", "hardbreak"):
                prose.append(" ")
    found.prose = "".join(prose)
    found.stray = Counter(c for c in found.prose if c in _MARKUP_CHARS)
    return found


@functools.lru_cache(maxsize=4096)
def parse(text, kind):
    """Return the Markup of *text*, parsed as reST ("rst"), MyST ("md") or plain text."""
    if kind == "rst":
        return parse_rst(text)
    if kind == "md":
        return parse_md(text)
    return Markup(prose=text, html=_HTML_TAG.findall(text), blocks=["paragraph"])


def describe(item, kind):
    """Return a markup item as the translator would write it."""
    what, *rest = item
    tick = "``" if kind == "rst" else "`"
    if what == "literal":
        return f"{tick}{rest[0]}{tick}"
    if what == "role":
        name, target, titled = rest
        role = f":{name}:" if kind == "rst" else f"{{{name}}}"
        return f"{role}`{'… <' + target + '>' if titled else target}`"
    if what == "link":
        return f"link target <{rest[0]}>"
    return f"|{rest[0]}|"


_CODE_NODES = (
    ast.Call, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Import, ast.ImportFrom,
    ast.FunctionDef, ast.ClassDef, ast.For, ast.While, ast.With, ast.Return, ast.Subscript,
)  # fmt: skip


def python_code(text):
    """Return the Python program in *text* (doctest prompts removed), or None if prose."""
    if ">>>" in text:
        lines = [line.strip() for line in text.splitlines()]
        return "\n".join(line[4:] for line in lines if line[:4] in (">>> ", "... "))
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    return text if any(isinstance(node, _CODE_NODES) for node in ast.walk(tree)) else None

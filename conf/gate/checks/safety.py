"""safety: a translation adds markup, a link to another site, a non-http(s) link or HTML.

What a reST or MyST translation adds beyond words is judged by the build's
own judge (gate/only_words.py) on the paragraph Sphinx's parsers make
of it (parsing.sphinx_paragraph): raw HTML, images, downloads, math,
substitutions, event-handler attributes, a link to a host or scheme the
English does not link, a translation spanning more lines than its English.
Whether it is a paragraph at all, the unused check says. In plain text,
links are URLs, which are ASCII: a URL ends at the first space, Chinese
character or full-width punctuation. In reST, HTML is shown as text (a
warning). A MyST ``[name]`` in the English links through a definition
elsewhere on the page, so a translation writing that link inline
(``[名称](https://…)``) is a warning: the English's site is not in the message
(the build, which sees the page, judges it by the definition's URL). Raw
roles are defined on their page (``.. role:: raw-html(raw)``), which no
message holds: one the English lacks is an error.

Three more places a translation lands: any translation may hold no invisible
or direction-changing character (gate/words.py: Trojan Source in a
download), nor a character that no font of the PDF has (gate/glyphs.py:
it would stop make pdf); and a tutorial's prose also becomes its notebook's Markdown
cells, where ``[text](url)``, ``![](url)`` and HTML are live even though the
page shows them as text: a tutorial's translation may add none of them
(links are judged by the link rule, as on the page). Those cells are read as
CommonMark, as Jupyter renders them (parsing.notebook_markdown), not as MyST;
the build applies the same rule (:func:`notebook_additions`) to each cell of
the notebook it writes.
"""

import re
from collections import Counter

from docutils import nodes

from .. import only_words
from ..links import ERROR, judge
from ..glyphs import glyphless, in_pdf
from ..words import added_controls, controls
from .common import error, warning
from .parsing import notebook_markdown, parse, plain, sphinx_paragraph

_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[!-~]+")
_SHORTCUT = re.compile(r"(?<![\]!\\])\[([^\[\]]+)\](?![(\[:])")  # [name], a reference link
_BAD_SCHEME = re.compile(r"(?<![\w.+-])(?:javascript|vbscript|data|file):", re.IGNORECASE)
_RAW_ROLE = re.compile(r":raw(?:-\w+)?:`|\{raw(?:-\w+)?\}`")


def urls(text):
    """Return the URLs in plain text *text*."""
    return [url.rstrip(".,;:!?)]}'\"") for url in _URL.findall(text)]


def notebook_bound(message):
    """True if *message* is a tutorial's: its prose becomes a notebook's Markdown too."""
    return message.catalog is not None and "auto_examples" in message.catalog.parts


def notebook_additions(english, translation):
    """``[(why, at)]``: the links, images and HTML that Markdown *translation* adds to *english*.

    The one rule for a tutorial's notebook: make check applies it to each
    message, the build (localized_examples.py) to each Markdown cell of the
    notebook it writes.
    """
    english, translated = notebook_markdown(english), notebook_markdown(translation)
    found = []
    for url in sorted(set(translated.links) - set(english.links)):
        verdict = judge(url, english.links + english.images)
        if verdict and verdict[0] == ERROR:
            found.append((f"adds, in the tutorial's notebook (Markdown), {verdict[1]}", url))
    for url in sorted(set(translated.images) - set(english.images)):
        found.append((f"adds, in the tutorial's notebook (Markdown), an image: {url}", url))
    tags = Counter(translated.html) - Counter(english.html)
    if tags:
        found.append(
            ("adds, in the tutorial's notebook (Markdown), HTML: " + " ".join(sorted(tags)), min(tags))
        )
    return found


def in_notebook(message):
    """Yield the links, images and HTML the translation adds to a tutorial's notebook."""
    for why, at in notebook_additions(message.msgid, message.msgstr):
        yield error(why, at=at)


def check(message):
    """Yield the markup, links, schemes, HTML and hidden or glyph-less characters the translation adds."""
    msgid, msgstr, syntax = message.msgid, message.msgstr, message.syntax
    if msgid == msgstr:
        return
    hidden = added_controls(msgid, msgstr)
    if hidden:
        yield error(
            "holds invisible or direction-changing characters: " + ", ".join(controls("".join(hidden))),
            at=hidden[0],
        )
    missing = glyphless(msgid, msgstr)
    if missing:
        yield error(missing, at=next(c for c in msgstr if c not in msgid and not in_pdf(c)))
    if notebook_bound(message):
        yield from in_notebook(message)
    linked = set(urls(msgstr))
    if syntax == "text":
        for url in sorted(linked - set(urls(msgid))):
            verdict = judge(url, urls(msgid))
            if verdict and verdict[0] == ERROR:  # another page of a linked host: references warns
                yield error(f"adds {verdict[1]}", at=url)
    elif "\n" not in msgid:  # a literal block's lines are code, never parsed (the code check)
        translated = paragraph(msgstr, syntax)
        linked |= only_words.links(translated)
        yield from added(message, translated)
    schemes = set(map(str.lower, _BAD_SCHEME.findall(msgstr)))
    schemes -= set(map(str.lower, _BAD_SCHEME.findall(msgid)))
    schemes -= {url.split(":", 1)[0].lower() + ":" for url in linked}  # links: judged above
    for scheme in sorted(schemes):
        yield error(f"adds a link that is not http(s): {scheme}", at=scheme)
    tags = Counter(parse(msgstr, syntax, message.project.roles).html)
    tags -= Counter(parse(msgid, syntax, message.project.roles).html)
    if tags and syntax == "rst":  # in reST, HTML is text: the page shows the tags
        yield warning("HTML tags are shown as text in reST: " + " ".join(sorted(tags)), at=min(tags))
    elif tags and syntax == "text":  # (in MyST, the paragraph's raw nodes, above)
        yield error("adds raw HTML: " + " ".join(sorted(tags)), at=min(tags))
    raw = Counter(_RAW_ROLE.findall(msgstr)) - Counter(_RAW_ROLE.findall(msgid))
    if raw:
        yield error("adds a raw role: " + " ".join(r.rstrip("`") for r in raw), at=min(raw))


def paragraph(text, syntax):
    """The paragraph Sphinx makes of *text*, or an empty one where it makes none: whether it
    is a paragraph at all, the unused check says, with its reason and its fix."""
    if plain(text, syntax):  # one line of words: nothing to parse, nothing added
        return nodes.paragraph(text, text)
    return sphinx_paragraph(text, syntax) or nodes.paragraph()


def added(message, translated):
    """Yield what the build refuses in the reST or MyST *translated* paragraph (only_words.py)."""
    msgid, msgstr, syntax = message.msgid, message.msgstr, message.syntax
    english = ({}, set())
    if only_words.additions(translated) or only_words.links(translated):  # against the English
        parsed = paragraph(msgid, syntax)
        english = (only_words.additions(parsed), only_words.links(parsed))
    # MyST's [name] links through a definition elsewhere on the page, which no message holds.
    shortcuts = _SHORTCUT.findall(msgid) if syntax == "myst" else []
    for why, url in only_words.refusals(msgid, msgstr, english, translated):
        if url and shortcuts and "host" in why:
            yield warning(
                f"links to {url}: the English's [{shortcuts.pop(0)}] links through a "
                "definition elsewhere on the page; check that it is the same site",
                at=url,
            )
        elif url:
            yield error(f"adds {why}", at=url)
        elif why == only_words.SPANS_LINES:
            yield error(f"the build refuses it: {why}; write it on one line")
        else:
            yield error(f"adds {why}")

"""A translation changes only words: the judge of what it adds, for the build and make check.

Both hand it nodes Sphinx's own parsers made: the build (extensions/
translation_safety.py) the node Locale made of the translation, make check the
translation parsed alone (parse.sphinx_paragraph). What it adds beyond words
must be in the English: raw HTML, images, downloads, math, substitutions,
event-handler attributes, a link to a host or scheme the English does not link
(links.py). Whether Sphinx uses the translation at all, compare.py says.

make check's safety check (:func:`check`) adds what lands elsewhere: invisible
characters and characters no PDF font has (words.py); a tutorial's notebook,
whose Markdown makes links, images and HTML of what the page shows as text
(:func:`notebook_additions`, which the build applies too); in plain text, a
URL or scheme. Its interface check (:func:`check_interface`): words.py.
"""

import re
from collections import Counter

from docutils import nodes
from sphinx import addnodes

from gate.findings import error, warning
from gate.links import ERROR, judge
from gate.parse import notebook_markdown, parse, plain, sphinx_paragraph
from gate.words import added_controls, controls, glyphless, in_pdf, interface_verdict

# What a translation may add freely: words, emphasis, code, internal links,
# and links whose scheme is checked below. Anything else must be in the English.
FREE = {
    *(
        getattr(nodes, name)
        for name in (
            "paragraph title caption rubric term line field_name literal_block doctest_block emphasis strong"
            " literal inline reference target title_reference subscript superscript abbreviation acronym"
            " footnote_reference citation_reference problematic generated"
        ).split()
    ),
    addnodes.pending_xref,
    addnodes.literal_emphasis,
    addnodes.literal_strong,
}
TARGETS = ("uri", "reftarget", "refname")  # what an image, a download, a substitution shows
NOT_ONE = "it is not one paragraph or title (an HTML block or a directive?)"
INTERFACE = "sphinx.po"
_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[!-~]+")
_SHORTCUT = re.compile(r"(?<![\]!\\])\[([^\[\]]+)\](?![(\[:])")  # [name], a reference link
_BAD_SCHEME = re.compile(r"(?<![\w.+-])(?:javascript|vbscript|data|file):", re.IGNORECASE)
_RAW_ROLE = re.compile(r":raw(?:-\w+)?:`|\{raw(?:-\w+)?\}`")


def additions(node):
    """Map what *node* shows beyond words (a translation must not add any) to a reason."""
    found = {}
    for element in node.findall(nodes.Element):
        if type(element) not in FREE:  # exactly: download_reference is a reference
            target = next((element[a] for a in TARGETS if element.get(a)), "")
            payload = isinstance(element, (nodes.FixedTextElement, nodes.math))  # raw, math
            text = element.astext() if payload else ""
            kind = " ".join(filter(None, (element.tagname, element.get("format"))))
            found[kind, target, text] = f"{kind} {text or target!r}"
        for name, value in element.attributes.items():
            if name.lower().startswith("on"):
                found["attribute", name, str(value)] = f"an event-handler attribute: {name}"
    return found


def links(node):
    """The URLs that *node*'s links and images lead to."""
    return {
        url
        for element in node.findall(nodes.Element)
        for url in (element.get("refuri"), element.get("uri"))
        if url
    }


def refusals(msg, msgstr, english, translated, literal=False):
    """Why the translation *msgstr* of *msg* is refused, as ``[(why, url or None)]``.

    *english* is ``(additions, links)`` of the English node; *translated* the
    node the translation parsed to, or None if it is not the paragraph or title
    it replaces; *literal*, whether it is a literal block (never parsed).
    """
    if translated is None:
        return [(NOT_ONE, None)]
    kept, english_links = english
    reasons = [(why, None) for key, why in additions(translated).items() if key not in kept]
    for url in sorted(links(translated)):
        verdict = judge(url, english_links)
        if verdict and verdict[0] == ERROR:
            reasons.append((verdict[1], url))
    return reasons


def notebook_additions(english, translation):
    """``[(why, at)]``: the links, images and HTML that Markdown *translation* adds to *english*,
    as a tutorial's notebook (Jupyter's CommonMark) reads them."""
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


def _paragraph(text, syntax):
    """The paragraph Sphinx makes of *text*, or an empty one where it makes none (whether it
    is a paragraph at all, compare.py says, with its reason and its fix)."""
    if plain(text, syntax):  # one line of words: nothing to parse, nothing added
        return nodes.paragraph(text, text)
    return sphinx_paragraph(text, syntax) or nodes.paragraph()


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
    if message.catalog is not None and "auto_examples" in message.catalog.parts:  # a tutorial's
        for why, at in notebook_additions(msgid, msgstr):
            yield error(why, at=at)
    if syntax == "text":  # links are URLs, which are ASCII: one ends at a space or Chinese
        english_urls = [url.rstrip(".,;:!?)]}'\"") for url in _URL.findall(msgid)]
        for url in sorted({url.rstrip(".,;:!?)]}'\"") for url in _URL.findall(msgstr)} - set(english_urls)):
            verdict = judge(url, english_urls)
            if verdict and verdict[0] == ERROR:  # another page of a linked host: a warning elsewhere
                yield error(f"adds {verdict[1]}", at=url)
        schemes = {s.lower() for s in _BAD_SCHEME.findall(msgstr)} - {
            s.lower() for s in _BAD_SCHEME.findall(msgid)
        }
        for scheme in sorted(schemes):  # (in reST and MyST, a parsed link's scheme is judged below)
            yield error(f"adds a link that is not http(s): {scheme}", at=scheme)
    elif "\n" not in msgid:  # a literal block's lines are code, never parsed (the code check)
        yield from _added(message, _paragraph(msgstr, syntax))
    tags = Counter(parse(msgstr, syntax, message.project.roles).html) - Counter(
        parse(msgid, syntax, message.project.roles).html
    )
    if tags and syntax == "rst":  # in reST, HTML is text: the page shows the tags
        yield warning("HTML tags are shown as text in reST: " + " ".join(sorted(tags)), at=min(tags))
    elif tags and syntax == "text":  # (in MyST, the paragraph's raw nodes, above)
        yield error("adds raw HTML: " + " ".join(sorted(tags)), at=min(tags))
    raw = Counter(_RAW_ROLE.findall(msgstr)) - Counter(_RAW_ROLE.findall(msgid))
    if raw:  # defined on its page (.. role:: raw-html(raw)), which no message holds
        yield error("adds a raw role: " + " ".join(r.rstrip("`") for r in raw), at=min(raw))


def _added(message, translated):
    """Yield what the build refuses in the reST or MyST *translated* paragraph (:func:`refusals`)."""
    english = ({}, set())
    if additions(translated) or links(translated):  # against the English
        parsed = _paragraph(message.msgid, message.syntax)
        english = (additions(parsed), links(parsed))
    # MyST's [name] links through a definition elsewhere on the page, which no message holds:
    # the build, which sees the page, judges it by the definition's URL.
    shortcuts = _SHORTCUT.findall(message.msgid) if message.syntax == "myst" else []
    for why, url in refusals(message.msgid, message.msgstr, english, translated):
        if url and shortcuts and "host" in why:
            yield warning(
                f"links to {url}: the English's [{shortcuts.pop(0)}] links through a definition elsewhere "
                "on the page; check that it is the same site",
                at=url,
            )
        else:
            yield error(f"adds {why}", at=url or "")


def check_interface(message):
    """Yield why an interface translation (sphinx.po) is refused: it could leave the place it
    lands (words.interface_verdict), or it is not one of the site's extracted strings, which
    Sphinx or a theme would still write, unescaped, where they use it."""
    if message.catalog is None or message.catalog.name != INTERFACE:
        return
    known = message.project.interface_strings
    if known is not None and message.msgid not in known:
        yield error(
            "an interface string the site does not extract (Sphinx or a theme would write its translation"
            " as it is): delete the entry; make update-po keeps only the site's"
        )
        return
    for reason in interface_verdict(
        message.msgid, message.msgstr, message.project.allowed_glossary, message.lang
    ):
        yield error(f"refused: {reason}")

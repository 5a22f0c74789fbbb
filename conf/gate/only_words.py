"""A translation changes only words: the one judge of what it adds, for the build and make check.

Both hand it nodes made by the real parsers, Sphinx's reST and MyST with
Sphinx's roles: the build (extensions/translation_safety.py) the node that
Sphinx's Locale transform made of the translation, make check
(translation/checks/safety.py) the translation parsed on its own by the same
parsers (translation/checks/parsing.sphinx_paragraph). Whether a translation
parses to the node it replaces at all, the build asks Locale and make check
its unused check.
"""

from docutils import nodes
from sphinx import addnodes

from .links import ERROR, judge

# What a translation may add freely: words, emphasis, code, internal links,
# and links whose scheme is checked below. Anything else must be in the English.
FREE = {
    nodes.paragraph,
    nodes.title,
    nodes.caption,
    nodes.rubric,
    nodes.term,
    nodes.line,
    nodes.field_name,
    nodes.literal_block,
    nodes.doctest_block,
    nodes.emphasis,
    nodes.strong,
    nodes.literal,
    nodes.inline,
    nodes.reference,
    nodes.target,
    nodes.title_reference,
    nodes.subscript,
    nodes.superscript,
    nodes.abbreviation,
    nodes.acronym,
    nodes.footnote_reference,
    nodes.citation_reference,
    nodes.problematic,
    nodes.generated,
    addnodes.pending_xref,
    addnodes.literal_emphasis,
    addnodes.literal_strong,
}
TARGETS = ("uri", "reftarget", "refname")  # what an image, a download, a substitution shows
SPANS_LINES = "it spans lines (what follows a line break may be a directive or HTML)"
NOT_ONE = "it is not one paragraph or title (an HTML block or a directive?)"


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
    reasons = []
    if not literal and len(msgstr.splitlines()) > len(msg.splitlines()):
        reasons.append((SPANS_LINES, None))
    if translated is None:
        return [*reasons, (NOT_ONE, None)]
    kept, english_links = english
    reasons += [(why, None) for key, why in additions(translated).items() if key not in kept]
    for url in sorted(links(translated)):
        verdict = judge(url, english_links)
        if verdict and verdict[0] == ERROR:
            reasons.append((verdict[1], url))
    return reasons

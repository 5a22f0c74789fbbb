"""unused: Sphinx will not use the translation and silently shows the English instead.

Sphinx parses a translation on its own and keeps it only if it is the node
it replaces: a paragraph (or a title, for a section title), or a block it
takes for a literal one (a MyST code block, a doctest, an HTML block), whose
text it then shows without markup: a warning, an error for HTML. A translation
that parses as a list, a block quote, a heading or a table is dropped
without a warning; one that parses as a paragraph followed by more blocks
loses those blocks. The English tells which node a message comes from: it
parses as one (or both) of those itself. One that could be a title is judged
as a paragraph when it ends a sentence ("."), as titles do not: "1. 打开文件。"
for "Open the file." is a numbered list, and Sphinx shows the English.
"""

import re

from sphinx.transforms.i18n import LITERAL_TYPE_NODES

from .common import error, warning
from .parsing import sphinx_node

USED = ("paragraph", "title")
AS_TEXT = {node.__name__ for node in LITERAL_TYPE_NODES}  # what Locale also takes, as text
UNUSED = "Sphinx will not use this translation and shows the English"
# Why a one-line translation is some other block, and how to keep it a paragraph.
WHY = {
    "bullet_list": ('it starts like a list item ("- ", "* " or "+ ")', 'escape the mark: "\\- "'),
    "enumerated_list": ('it starts like a numbered item ("1. ", "a) ")', 'escape it: "1\\. "'),
    "block_quote": ("it starts with a space (a block quote)", "remove the leading space"),
    "field_list": ('it starts like a field (":name: ")', "reword the start"),
    "option_list": ('it starts like a command-line option ("-x ")', "reword the start"),
    "doctest_block": ('it starts with ">>> "', "reword the start"),
    "line_block": ('it starts with "| "', 'escape it: "\\| "'),
    "comment": ('it starts with ".. "', "reword the start"),
    "section": ('it starts with "#" (a heading)', 'escape it: "\\#"'),
    "raw": ("it is a directive", "write a paragraph"),
}
# MyST's nodes that mean something else than reST's (Sphinx's MyST parser makes them).
WHY_MYST = {
    **WHY,
    "block_quote": ('it starts with ">" (a block quote)', 'escape it: "\\>"'),
    "literal_block": ("it starts with four spaces (a code block)", "remove the leading spaces"),
    "raw": ("it is HTML (a block of it)", "write a paragraph, or escape the < as &lt;"),
}


# A paragraph ends a sentence; a title does not ("Open the file." / "Opening files").
_SENTENCE_END = re.compile(r"[.!;:。！；：]['\"’”」』)）*`_]*$")


def sentence(text):
    """Whether English *text* ends like a sentence, so that it is a paragraph, not a title."""
    return bool(_SENTENCE_END.search(text.rstrip())) and not text.rstrip().endswith("...")


def reason(node, syntax):
    """Return why a translation is a *node*, and the fix."""
    why, fix = (WHY_MYST if syntax == "myst" else WHY).get(
        node, (f"it parses as {node.replace('_', ' ')}", "reword it")
    )
    return f"{why}; {fix}"


def usable(shape):
    """Whether Sphinx uses a translation of this (node, dropped) shape, entirely."""
    return shape[0] in USED and not shape[1]


def check(message):
    """Yield an error if Sphinx would drop the translation, or part of it."""
    msgid, msgstr, syntax = message.msgid, message.msgstr, message.syntax
    if syntax == "text" or "\n" in msgid or msgid == msgstr:
        return  # literal blocks are wrapped in "::" and never parsed
    english = sphinx_node(msgid, syntax, False)
    translated = sphinx_node(msgstr, syntax, False)
    if usable(english) and usable(translated):
        return  # the common case: a paragraph for a paragraph
    if usable(english) and translated[0] in AS_TEXT and not translated[1]:
        # Locale takes these for a literal block's text: their text, no markup, in the paragraph
        shown = "its HTML tags as text" if translated[0] == "raw" else "its markup unrendered"
        yield (error if translated[0] == "raw" else warning)(
            f"Sphinx shows this translation as plain text, {shown}: {reason(translated[0], syntax)}"
        )
        return
    if usable(english) and translated[0] in USED:
        dropped = ", ".join(d.replace("_", " ") for d in translated[1])
        yield error(
            f"Sphinx uses only the first paragraph of this translation and silently "
            f"drops the rest ({dropped}): write one paragraph"
        )
        return
    # Is it a section title? Sphinx parses those with an underline added.
    title = usable(sphinx_node(msgid, syntax, True))
    as_title = sphinx_node(msgstr, syntax, True)
    indented = msgstr[:1].isspace() and not msgid[:1].isspace()
    if usable(english) and (indented or not title or not usable(as_title) or sentence(msgid)):
        yield error(f"{UNUSED}: {reason(translated[0], syntax)}")
    elif usable(english):
        yield warning(
            f"Sphinx uses this translation only if it is a title; for a paragraph "
            f"it shows the English: {reason(translated[0], syntax)}"
        )
    elif not usable(as_title) and (title or syntax == "myst"):
        # A title such as "1. Install": reST reads it back, MyST does not ("2\\. ...").
        yield error(f"{UNUSED}: {reason(as_title[0], syntax)}")

"""code: translated Python (a literal block, a doctest, an example's comment) is another program.

Only what Sphinx shows as code is compared: literal blocks (the only messages
with newlines) and ``>>>`` doctests whose English is Python; comments and
docstrings may be translated. Errors: not valid Python, other statements, a
changed value string (``"cuda:0"``); warnings: a translated string with spaces.
An example's comments and docstrings are messages of its page, put back into
its code by the build (extensions/localized_examples.py), which refuses one
that changes the code's tokens: so does this check.
"""

import ast
import functools
from pathlib import Path

from sphinx_gallery.py_source_parser import split_code_and_text_blocks

from site_layout import EXAMPLES, GALLERY_NAME, ROOT
from catalogs.po import is_translated
from catalogs.tutorial_text import localized_code

from gate.findings import error, warning
from gate.parse import doctest_source, python_code


def blank_docstrings(tree):
    """Return *tree* with every bare string statement (a docstring) emptied."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            node.value.value = ""
    return tree


def strings(tree):
    """Return the string constants of *tree*, in order, and the tree with them blanked."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.append(node.value)
            node.value = ""
    return found, ast.dump(tree)


def check(message):
    """Yield how the translated code differs from the English code."""
    yield from check_example_text(message)
    code = python_code(message.msgid)
    if code is None or message.msgid == message.msgstr:
        return
    try:
        translated = blank_docstrings(ast.parse(doctest_source(message.msgstr)))
    except (SyntaxError, ValueError) as err:  # ValueError: a NUL character
        line = (getattr(err, "text", None) or "").strip()
        yield error(f"translated code is not valid Python: {getattr(err, 'msg', err)}: {line!r}", at=line)
        return
    english = blank_docstrings(ast.parse(code))
    if ast.dump(english) == ast.dump(translated):
        return
    old, old_shape = strings(english)
    new, new_shape = strings(translated)
    if old_shape != new_shape:
        yield error("translated code is not the same Python as the English (translate its comments only)")
        return
    for before, after in zip(old, new):
        if before != after and (before.split() == [before] or not before):
            yield error(f"changes the string {before!r} to {after!r}: keep values as they are", at=after)
        elif before != after:
            yield warning(f"translates the string {before!r} in code: the output will differ")


@functools.cache
def _refused_texts(example, catalog, project):
    """The English comments and docstrings of *example* whose translation the build refuses.

    Asked as the build asks it (extensions/localized_examples.py): each
    code cell with every translated entry of the page's *catalog* at once.
    """
    translations = {m.id: m.string for m in project.catalog_file(catalog).entries if is_translated(m)}
    refused = set()
    for block in split_code_and_text_blocks(str(example))[1]:
        if block.type == "code":
            refused |= set(localized_code(block.content, lambda t: translations.get(t, t))[1])
    return refused


def example_of(message):
    """The example whose page the catalog of *message* translates, or None."""
    sources = getattr(message.project, "sources", None)
    if sources is None or message.catalog is None:
        return None
    parts = Path(message.catalog).with_suffix("").parts
    if "LC_MESSAGES" not in parts:
        return None
    page = Path(*parts[parts.index("LC_MESSAGES") + 1 :])
    # The checkout's layout, wherever its sources are (the project's, or a test's copy).
    example = sources.parent / EXAMPLES.relative_to(ROOT) / (page.name + ".py")
    return example if page.parent.name == GALLERY_NAME and example.is_file() else None


def check_example_text(message):
    """Yield an error if a translation in an example's catalog would change the example's code."""

    example = example_of(message)
    if example is None:
        return
    for quotes in ('"""', "'''"):
        if quotes in message.msgstr and quotes not in message.msgid:
            # The script's prose sits in its docstring: this would end it (the downloads refuse it).
            yield error(f"{quotes} in a tutorial's translation changes the code: it ends a docstring")
            return
    if message.msgid in _refused_texts(example, message.catalog, message.project):
        yield error(
            "the translation of this comment or docstring changes the code around "
            "it (a line break, a quote that ends it): translate only its words"
        )

"""code: translated Python (a literal block or doctest) is no longer the same program.

Only messages that Sphinx shows as code are compared: literal blocks (the
only messages with newlines) and ``>>>`` doctests whose English is valid
Python. Comments and docstrings may be translated. Errors: the translation is
not valid Python, its statements differ, or it changes a string that holds
a value (``"cuda:0"``). Warnings: it translates a string with spaces
(``print("Hello world")``), which may be intended.
"""

import ast

from .common import error, warning
from .parsing import doctest_source, python_code


def blank_docstrings(tree):
    """Return *tree* with every bare string statement (a docstring) emptied."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(
                node.value.value, str):  # fmt: skip
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
    code = python_code(message.msgid)
    if code is None or message.msgid == message.msgstr:
        return
    try:
        translated = blank_docstrings(ast.parse(doctest_source(message.msgstr)))
    except (SyntaxError, ValueError) as err:  # ValueError: a NUL character
        line = (getattr(err, "text", None) or "").strip()
        yield error(f"translated code is not valid Python: {getattr(err, 'msg', err)}: {line!r}",
                    at=line)  # fmt: skip
        return
    english = blank_docstrings(ast.parse(code))
    if ast.dump(english) == ast.dump(translated):
        return
    old, old_shape = strings(english)
    new, new_shape = strings(translated)
    if old_shape != new_shape:
        yield error("translated code is not the same Python as the English (translate its "
                    "comments only)")
        return
    for before, after in zip(old, new):
        if before != after and (before.split() == [before] or not before):
            yield error(f"changes the string {before!r} to {after!r}: keep values as they are",
                        at=after)  # fmt: skip
        elif before != after:
            yield warning(f"translates the string {before!r} in code: the output will differ")

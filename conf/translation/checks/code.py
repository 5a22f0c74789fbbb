"""code: translated Python is no longer the same program."""

import ast

from .parsing import python_code


def check(msgid, msgstr, kind, lang):
    """Yield a problem if the English is code and the translation is other code."""
    code = python_code(msgid)
    if code is None:
        return
    translated = python_code(msgstr) if ">>>" in msgid else msgstr
    try:
        same = ast.dump(ast.parse(code)) == ast.dump(ast.parse(translated or ""))
    except SyntaxError as err:
        yield f"translated code is not valid Python: {err.msg} (line {err.lineno})"
        return
    if not same:
        yield "translated code is not the same Python as the English (translate comments only)"

"""The translation checks of ``make check``, one module each; ../run_checks.py runs them.

``sync`` and ``syntax`` look at whole catalogs. The others look at one
translated entry at a time: ``check(msgid, msgstr, kind, lang)`` yields what
is wrong with it, where *kind* says how the page parses it ("rst", "md" or
"text", see parsing.py). ``completeness`` says whether an entry is finished.
"""

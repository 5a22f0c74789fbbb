"""The translation checks of ``make check``, one module each; ../run_checks.py runs them.

``sync`` and ``syntax`` look at whole catalogs. The others look at one
translated entry at a time: ``check(message)`` yields Findings (common.py),
errors or warnings, about a ``Message``: its msgid and msgstr, its language,
how Sphinx parses it (``syntax``: "rst", "myst" or "text") and the project
it belongs to (project.py: the roles and cross-reference targets that exist).
``parsing.py`` parses a message the way Sphinx will. ``completeness`` says
whether an entry is finished.
"""

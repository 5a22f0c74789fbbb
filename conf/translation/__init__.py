"""Tools for translators and reviewers: update the catalogs, report on them, check them, seed zh_TW."""

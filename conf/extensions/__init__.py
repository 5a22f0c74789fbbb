"""Sphinx extensions that conf.py loads: they run inside every language's build."""

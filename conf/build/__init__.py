"""Thin scripts: the site, its offline copies, the recordings, the live preview."""

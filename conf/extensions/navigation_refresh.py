"""Rewrite every page when the navigation changes, not only the edited ones.

Each page carries the whole site's navigation: the sidebar, the previous/next
links and the page titles in them. On an incremental build Sphinx rewrites
only the pages whose sources changed, so renaming a page (in English or in a
translation) or changing a toctree left the old title or order in every other
page. This extension notices such a change and marks every page for writing.

Pages are made by our code too: when conf/ or the pins change, Sphinx reads
and writes every page again, since this extension's ``env_version`` is their
digest (site_layout.machinery_version).
"""

from site_layout import machinery_version


def _navigation(env):
    """The titles and toctrees of all pages, as plain comparable values."""
    titles = {doc: title.astext() for doc, title in env.titles.items()}
    toctrees = {doc: tuple(children) for doc, children in env.toctree_includes.items()}
    return titles, toctrees


def remember(app, env, docnames):
    """Before Sphinx re-reads the changed pages, note the navigation they made."""
    env.dp_navigation_before = _navigation(env)


def rewrite_all_if_changed(app, env):
    """Return every page if titles or toctrees differ from before the read."""
    before = getattr(env, "dp_navigation_before", None)
    env.dp_navigation_before = None  # not worth keeping in the pickle
    if before is None or before == _navigation(env):
        return []
    return sorted(env.found_docs)


def setup(app):
    app.connect("env-before-read-docs", remember)
    app.connect("env-get-updated", rewrite_all_if_changed)
    return {
        "version": "1",
        "env_version": machinery_version(),
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }

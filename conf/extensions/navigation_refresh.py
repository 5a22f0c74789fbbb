"""Write every page again when the navigation changes, not only the edited ones.

Each page carries the sidebar and previous/next links with the other pages'
titles, which an incremental build would leave old. And since our code makes
pages too, this extension's ``env_version`` is the digest of conf/ and the pins
(site_layout.machinery_version): when they change, Sphinx reads every page again.
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

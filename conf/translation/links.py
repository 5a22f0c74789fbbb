"""Where a link leads, read as a browser reads it: the one rule for links in translations.

A translation may keep the English's links and point them at other pages of
the same sites; it may not lead anywhere else. The build
(conf/sphinxext/translation_safety.py) and ``make check``
(translation/checks/safety.py) both judge every link with :func:`judge`:

* a scheme other than http(s) (``javascript:``, ``data:``, ``mailto:``...)
  is refused unless the English has that very URL;
* a host the English entry does not link is refused, however it is
  spelled: ``https://evil.example``, ``//evil.example``, ``/\\evil.example``,
  ``https:evil.example``, ``https://site@evil.example``, upper case,
  percent-encoding, tabs and line breaks inside (browsers drop them);
* the same host with another path (a localised page of the same site) is
  allowed, and ``make check`` reports it as a warning; so is a host that
  differs from the English's only in a leading language label
  (``en.wikipedia.org`` -> ``zh.wikipedia.org``), when the English's host has one;
* a relative link stays on this site and is allowed.

Parsed links arrive with their entities already decoded by the parser
(``&#47;&#47;`` in MyST is ``//``).
"""

import re
from urllib.parse import unquote

# Stripped from both ends of an href by browsers (the URL standard's C0 control or space).
_ENDS = "".join(map(chr, range(0x21)))
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
WEB = ("http", "https")


def target(url):
    """Return (scheme, host) of *url* as a browser on an http(s) page reads it.

    ``scheme`` is "" for a relative or scheme-relative link; ``host`` is ""
    for a link that stays on this site, None for a scheme without hosts.
    """
    url = re.sub(r"[\t\n\r]", "", url.strip(_ENDS)).replace("\\", "/")
    match = _SCHEME.match(url)
    if match and match[1].lower() not in WEB:
        return match[1].lower(), None
    if match:  # "https:host" and "https:/\\host" name a host as "https://host" does
        return match[1].lower(), _host(url[match.end():].lstrip("/"))
    if url.startswith("//"):
        return "", _host(url.lstrip("/"))
    return "", ""


def _host(rest):
    """The host of an authority-and-path *rest* ("user@Host:80/path" -> "host")."""
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0].rsplit("@", 1)[-1]
    host = authority if authority.startswith("[") else authority.rsplit(":", 1)[0]
    return unquote(host).lower().rstrip(".")


ERROR, WARNING = "error", "warning"


def judge(url, english_urls):
    """Return None if the link *url* may stand in a translation of an entry linking
    *english_urls*, else (``"error"`` or ``"warning"``, why)."""
    english_urls = set(english_urls)
    if url in english_urls:
        return None
    scheme, host = target(url)
    if host is None:
        return ERROR, f"a link that is not http(s): {scheme}:"
    if not host:
        return None
    hosts = {target(known)[1] for known in english_urls}
    if host not in hosts and _localised(host) not in {_localised(h) for h in hosts if h} - {None}:
        return ERROR, f"a link to a host the English does not link: {host}"
    return WARNING, f"a link to another page of {host} than the English's"


_LANGUAGE_LABEL = re.compile(r"[a-z]{2,3}(?:-[a-z]{2,4})?")


def _localised(host):
    """The rest of *host* after a leading language label (``en.`` in en.wikipedia.org), or None."""
    label, _, rest = host.partition(".")
    return rest if rest.count(".") and _LANGUAGE_LABEL.fullmatch(label) else None

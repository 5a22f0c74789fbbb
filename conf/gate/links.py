"""Where a link leads, read as a browser reads it: the one rule for links in translations.

A translation may keep the English's links and point them at other pages of
the same sites, nowhere else; the build and make check (gate/safety.py) both
judge every link with :func:`judge`. A scheme other than http(s) is refused
unless the English has that very URL; a host the English does not link is
refused however it is spelled (``//evil.example``, ``/\\evil.example``,
``https:evil.example``, ``https://site@evil.example``, case, percent-encoding,
tabs and line breaks, which browsers drop; another port is another host); the
same host with another path, or the English's host in another language
(:func:`_same_site`), is a warning; a relative link stays on this site.
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
        return match[1].lower(), _host(url[match.end() :].lstrip("/"))
    if url.startswith("//"):
        return "", _host(url.lstrip("/"))
    return "", ""


def _host(rest):
    """The host of an authority-and-path *rest*, with its port unless a web default.

    "user@Host:80/path" -> "host"; "127.0.0.1:2375/x" -> "127.0.0.1:2375": another
    port of a host is another server (a local Docker API is not a local web page).
    """
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0].rsplit("@", 1)[-1]
    host, _, port = authority.rpartition(":") if ":" in authority.split("]")[-1] else (authority, "", "")
    host = unquote(host).lower().rstrip(".")
    port = port.lstrip("0") or ("0" if port else "")
    return host if port in ("", "80", "443") else f"{host}:{port}"


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
    hosts = {target(known)[1] for known in english_urls} - {None, ""}
    if not any(_same_site(host, known) for known in hosts):
        return ERROR, f"a link to a host the English does not link: {host}"
    return WARNING, f"a link to another page of {host} than the English's"


# ISO 639-1 codes, and the Chinese labels sites use (cn., hk., zh-cn., zh-hans.).
_LANGUAGES = set(
    """
aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy
da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu
hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb
lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om
or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so sq sr ss st su sv sw
ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo za zh zu cn hk
""".split()
)
_LANGUAGE_LABEL = re.compile(r"([a-z]{2})(?:-(?:[a-z]{2}|hans|hant|latn|cyrl))?")


def _is_language(label):
    match = _LANGUAGE_LABEL.fullmatch(label)
    return bool(match) and match[1] in _LANGUAGES


def _same_site(host, english):
    """True if *host* is the English's *english* host, or its page in another language.

    ``www.`` is no part of a host here (``python.org`` is ``www.python.org``). A
    language variant replaces the English host's leading language label, or
    its ``www.``, by another language tag (en.wikipedia.org -> zh.wikipedia.org,
    www.example.org -> zh-cn.example.org); a bare host gains none, since
    zh.medium.com is somebody's site, not medium.com's Chinese page. Any other
    label is a site of its own: pwn.readthedocs.io is not tox.readthedocs.io.
    """
    bare, english_bare = host.removeprefix("www."), english.removeprefix("www.")
    if bare == english_bare:
        return True
    label, _, rest = bare.partition(".")
    english_label, _, english_rest = english.partition(".")
    return (
        _is_language(label)
        and rest == english_rest
        and "." in rest
        and (english_label == "www" or _is_language(english_label))
    )

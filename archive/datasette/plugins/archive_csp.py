"""Every HTML page of the reading room sends a strict Content-Security-Policy.

Scripts run from the server's own files (Datasette's ``/-/static/``) and, inline, only
those the templates hold, each allowed by its sha256: an inline script of a served page
is hashed into the policy when it is one of the templates' (``template_scripts``), its
template expressions rendered as plain JSON values (``DATASETTE_ALLOW_FACET = true;``).
Any other script, such as one that came from an archived page by some route, is refused
by the browser. Datasette's pages write their responsive table styles inline and colour
headers with ``style=""``, so styles may be inline; nothing loads from elsewhere (images
are the archive's own, ``/-/blogarchive/DATABASE/media/ID``), nothing frames the pages
and forms post only to the server.
"""

import base64
import hashlib
import re
from collections.abc import Awaitable, Callable, MutableMapping
from functools import cache
from pathlib import Path
from typing import Any

import datasette
from datasette import hookimpl

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]], Awaitable[None]]

TEMPLATE_DIRS = (Path(datasette.__file__).parent / "templates", Path(__file__).parent.parent / "templates")
INLINE_SCRIPT = re.compile(r"<script\b([^>]*)>(.*?)</script>", re.S | re.I)
TEMPLATE_EXPRESSION = re.compile(r"\{\{.*?\}\}", re.S)
# what a template expression inside a script may be rendered as: a JSON literal, no markup
JSON_VALUE = r'(?:true|false|null|-?\d+(?:\.\d+)?|"[^"<\\]*")'
POLICY = ("default-src 'none'; script-src 'self'{hashes}; style-src 'self' 'unsafe-inline'; "
          "img-src 'self' data:; font-src 'self'; connect-src 'self'; form-action 'self'; "
          "base-uri 'none'; frame-ancestors 'none'")


@cache
def template_scripts() -> re.Pattern[str]:
    """One pattern matching the text of every inline script the templates hold (no ``{% %}`` logic in it)."""
    forms = set()
    for folder in TEMPLATE_DIRS:
        for path in folder.glob("*.html"):
            for attrs, body in INLINE_SCRIPT.findall(path.read_text(encoding="utf-8")):
                if "src=" in attrs or "{%" in body or "{{" in attrs:
                    continue
                pieces = TEMPLATE_EXPRESSION.split(body)
                forms.add(JSON_VALUE.join(re.escape(p) for p in pieces))
    return re.compile("|".join(sorted(forms)) or "(?!)", re.S)


def policy(html: str) -> str:
    """The page's policy: its own inline scripts that are the templates' allowed by hash."""
    allowed = template_scripts()
    hashes = sorted({
        "'sha256-" + base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode() + "'"
        for attrs, body in INLINE_SCRIPT.findall(html)
        if "src=" not in attrs and allowed.fullmatch(body)
    })
    return POLICY.format(hashes="".join(f" {h}" for h in hashes))


def with_policy(app: ASGIApp) -> ASGIApp:
    """``app``, its HTML answers held until whole and sent with their policy."""

    async def wrapped(scope: Scope, receive: Callable[[], Awaitable[Message]], send: Callable[[Message], Awaitable[None]]) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        start: Message | None = None
        chunks: list[bytes] = []

        async def held(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                content_type = {k.lower(): v for k, v in message.get("headers") or []}.get(b"content-type", b"")
                if content_type.startswith(b"text/html"):
                    start = message
                    return
            elif message["type"] == "http.response.body" and start is not None:
                chunks.append(message.get("body", b""))
                if message.get("more_body"):
                    return
                body = b"".join(chunks)
                csp = policy(body.decode("utf-8", "replace")).encode()
                headers = [(k, v) for k, v in start.get("headers") or [] if k.lower() != b"content-security-policy"]
                await send({**start, "headers": [*headers, (b"content-security-policy", csp)]})
                await send({"type": "http.response.body", "body": body})
                return
            await send(message)

        await app(scope, receive, held)

    return wrapped


@hookimpl
def asgi_wrapper(datasette: Any) -> Callable[[ASGIApp], ASGIApp]:
    return with_policy

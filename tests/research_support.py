"""A small package to research: a session with redirects, auth helpers, names used twice."""

from __future__ import annotations

from pathlib import Path

FILES = {
    "shop/__init__.py": "from shop.sessions import Session\n",
    "shop/auth.py": '''"""Authentication helpers."""

import base64


def basic_auth_header(username, password):
    """Build the value of an Authorization header for HTTP basic auth."""
    token = base64.b64encode(f"{username}:{password}".encode()).decode()
    return "Basic " + token


def check(token):
    return token.startswith("Basic ")
''',
    "shop/sessions.py": '''"""Sessions keep settings across requests."""

from shop.auth import basic_auth_header
from shop import cart


class Session:
    """A session: cookies, auth and redirect handling."""

    max_redirects = 30

    def request(self, method, url, auth=None):
        headers = {}
        if auth:
            headers["Authorization"] = basic_auth_header(*auth)
        response = self.send(method, url, headers)
        return self.resolve_redirects(response)

    def send(self, method, url, headers):
        return {"url": url, "status": 200, "headers": headers}

    def resolve_redirects(self, response):
        """Follow Location headers until a response is not a redirect."""
        hops = 0
        while response["status"] in (301, 302) and hops < self.max_redirects:
            hops += 1
            response = self.send("GET", response["location"], {})
        cart.check(response)
        return response
''',
    "shop/cart.py": '''"""The shopping cart."""


def check(response):
    """A cart's own check, with the same name as auth.check."""
    return response is not None


def total(items):
    return sum(price * count for price, count in items)
''',
    "shop/orders.py": '''"""Orders and payments: two classes with a validate method each."""


class Order:
    def validate(self):
        return True


class Payment:
    def validate(self):
        return True


class Express(Order):
    def ship(self):
        return self.validate()


def finish(item):
    item.validate()
    return check(item)
''',
    "README.md": "# shop\n\nSessions, auth, redirects, carts and checks: everything is here.\n",
    ".gitignore": "build/\n",
    "build/generated.py": "def basic_auth_header():\n    pass\n",
    ".venv/pyvenv.cfg": "home = /usr\n",
    ".venv/lib.py": "def resolve_redirects():\n    pass\n",
}


def make_package(root: Path) -> Path:
    for name, text in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root

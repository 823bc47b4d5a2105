"""The auditors' review: a web app where two people decide voter intent.

``create_app(store)`` builds the Flask app (server-rendered Jinja2 pages, a little vanilla
JS for keyboard shortcuts and zoom). Routes parse the request, call the library
(:mod:`scanpipe.review.decide`, :mod:`scanpipe.review.index`, :mod:`scanpipe.workflow`) and
render. ``scanpipe review`` serves it; ``scanpipe user add`` makes the accounts.
"""

from typing import Any

__all__ = ["ReviewConfig", "create_app"]


def __getattr__(name: str) -> Any:
    """Import the Flask app only when asked for: ingest refreshes the review index
    (:mod:`scanpipe.review.index`) without paying for Flask."""
    if name in __all__:
        from scanpipe.review import app

        return getattr(app, name)
    raise AttributeError(name)

"""The auditors' review: a web app where two people decide voter intent.

``create_app(store)`` builds the Flask app (server-rendered Jinja2 pages, a little vanilla
JS for keyboard shortcuts and zoom). Routes parse the request, call the library
(:mod:`scanpipe.review.decide`, :mod:`scanpipe.review.index`, :mod:`scanpipe.workflow`) and
render. ``scanpipe review`` serves it; ``scanpipe user add`` makes the accounts.
"""

from scanpipe.review.app import ReviewConfig, create_app

__all__ = ["ReviewConfig", "create_app"]

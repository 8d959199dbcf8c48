"""Every handler declares its parameters explicitly (path, query, body, dependency): litestar
infers the rest with a deprecation warning per parameter, and the inference goes in 3.0."""

from __future__ import annotations

import warnings

from service.http.app import create_app
from service.settings import Settings


def test_building_the_app_and_its_openapi_warns_nothing() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        app = create_app(Settings())
        assert app.openapi_schema.paths
    assert [str(w.message) for w in caught] == []

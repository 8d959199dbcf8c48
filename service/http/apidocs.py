"""The API docs page (``/schema``) served whole by the service, and ``/`` leading to the viewer.

litestar's Swagger UI page loads Swagger UI's script, style and favicon from public CDNs: with
no internet it is a blank page. Here the same page names the files of the ``swagger-ui-bundle-v2``
package (Swagger UI's own ``dist`` files, shipped on PyPI), served by this service under
``/schema/swagger-ui/``; Swagger UI's online validator badge is switched off. The page then
makes no request that leaves the server it came from (``tests/integration/test_api_docs_browser.py``
checks it in Chromium).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from litestar import Request, Router, get
from litestar.openapi.plugins import SwaggerRenderPlugin
from litestar.response import Redirect
from litestar.static_files import create_static_files_router
from swagger_ui_bundle import swagger_ui_path  # type: ignore[import-untyped]

#: Where the API docs page is (litestar's OpenAPIConfig.path).
DOCS_PATH = "/schema"
#: Where Swagger UI's files are served, inside the docs router.
_ASSETS = "/swagger-ui"
_ASSETS_URL = DOCS_PATH + _ASSETS


class OfflineSwagger(SwaggerRenderPlugin):
    """litestar's Swagger UI page with every file it loads served by this service."""

    def __init__(self) -> None:
        super().__init__(
            js_url=f"{_ASSETS_URL}/swagger-ui-bundle.js",
            css_url=f"{_ASSETS_URL}/swagger-ui.css",
            standalone_preset_js_url=f"{_ASSETS_URL}/swagger-ui-standalone-preset.js",
            favicon=f"<link rel='icon' type='image/png' href='{_ASSETS_URL}/favicon-32x32.png'>",
        )

    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:
        page = super().render(request, openapi_schema)
        # Swagger UI asks validator.swagger.io for a badge by default: not from here.
        marker = b"deepLinking: true,"
        if marker not in page:  # litestar changed its template: fail loudly, not silently online
            raise RuntimeError("litestar's Swagger UI template changed: revisit OfflineSwagger")
        return page.replace(marker, marker + b" validatorUrl: null,", 1)

    def receive_router(self, router: Router) -> None:
        super().receive_router(router)
        router.register(
            create_static_files_router(
                path=_ASSETS,
                directories=[Path(str(swagger_ui_path))],
                include_in_schema=False,
                name="swagger-ui",
            )
        )


@get("/", include_in_schema=False, sync_to_thread=False)
def root() -> Redirect:
    """``/``: a person who opens the server's address lands on the viewer."""
    return Redirect("viewer/", status_code=302)  # relative: right behind a path prefix too


#: Everything this module serves besides the docs router; ``service.http.app`` adds it.
ROUTES: list[Any] = [root]

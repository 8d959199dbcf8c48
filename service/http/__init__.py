"""The HTTP edge: where a request enters (:mod:`service.http.app`), is hardened
(:mod:`service.http.hardening`), rate-limited (:mod:`service.http.limits`), handed to the
application layer, and answered — JSON, problem JSON, SVG, or the viewer's static files. The
OpenAPI document is completed by :mod:`service.http.openapi` from the answer Structs of
:mod:`service.http.schemas`. Nothing here touches PostgreSQL or Redis directly."""

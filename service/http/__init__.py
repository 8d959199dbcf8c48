"""The HTTP edge: where a request enters (:mod:`service.http.app`, the litestar app: middleware,
error handlers, lifespan), is hardened (:mod:`service.http.hardening`), rate-limited
(:mod:`service.http.limits`), routed (:mod:`service.http.routes`: lobby, play, history, audit,
system; :mod:`service.http.pictures`), handed to the application layer — whose objects the
handlers receive by dependency injection (:mod:`service.http.services`) — and answered: the
answer Structs of :mod:`service.http.schemas`, stored bytes, problem JSON
(:mod:`service.http.errors`), SVG, or the viewer's static files. The OpenAPI document is
completed by :mod:`service.http.openapi`. Nothing here touches PostgreSQL or Redis directly."""

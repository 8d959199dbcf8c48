"""deploy/kubernetes/manifest.yaml says what docs/scaling.md promises: N replicas of a stateless
API, ready only on /readyz, a PodDisruptionBudget, PostgreSQL and Redis outside the cluster."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

MANIFEST = Path(__file__).resolve().parent.parent / "deploy" / "kubernetes" / "manifest.yaml"


def _objects() -> dict[tuple[str, str], Any]:
    docs = [d for d in yaml.safe_load_all(MANIFEST.read_text()) if d]
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}


def test_replicas_are_ready_on_readyz_and_budgeted() -> None:
    objects = _objects()
    deployment = objects[("Deployment", "manifest-api")]
    assert deployment["spec"]["replicas"] >= 2
    assert deployment["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
    pod = deployment["spec"]["template"]["spec"]
    (api,) = pod["containers"]
    assert api["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert api["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert "volumeMounts" not in api  # stateless: nothing kept in the pod
    budget = objects[("PodDisruptionBudget", "manifest-api")]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert budget["spec"]["selector"]["matchLabels"] == labels
    assert budget["spec"]["maxUnavailable"] == 1 < deployment["spec"]["replicas"]
    service = objects[("Service", "manifest-api")]
    assert service["spec"]["selector"] == labels


def test_postgres_and_redis_are_external_services() -> None:
    objects = _objects()
    for name in ("postgres-primary", "postgres-replica", "redis"):
        assert objects[("Service", name)]["spec"]["type"] == "ExternalName"
    kinds = {kind for kind, _ in objects}
    assert "StatefulSet" not in kinds and "PersistentVolumeClaim" not in kinds

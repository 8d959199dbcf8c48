"""The highly available PostgreSQL set-ups of deploy/ say what docs/operations.md ("PostgreSQL
failover") promises: three servers, synchronous replication that never falls back to
acknowledging on one server, a demoted primary rewound, and API instances that follow the
primary by themselves. The built-in Kubernetes objects are checked with ``kubernetes-validate``;
the CloudNativePG ``Cluster``, a custom resource it has no schema for, against the operator's own
CRD schema (``tests/data/cloudnative-pg``, with its source), as strictly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

from service.eventstore.primary import split_hosts

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"
K8S_HA = DEPLOY / "kubernetes" / "postgres-ha.yaml"
CNPG_SCHEMA = Path(__file__).resolve().parent / "data" / "cloudnative-pg" / "cluster-v1.schema.json"


def _k8s() -> dict[tuple[str, str], Any]:
    docs = [d for d in yaml.safe_load_all(K8S_HA.read_text()) if d]
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}


def test_kubernetes_objects_validate() -> None:
    """Every built-in object validates strictly against the Kubernetes schemas; the
    CloudNativePG ``Cluster`` is a custom resource, which kubernetes-validate has no schema
    for (it says so, rather than passing it unchecked): it is validated against its CRD."""
    version = kubernetes_validate.latest_version()
    for (kind, _), doc in _k8s().items():
        if doc["apiVersion"].startswith("postgresql.cnpg.io/"):
            with pytest.raises(kubernetes_validate.SchemaNotFoundError):
                kubernetes_validate.validate(doc, version, strict=True)
            _cnpg_validator().validate(doc)
            assert kind == "Cluster"
        else:
            kubernetes_validate.validate(doc, version, strict=True)
            assert kind == "Secret"


def _strict(schema: Any) -> Any:
    """The CRD's structural schema made strict as kubernetes-validate's ``strict=True`` is: an
    object with listed properties takes no others (the API server would silently prune them,
    so a misspelt field would be lost without a word), except where the CRD keeps unknown
    fields on purpose."""
    if isinstance(schema, list):
        return [_strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    strict = {k: _strict(v) for k, v in schema.items()}
    if (
        "properties" in strict
        and "additionalProperties" not in strict
        and not strict.get("x-kubernetes-preserve-unknown-fields")
    ):
        strict["additionalProperties"] = False
    return strict


def _cnpg_validator() -> jsonschema.protocols.Validator:
    schema = _strict(json.loads(CNPG_SCHEMA.read_text())["openAPIV3Schema"])
    validator: jsonschema.protocols.Validator = jsonschema.Draft7Validator(schema)
    return validator


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("spec", "instance"), 3),  # misspelt: would be pruned, leaving the default of 1
        (("spec", "instances"), "three"),
        (("spec", "postgresql", "synchronous", "method"), "all"),
        (("spec", "postgresql", "synchronous", "dataDurability"), "sometimes"),
        (("spec", "affinity", "podAntiAffinity"), "required"),
    ],
)
def test_the_cluster_schema_check_refuses_what_the_operator_would_not_take(
    path: tuple[str, ...], value: Any
) -> None:
    doc = _k8s()[("Cluster", "manifest-pg")]
    *parents, last = path
    target = doc
    for key in parents:
        target = target[key]
    target[last] = value
    with pytest.raises(jsonschema.ValidationError):
        _cnpg_validator().validate(doc)


def test_cloudnativepg_cluster_is_three_instances_with_a_required_synchronous_standby() -> None:
    objects = _k8s()
    cluster = objects[("Cluster", "manifest-pg")]["spec"]
    assert cluster["instances"] == 3
    assert "postgresql:15" in cluster["imageName"]
    sync = cluster["postgresql"]["synchronous"]
    assert sync["method"] in ("any", "first") and sync["number"] >= 1
    assert sync["dataDurability"] == "required"  # never acknowledged on one server
    assert cluster["bootstrap"]["initdb"]["database"] == "manifest"
    owner = cluster["bootstrap"]["initdb"]["secret"]["name"]
    assert objects[("Secret", owner)]["type"] == "kubernetes.io/basic-auth"
    assert cluster["affinity"]["podAntiAffinityType"] == "required"


def test_compose_ha_profile_is_three_patroni_members_and_apis_on_a_multi_host_dsn() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    ha = {name for name, s in services.items() if "ha" in s.get("profiles", [])}
    assert {"etcd", "pg0", "pg1", "pg2", "ha-api-a", "ha-api-b"} <= ha
    # the default stack is unchanged: no service of it is in a profile
    assert {"postgres", "redis", "migrate", "api-a", "api-b"}.isdisjoint(ha)
    names = {services[n]["environment"]["PATRONI_NAME"] for n in ("pg0", "pg1", "pg2")}
    assert names == {"pg0", "pg1", "pg2"}
    for api in ("ha-api-a", "ha-api-b"):
        dsn = services[api]["environment"]["PG_DSN"]
        assert dsn.endswith("?target_session_attrs=read-write")
        assert len(split_hosts(dsn)) == 3
    patroni = yaml.safe_load((DEPLOY / "patroni" / "patroni.yml").read_text())
    dcs = patroni["bootstrap"]["dcs"]
    assert dcs["synchronous_mode"] is True and dcs["synchronous_mode_strict"] is True
    assert dcs["postgresql"]["use_pg_rewind"] is True
    assert dcs["postgresql"]["parameters"]["wal_log_hints"] == "on"
    assert dcs["ttl"] >= dcs["loop_wait"] + 2 * dcs["retry_timeout"]
    # Patroni 3.0.2 (Debian 12) must use etcd's v2 API (docs/operations.md says why)
    assert "etcd" in patroni and "etcd3" not in patroni
    assert "--enable-v2=true" in services["etcd"]["command"]

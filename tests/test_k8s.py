"""k8s/: the manifests are valid Kubernetes and agree with what the code serves.

Both overlays are rendered with `kubectl kustomize` (skipped where kubectl is missing) and
every object is validated offline against the Kubernetes OpenAPI schemas (kubernetes-validate,
strict: unknown fields fail). Then the values that must match the code are read from both
sides: ports, probes, health service name, environment variables, command lines (parsed with
the real argument parsers), shutdown timings, store URLs, and the Services, policies and
budgets that name pods by label.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from tests.support import REPO

K8S = REPO / "k8s"
OVERLAYS = ("dev", "prod")
KUBE_VERSION = "1.30"
KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")


def load_all(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def kustomizations() -> Iterator[Path]:
    yield from sorted(K8S.rglob("kustomization.yaml"))


@pytest.fixture(scope="module", params=OVERLAYS)
def rendered(request: pytest.FixtureRequest) -> tuple[str, list[dict[str, Any]]]:
    if KUBECTL is None:
        pytest.skip("kubectl is not installed")
    out = subprocess.run(
        [KUBECTL, "kustomize", str(K8S / "overlays" / request.param)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    return request.param, [d for d in yaml.safe_load_all(out) if d]


def find(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    for d in docs:
        if d["kind"] == kind and d["metadata"]["name"] == name:
            return d
    raise AssertionError(f"no {kind} {name}")


def container(workload: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in workload["spec"]["template"]["spec"]["containers"] if c["name"] == name)


def env_of(c: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e["value"] for e in c.get("env", [])}


def port_named(c: dict[str, Any], name: str) -> int:
    return next(p["containerPort"] for p in c["ports"] if p["name"] == name)


def parsed(parser_factory: Any, args: list[str], env: dict[str, str], monkey: Any) -> Any:
    """The command line as the code reads it, with the manifest's environment."""
    for key in [k for k in os.environ if k.startswith("CROUPIER_")]:
        monkey.delenv(key)
    for key, value in env.items():
        monkey.setenv(key, value)
    return parser_factory().parse_args(args)


def labels_match(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


# --- the files themselves (no kubectl needed) ----------------------------------------------


def test_every_kustomization_names_existing_files() -> None:
    found = list(kustomizations())
    assert {p.parent.relative_to(K8S).as_posix() for p in found} == {
        "base",
        "overlays/dev",
        "overlays/prod",
    }
    for path in found:
        k = yaml.safe_load(path.read_text())
        named = list(k.get("resources", [])) + [p["path"] for p in k.get("patches", [])]
        for entry in named:
            target = path.parent / entry
            assert target.exists(), f"{path}: {entry} does not exist"
            if target.is_dir():
                assert (target / "kustomization.yaml").exists()


def test_every_manifest_has_kind_and_name() -> None:
    for path in sorted(K8S.rglob("*.yaml")):
        for doc in load_all(path):
            assert doc.get("apiVersion") and doc.get("kind"), path
            if doc["kind"] != "Kustomization":
                assert doc.get("metadata", {}).get("name"), path


def test_dockerfile_is_multi_stage_non_root_without_compilers() -> None:
    text = (K8S / "Dockerfile").read_text()
    stages = re.split(r"^FROM ", text, flags=re.M)[1:]
    assert len(stages) >= 2, "a build stage and a run stage"
    final = stages[-1]
    assert "--from=build" in final
    assert not re.search(r"\b(gcc|build-essential|g\+\+|apt-get install|pip install)\b", final)
    user = re.search(r"^USER (\S+)", final, flags=re.M)
    assert user is not None and user.group(1).split(":")[0] not in ("root", "0")
    assert re.search(r'^ENTRYPOINT \["croupier"\]', final, flags=re.M)
    # the build stage installs from the lock, and the build generates the gRPC code the package
    # imports (setup.py: built, not copied in)
    assert "uv sync --frozen" in stages[0] and "--require-hashes" in stages[0]
    assert "setup.py" in stages[0] and "grpc_tools" in (REPO / "setup.py").read_text()
    for copied in re.findall(r"^COPY (?!--)(\S+)", text, flags=re.M):
        assert (REPO / copied).exists(), f"the Dockerfile copies {copied}, which is missing"


# --- rendered overlays ---------------------------------------------------------------------


@needs_kubectl
def test_overlays_validate_against_the_kubernetes_schemas(
    rendered: tuple[str, list[dict[str, Any]]],
) -> None:
    import kubernetes_validate

    _, docs = rendered
    for doc in docs:
        kubernetes_validate.validate(doc, KUBE_VERSION, strict=True)


@needs_kubectl
def test_overlay_contents(rendered: tuple[str, list[dict[str, Any]]]) -> None:
    overlay, docs = rendered
    kinds = sorted({d["kind"] for d in docs})
    server = find(docs, "Deployment", "croupier-server")
    find(docs, "Deployment", "croupier-bots")
    if overlay == "dev":
        assert server["spec"]["replicas"] == 1
        assert "PersistentVolumeClaim" in kinds
        assert server["spec"]["strategy"]["type"] == "Recreate"
    else:
        assert server["spec"]["replicas"] == 3
        redis = find(docs, "StatefulSet", "croupier-redis")
        args = container(redis, "redis")["args"]
        assert args[args.index("--appendonly") + 1] == "yes"
        hpa = find(docs, "HorizontalPodAutoscaler", "croupier-bots")
        assert hpa["spec"]["scaleTargetRef"]["name"] == "croupier-bots"
        assert hpa["spec"]["metrics"][0]["resource"]["name"] == "cpu"
        bots = find(docs, "Deployment", "croupier-bots")
        assert container(bots, "bots")["resources"]["requests"]["cpu"]  # HPA needs a request
        assert {"PodDisruptionBudget", "NetworkPolicy"} <= set(kinds)
    headless = find(docs, "Service", "croupier-headless")
    assert headless["spec"]["clusterIP"] == "None"
    find(docs, "Service", "croupier")


@needs_kubectl
def test_server_manifest_matches_the_server(
    rendered: tuple[str, list[dict[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from service.cli import build_parser
    from service.server import SERVICE_NAME
    from service.store_redis import parse_url

    overlay, docs = rendered
    server = find(docs, "Deployment", "croupier-server")
    pod = server["spec"]["template"]
    c = container(server, "server")
    env = env_of(c)
    args = parsed(build_parser, c["args"], env, monkeypatch)
    assert args.command == "serve"
    grpc_port = int(args.listen.rsplit(":", 1)[1])
    assert args.listen.startswith("0.0.0.0:"), "reachable from other pods"
    assert port_named(c, "grpc") == grpc_port
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        assert c[probe]["grpc"]["port"] == grpc_port, probe
        assert c[probe]["grpc"].get("service", "") in ("", SERVICE_NAME), probe
    # readiness follows the service the server marks NOT_SERVING when draining
    assert c["readinessProbe"]["grpc"]["service"] == SERVICE_NAME
    assert args.metrics_port > 0
    assert port_named(c, "metrics") == args.metrics_port
    annotations = pod["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert int(annotations["prometheus.io/port"]) == args.metrics_port
    # SIGTERM -> drain -> grace must end before Kubernetes sends SIGKILL
    assert args.drain > 0
    assert pod["spec"]["terminationGracePeriodSeconds"] >= args.drain + args.grace + 5
    assert pod["spec"]["securityContext"]["runAsNonRoot"] is True
    # the store
    if overlay == "dev":
        path = Path(args.store.removeprefix("sqlite:"))
        mounts = [m["mountPath"] for m in c["volumeMounts"]]
        assert any(path.is_relative_to(m) for m in mounts if m != "/tmp")
    else:
        url, _, retention = parse_url(args.store)
        parts = urlsplit(url)
        assert parts.scheme == "redis" and retention > 0
        redis_service = find(docs, "Service", parts.hostname or "")
        assert redis_service["spec"]["ports"][0]["port"] == parts.port
    # the Services reach the server's gRPC port
    for name in ("croupier", "croupier-headless"):
        svc = find(docs, "Service", name)
        assert labels_match(svc["spec"]["selector"], pod["metadata"]["labels"])
        (port,) = svc["spec"]["ports"]
        assert port["targetPort"] in ("grpc", grpc_port)


@needs_kubectl
def test_bots_manifest_matches_the_worker(
    rendered: tuple[str, list[dict[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from bots.worker import STOP_GRACE
    from bots.worker import build_parser as bots_parser

    _, docs = rendered
    bots = find(docs, "Deployment", "croupier-bots")
    pod = bots["spec"]["template"]
    c = container(bots, "bots")
    assert c["args"][0] == "bots"
    args = parsed(bots_parser, c["args"][1:], env_of(c), monkeypatch)
    target = args.server.removeprefix("dns:///")
    host, port = target.rsplit(":", 1)
    svc = find(docs, "Service", host)
    assert int(port) in [p["port"] for p in svc["spec"]["ports"]]
    assert args.metrics_port > 0
    assert port_named(c, "metrics") == args.metrics_port
    assert int(pod["metadata"]["annotations"]["prometheus.io/port"]) == args.metrics_port
    # a stopping worker gives its seats back within STOP_GRACE; its supervisor waits 10 s more
    assert pod["spec"]["terminationGracePeriodSeconds"] >= STOP_GRACE + 10
    assert c["livenessProbe"]["httpGet"]["port"] in ("metrics", args.metrics_port)


@needs_kubectl
@needs_kubectl
def test_web_port_reaches_browsers(
    rendered: tuple[str, list[dict[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Connect / gRPC-Web: the server listens on its `web` port, the croupier-web Service
    reaches it, and (prod) the servers' network policy lets it in."""
    from service.cli import build_parser

    overlay, docs = rendered
    server = find(docs, "Deployment", "croupier-server")
    c = container(server, "server")
    args = parsed(build_parser, c["args"], env_of(c), monkeypatch)
    assert args.web_listen.startswith("0.0.0.0:"), "reachable from other pods"
    web_port = int(args.web_listen.rsplit(":", 1)[1])
    assert port_named(c, "web") == web_port
    svc = find(docs, "Service", "croupier-web")
    assert labels_match(svc["spec"]["selector"], server["spec"]["template"]["metadata"]["labels"])
    (port,) = svc["spec"]["ports"]
    assert port["targetPort"] in ("web", web_port) and port["appProtocol"] == "http"
    if overlay == "prod":
        policy = find(docs, "NetworkPolicy", "servers")
        allowed = {p["port"] for rule in policy["spec"]["ingress"] for p in rule["ports"]}
        assert web_port in allowed


def test_every_environment_variable_is_one_the_code_reads(
    rendered: tuple[str, list[dict[str, Any]]],
) -> None:
    sources = "".join(
        (REPO / f).read_text() for f in ("service/config.py", "service/cli.py", "bots/worker.py")
    )
    known = {f"CROUPIER_{n}" for n in re.findall(r'env(?:_float)?\("([A-Z_]+)"', sources)}
    known |= set(re.findall(r'"(CROUPIER_[A-Z_]+)"', sources))
    _, docs = rendered
    for d in docs:
        if d["kind"] not in ("Deployment", "StatefulSet"):
            continue
        for c in d["spec"]["template"]["spec"]["containers"]:
            if c["image"].split(":")[0] != "croupier":
                continue
            unknown = set(env_of(c)) - known
            assert not unknown, f"{d['metadata']['name']}: no code reads {sorted(unknown)}"


@needs_kubectl
def test_selectors_budgets_and_policies_name_real_pods(
    rendered: tuple[str, list[dict[str, Any]]],
) -> None:
    _, docs = rendered
    pods = {
        d["metadata"]["name"]: d["spec"]["template"]["metadata"]["labels"]
        for d in docs
        if d["kind"] in ("Deployment", "StatefulSet")
    }

    def selected(selector: dict[str, str]) -> set[str]:
        return {name for name, labels in pods.items() if labels_match(selector, labels)}

    for d in docs:
        if d["kind"] == "Service":
            assert selected(d["spec"]["selector"]), d["metadata"]["name"]
        if d["kind"] == "PodDisruptionBudget":
            assert selected(d["spec"]["selector"]["matchLabels"]), d["metadata"]["name"]
    policies = [d for d in docs if d["kind"] == "NetworkPolicy"]
    if not policies:
        return
    by_target = {frozenset(selected(p["spec"]["podSelector"]["matchLabels"])): p for p in policies}
    redis_policy = by_target[frozenset({"croupier-redis"})]
    sources = [
        selected(peer["podSelector"]["matchLabels"])
        for rule in redis_policy["spec"]["ingress"]
        for peer in rule["from"]
    ]
    assert sources == [{"croupier-server"}], "only servers reach Redis"
    bots_policy = by_target[frozenset({"croupier-bots"})]
    assert "Egress" in bots_policy["spec"]["policyTypes"]
    for rule in bots_policy["spec"]["egress"]:
        for peer in rule["to"]:
            reached = selected(peer["podSelector"]["matchLabels"])
            is_dns = peer["podSelector"]["matchLabels"] == {"k8s-app": "kube-dns"}
            assert reached == {"croupier-server"} or is_dns, "bots reach only servers"

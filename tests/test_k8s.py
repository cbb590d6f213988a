"""k8s/: the manifests are valid Kubernetes and agree with what the code serves.

Both overlays are rendered with `kubectl kustomize` (skipped where kubectl is missing) and
every object is validated offline against the Kubernetes OpenAPI schemas (kubernetes-validate,
strict: unknown fields fail). Then the values that must match the code are read from both
sides: ports, probes, health service name, environment variables, command lines (parsed with
the real argument parsers), shutdown timings, store URLs, and the Services, policies and
budgets that name pods by label. What an SRE asks of them is checked too: pinned images,
Secrets that exist where they are referenced (dev) and are never generated for prod, pods that
pass Pod Security "restricted" without a service account token, no replicas under an
autoscaler, a Redis that refuses writes before its container's memory limit, headless
governing Services; and of the image: a lock-installed, layered build whose runtime has no
build or report packages, with a .dockerignore.
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support import REPO

K8S = REPO / "k8s"
OVERLAYS = ("dev", "prod", "prod+grpc-tls", "cluster")
KUBE_VERSION = "1.30"
KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")


def load_all(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def kustomizations() -> Iterator[Path]:
    yield from sorted(K8S.rglob("kustomization.yaml"))


def render(overlay: str, tmp: Path) -> list[dict[str, Any]]:
    """`kubectl kustomize` of an overlay; "prod+grpc-tls" is prod with the grpc-tls component
    (kustomize wants relative paths: a kustomization beside them, in tmp)."""
    assert KUBECTL is not None
    if "+" in overlay:
        base, component = overlay.split("+")
        rel = os.path.relpath(K8S, tmp)
        (tmp / "kustomization.yaml").write_text(
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
            f"resources: [{rel}/overlays/{base}]\ncomponents: [{rel}/components/{component}]\n"
        )
        target = tmp
    else:
        target = K8S / "overlays" / overlay
    out = subprocess.run(
        [KUBECTL, "kustomize", str(target)], capture_output=True, text=True, timeout=60,
        check=True,
    ).stdout
    return [d for d in yaml.safe_load_all(out) if d]


@pytest.fixture(scope="module", params=OVERLAYS)
def rendered(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, list[dict[str, Any]]]:
    if KUBECTL is None:
        pytest.skip("kubectl is not installed")
    return request.param, render(request.param, tmp_path_factory.mktemp("overlay"))


def find(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    for d in docs:
        if d["kind"] == kind and d["metadata"]["name"] == name:
            return d
    raise AssertionError(f"no {kind} {name}")


def container(workload: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in workload["spec"]["template"]["spec"]["containers"] if c["name"] == name)


def env_of(c: dict[str, Any]) -> dict[str, str]:
    """The container's environment as the process sees it: $(NAME) expanded as Kubernetes
    does, a value from a Secret given as a sample (SECRET:<secret>/<key>)."""
    env: dict[str, str] = {}
    for e in c.get("env", []):
        if "value" in e:
            env[e["name"]] = re.sub(
                r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
                lambda m: env.get(m.group(1), m.group(0)), e["value"])
        elif "secretKeyRef" in e.get("valueFrom", {}):
            ref = e["valueFrom"]["secretKeyRef"]
            env[e["name"]] = secret_sample(unhashed(ref["name"]), ref["key"])
    return env


def unhashed(name: str) -> str:
    """A generated Secret's name without the content hash kustomize appends (dev overlay)."""
    return re.sub(r"-[a-z0-9]{10}$", "", name)


def secret_sample(name: str, key: str) -> str:
    """What stands for a Secret's value in a parsed environment (URL-safe, like the real one
    must be)."""
    return f"secret.{name}.{key}"


def pods(docs: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(name, pod template) of every workload."""
    for d in docs:
        if d["kind"] in ("Deployment", "StatefulSet", "DaemonSet", "Job"):
            yield d["metadata"]["name"], d["spec"]["template"]
        elif d["kind"] == "CronJob":
            yield d["metadata"]["name"], d["spec"]["jobTemplate"]["spec"]["template"]


def all_containers(pod: dict[str, Any]) -> list[dict[str, Any]]:
    spec = pod["spec"]
    return [*spec.get("initContainers", []), *spec["containers"]]


def port_named(c: dict[str, Any], name: str) -> int:
    return next(p["containerPort"] for p in c["ports"] if p["name"] == name)


def parsed(parser_factory: Any, args: list[str], env: dict[str, str], monkey: Any) -> Any:
    """The command line as the code reads it, with the manifest's environment."""
    for key in [k for k in os.environ if k.startswith("CROUPIER_")]:
        monkey.delenv(key)
    for key, value in env.items():
        monkey.setenv(key, value)
    return parser_factory().parse_args(args)


def mounted_secret(pod: dict[str, Any], c: dict[str, Any], path: str) -> tuple[str, str]:
    """(Secret, key) whose file is at `path` in container `c`; AssertionError if none."""
    volumes = {v["name"]: v for v in pod["spec"].get("volumes", [])}
    for m in c.get("volumeMounts", []):
        file = Path(path)
        if not file.is_relative_to(m["mountPath"]):
            continue
        secret = volumes[m["name"]].get("secret")
        assert secret is not None, f"{path} is not on a Secret volume"
        rel = file.relative_to(m["mountPath"]).as_posix()
        items = {i["path"]: i["key"] for i in secret.get("items", [])} or {rel: rel}
        assert rel in items, f"{path}: the Secret volume does not hold {rel}"
        return unhashed(secret["secretName"]), items[rel]
    raise AssertionError(f"nothing is mounted at {path}")


def labels_match(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def redis_of(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """The Redis StatefulSet: prod's one Redis, or the cluster's nodes."""
    (found,) = [d for d in docs if d["kind"] == "StatefulSet"
                and d["spec"]["template"]["metadata"]["labels"].get("app.kubernetes.io/name")
                == "croupier-redis"]
    return found


def redis_config_lines(docs: list[dict[str, Any]]) -> list[str]:
    """The lines the Redis pods' init script writes into redis.conf and sentinel.conf (its
    `echo "..."` lines, in order, with shell quoting undone)."""
    script = find(docs, "ConfigMap", "croupier-redis-scripts")["data"]["init.sh"]
    return [m.group(1).replace('\\"', '"')
            for m in re.finditer(r'echo "((?:[^"\\]|\\.)*)"', script)]


def redis_setting(docs: list[dict[str, Any]], name: str) -> str:
    """A data node setting (redis.conf), as the init script writes it."""
    found = [line.split(" ", 1)[1] for line in redis_config_lines(docs)
             if line.split(" ", 1)[0] == name]
    assert found, f"redis.conf sets no {name}"
    return found[0]


# --- the files themselves (no kubectl needed) ----------------------------------------------


def test_every_kustomization_names_existing_files() -> None:
    found = list(kustomizations())
    assert {p.parent.relative_to(K8S).as_posix() for p in found} == {
        "base",
        "components/grpc-tls",
        "overlays/cluster",
        "overlays/dev",
        "overlays/prod",
    }
    for path in found:
        k = yaml.safe_load(path.read_text())
        named = list(k.get("resources", []))
        named += [p["path"] for p in k.get("patches", []) if "path" in p]
        named += [f.split("=")[-1] for g in k.get("secretGenerator", []) for f in g["files"]]
        for entry in named:
            target = path.parent / entry
            assert target.exists(), f"{path}: {entry} does not exist"
            if target.is_dir():
                assert (target / "kustomization.yaml").exists()


def test_every_manifest_has_kind_and_name() -> None:
    for path in sorted(K8S.rglob("*.yaml")):
        for doc in load_all(path):
            assert doc.get("apiVersion") and doc.get("kind"), path
            if doc["kind"] not in ("Kustomization", "Component"):
                assert doc.get("metadata", {}).get("name"), path


PINNED_TAG = re.compile(r"^\d+\.\d+\.\d+([.-][A-Za-z0-9.-]+)?$")  # 7.2.12, 3.11.16-slim-bookworm
DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")


def pinned(image: str) -> bool:
    """An exact version or a digest: never `latest`, never a floating `7.2` or `3.11-slim`."""
    if DIGEST.search(image):
        return True
    name = image.rsplit("/", 1)[-1]
    return ":" in name and bool(PINNED_TAG.match(name.split(":", 1)[1]))


def test_what_pinned_means() -> None:
    for good in ("redis:7.2.12-bookworm", "python:3.11.16-slim-bookworm", "croupier:0.1.0",
                 "registry.example.com:5000/croupier:0.1.0", "node:20.20.2-bookworm-slim",
                 "croupier@sha256:" + "a" * 64):
        assert pinned(good), good
    for bad in ("croupier", "croupier:latest", "redis:7.2", "python:3.11-slim", "node:20-slim",
                "registry.example.com:5000/croupier"):
        assert not pinned(bad), bad


class Dockerfile:
    """k8s/Dockerfile read into its ARG defaults and stages (name -> (FROM, body))."""

    def __init__(self, text: str) -> None:
        self.text = re.sub(r"\\\n", " ", text)
        head = self.text.split("\nFROM ", 1)[0]
        self.args = dict(re.findall(r"^ARG (\w+)=(\S+)", head, flags=re.M))
        self.stages: dict[str, tuple[str, str]] = {}
        self.order: list[str] = []
        for n, chunk in enumerate(re.split(r"^FROM ", self.text, flags=re.M)[1:]):
            first, _, body = chunk.partition("\n")
            m = re.match(r"(\S+)(?: AS (\S+))?", first)
            assert m is not None
            image = re.sub(r"\$\{(\w+)\}", lambda a: self.args[a.group(1)], m.group(1))
            name = m.group(2) or str(n)
            self.stages[name] = (image, body)
            self.order.append(name)

    def chain(self, name: str) -> str:
        """The body of a stage with those of the stages it is built FROM, oldest first."""
        image, body = self.stages[name]
        return (self.chain(image) if image in self.stages else "") + body

    def runs(self, name: str) -> list[str]:
        return [line for line in self.stages[name][1].splitlines() if line.startswith("RUN ")]


DOCKERFILE = Dockerfile((K8S / "Dockerfile").read_text())


def test_dockerfile_base_images_are_pinned() -> None:
    for name, (image, _) in DOCKERFILE.stages.items():
        if image not in DOCKERFILE.stages:
            assert pinned(image), f"stage {name}: FROM {image} is not pinned"


def test_dockerfile_runtime_is_multi_stage_non_root_without_compilers() -> None:
    final = DOCKERFILE.order[-1]  # the default target
    body = DOCKERFILE.chain(final)
    assert "--from=build" in body and "--from=web" in body
    assert not re.search(r"\b(gcc|build-essential|g\+\+|apt-get install|pip install|uv )", body)
    user = re.findall(r"^USER (\S+)", body, flags=re.M)
    assert user and user[-1].split(":")[0] not in ("root", "0")
    assert re.search(r'^ENTRYPOINT \["croupier"\]', body, flags=re.M)
    assert re.findall(r"^CMD (.+)$", body, flags=re.M)[-1] == '["serve"]'
    for copied in re.findall(r"^COPY (?!--)(\S+)", DOCKERFILE.text, flags=re.M):
        assert (REPO / copied).exists(), f"the Dockerfile copies {copied}, which is missing"


def test_dockerfile_installs_dependencies_from_the_lock_before_the_source() -> None:
    """Lock-only layers first (a code change reinstalls nothing), everything hash-checked; the
    package is built by the lock's build group (setup.py generates the gRPC code)."""
    image, body = DOCKERFILE.stages["build"]
    lines = body.splitlines()

    def first(pattern: str) -> int:
        return next(i for i, line in enumerate(lines) if re.search(pattern, line))

    source = first(r"^COPY (engines|service|bots|common|clients|protos|setup\.py)\b")
    assert first(r"uv sync --frozen --only-group build") < source
    assert first(r"uv export .*--frozen .*-o /tmp/runtime.txt") < source
    assert first(r"uv pip install .*--require-hashes .*-r /tmp/runtime.txt") < source
    assert first(r"pip install --require-hashes -r requirements-uv.txt") < source
    assert first(r"^COPY pyproject.toml uv.lock") < source
    assert "--no-build-isolation --python /opt/build/bin/python" in body
    assert "setup.py" in body and "grpc_tools" in (REPO / "setup.py").read_text()


def _export(stage: str, output: str) -> set[str]:
    """The packages the stage's `uv export ... -o output` names, run against the real lock."""
    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    if not Path(uv).exists():
        pytest.skip("uv is not installed")
    (command,) = [
        line for line in DOCKERFILE.runs(stage) if f"-o {output}" in line
    ]
    export = command.split("uv export", 1)[1].split("&&", 1)[0].replace(f"-o {output}", "")
    done = subprocess.run(
        [uv, "export", *export.split(), "--no-hashes", "--quiet"], cwd=REPO, capture_output=True,
        text=True, timeout=60, check=True,
    )
    return {
        line.split("==")[0] for line in done.stdout.splitlines()
        if line and not line.startswith((" ", "#"))
    }


def test_runtime_has_no_build_or_report_packages() -> None:
    runtime = _export("build", "/tmp/runtime.txt")
    report = _export("report", "/tmp/report.txt")
    # what only code generation or the tournament chart needs stays out of the server image
    only_build_or_report = {"grpcio-tools", "setuptools", "matplotlib", "pillow", "fonttools",
                            "kiwisolver", "contourpy", "cycler", "pyparsing"}
    assert not runtime & only_build_or_report, runtime & only_build_or_report
    # what the server and bots import is there
    assert {"grpcio", "grpcio-health-checking", "protobuf", "numpy", "redis", "hypercorn",
            "connectrpc", "prometheus-client", "structlog", "pyjwt"} <= runtime
    assert "matplotlib" in report and "grpcio-tools" not in report
    # and nothing the server imports needs them: no module of ours imports them at the top
    for path in [*REPO.glob("service/**/*.py"), *REPO.glob("bots/**/*.py"),
                 *REPO.glob("common/**/*.py"), *REPO.glob("engines/**/*.py")]:
        assert not re.search(r"^(import|from) (matplotlib|grpc_tools)\b", path.read_text(),
                             flags=re.M), path


def dockerignore_rules() -> list[re.Pattern[str]]:
    """.dockerignore's patterns as regular expressions of context paths (no `!` used)."""
    rules = []
    for raw in (REPO / ".dockerignore").read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        assert not line.startswith("!"), "re-includes make the context hard to reason about"
        pattern = re.escape(line.strip("/"))
        pattern = pattern.replace(r"\*\*/", "(?:.*/)?").replace(r"\*", "[^/]*")
        rules.append(re.compile(pattern + "$"))
    return rules


def ignored(path: str, rules: list[re.Pattern[str]]) -> bool:
    parts = path.split("/")
    return any(r.match("/".join(parts[:n])) for n in range(1, len(parts) + 1) for r in rules)


def test_dockerignore_keeps_local_state_out_and_what_the_build_copies_in() -> None:
    rules = dockerignore_rules()
    for local in (".venv", ".venv-latest", ".git", "var", "var/croupier.db", "web/node_modules",
                  "web/node_modules/x/y.js", "node_modules", "gen/croupier/v1/x.py",
                  "web/dist/app.js", "web/src/gen/x.ts", "service/__pycache__/x.pyc"):
        assert ignored(local, rules), f".dockerignore lets {local} into the context"
    for copied in re.findall(r"^COPY (?!--)(.+) \S+$", DOCKERFILE.text, flags=re.M):
        for source in copied.split():
            assert not ignored(source, rules), f".dockerignore drops {source}, which is copied"
            if (REPO / source).is_dir():
                for file in (REPO / source).rglob("*"):
                    rel = file.relative_to(REPO).as_posix()
                    if file.is_file() and "__pycache__" not in rel and "/gen/" not in rel:
                        assert not ignored(rel, rules), f".dockerignore drops {rel}"


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
        assert "HorizontalPodAutoscaler" not in kinds
        assert "PersistentVolumeClaim" in kinds
        assert server["spec"]["strategy"]["type"] == "Recreate"
    else:
        assert server["spec"]["replicas"] == 3
        redis = redis_of(docs)
        # a drain proceeds without an operator, one Redis pod at a time (its replica, or the
        # sentinels' quorum, carries on)
        pdb = find(docs, "PodDisruptionBudget", "croupier-redis")
        assert pdb["spec"]["maxUnavailable"] == 1
        if overlay == "cluster":
            args = container(redis, "redis")["args"]
            assert args[args.index("--appendonly") + 1] == "yes"
            # three primaries with a replica each, made once by the Job
            assert args[args.index("--cluster-enabled") + 1] == "yes"
            assert redis["spec"]["replicas"] == 6
            job = find(docs, "Job", "croupier-redis-cluster-create")
            script = container(job, "create")["command"][-1]
            assert "--cluster-replicas 1" in script
            # every pod of the StatefulSet, by its stable name
            assert "for i in " + " ".join(map(str, range(redis["spec"]["replicas"]))) in script
            assert f"{redis['metadata']['name']}-$i.{redis['spec']['serviceName']}" in script
            # nothing of prod's Sentinel is left: no sentinel pods, scripts, Service or port
            names = {(d["kind"], d["metadata"]["name"]) for d in docs}
            assert not names & {("StatefulSet", "croupier-redis"),
                                ("ConfigMap", "croupier-redis-scripts"),
                                ("Service", "croupier-redis-headless")}
            assert "sentinel" not in {c["name"] for _, pod in pods(docs)
                                      for c in all_containers(pod)}
            assert "26379" not in yaml.safe_dump_all(docs)
        else:
            # a primary and two replicas, a sentinel beside each, one pod per node
            assert redis["metadata"]["name"] == "croupier-redis"
            assert redis["spec"]["replicas"] == 3
            assert {c["name"] for c in redis["spec"]["template"]["spec"]["containers"]} == {
                "redis", "sentinel"}
            anti = redis["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]
            assert anti["requiredDuringSchedulingIgnoredDuringExecution"][0]["topologyKey"] == (
                "kubernetes.io/hostname")
            assert redis_setting(docs, "appendonly") == "yes"
            assert redis_setting(docs, "appendfsync") == "always"
            lines = redis_config_lines(docs)
            (monitor,) = [line for line in lines if line.startswith("sentinel monitor ")]
            quorum = int(monitor.split()[-1])
            assert redis["spec"]["replicas"] - pdb["spec"]["maxUnavailable"] >= quorum
            assert quorum > redis["spec"]["replicas"] // 2, "two partitions never both fail over"
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
    from service.redis_connect import parse_store_url, sentinel_target
    from service.server import SERVICE_NAME

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
    if args.tls_cert:
        # the kubelet's gRPC probe speaks no TLS: with TLS on, probes connect only
        for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
            assert "grpc" not in c[probe], probe
            assert c[probe]["tcpSocket"]["port"] in ("grpc", grpc_port), probe
    else:
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
        store = parse_store_url(args.store)
        assert store.retention > 0
        # one WAIT setting on every Redis form: a move is acknowledged once a replica holds
        # it, and an unconfirmed one answers UNAVAILABLE soon enough for a client to retry
        assert 0 < store.ack.timeout_ms <= 5000
        redis = redis_of(docs)
        if overlay == "cluster":
            from service.redis_cluster import cluster_nodes, node_options

            assert store.cluster and store.buckets > 1
            # each primary has one replica: a write waits for that one
            assert store.ack.replicas == 1
            # pods of the cluster's StatefulSet by their stable names, on its Redis port
            sts, governing = redis["metadata"]["name"], redis["spec"]["serviceName"]
            assert find(docs, "Service", governing)["spec"]["clusterIP"] == "None"
            for host, node_port in cluster_nodes(store.url):
                node, _, under = host.partition(".")
                assert under == governing and node.startswith(f"{sts}-")
                assert int(node.rsplit("-", 1)[1]) < redis["spec"]["replicas"]
                assert node_port == port_named(container(redis, "redis"), "redis")
            password = node_options(store.url)["password"]
            # the password Redis requires, from the same Secret key, and only from a Secret
            redis_env = env_of(container(redis, "redis"))
            redis_args = container(redis, "redis")["args"]
            assert redis_args[redis_args.index("--requirepass") + 1] == "$(REDIS_PASSWORD)"
            assert password == redis_env["REDIS_PASSWORD"] == redis_env["REDISCLI_AUTH"]
            assert password == secret_sample("croupier-redis", "password")
            # replicas authenticate to their primary with it too
            assert redis_args[redis_args.index("--masterauth") + 1] == "$(REDIS_PASSWORD)"
        else:
            assert store.sentinel
            target = sentinel_target(store.url)
            headless = find(docs, "Service", redis["spec"]["serviceName"])
            sentinel_port = port_named(container(redis, "sentinel"), "sentinel")
            assert any(p["port"] == sentinel_port for p in headless["spec"]["ports"])
            # every sentinel, by the stable name of its pod
            assert list(target.sentinels) == [
                (f"croupier-redis-{i}.{headless['metadata']['name']}", sentinel_port)
                for i in range(redis["spec"]["replicas"])
            ]
            # the service name the sentinels monitor
            lines = redis_config_lines(docs)
            (monitor,) = [line for line in lines if line.startswith("sentinel monitor ")]
            assert monitor.split()[2] == target.service
            # moves acknowledged once a replica holds them, never waiting for more than exist
            assert 1 <= store.ack.replicas <= redis["spec"]["replicas"] - 1
            # the password Redis and the sentinels require, from the same Secret key, and only
            # from a Secret (the init script writes it into the configs from the environment)
            (init,) = redis["spec"]["template"]["spec"]["initContainers"]
            assert env_of(init)["REDIS_PASSWORD"] == secret_sample("croupier-redis", "password")
            assert "requirepass $REDIS_PASSWORD" in lines
            assert "masterauth $REDIS_PASSWORD" in lines
            assert f"sentinel auth-pass {target.service} $REDIS_PASSWORD" in lines
            redis_env = env_of(container(redis, "redis"))
            password = secret_sample("croupier-redis", "password")
            assert target.data["password"] == password == redis_env["REDISCLI_AUTH"]
            assert target.sentinel["password"] == password
            assert env_of(container(redis, "sentinel"))["REDISCLI_AUTH"] == password
    # the API key file the server reads is a file of the Secret croupier-api-keys
    assert args.api_keys, "a server open to anyone who reaches its port"
    assert mounted_secret(pod, c, args.api_keys) == ("croupier-api-keys", "api-keys")
    if args.tls_cert:
        for path, key in ((args.tls_cert, "tls.crt"), (args.tls_key, "tls.key")):
            assert mounted_secret(pod, c, path) == ("croupier-grpc-tls", key)
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
    env = env_of(c)
    args = parsed(bots_parser, c["args"][1:], env, monkeypatch)
    assert "replicas" not in bots["spec"], "one pod by default; the HPA owns the count in prod"
    # the key with the bots role, from the Secret (never in the manifest or on the command line)
    assert env["CROUPIER_API_KEY"] == secret_sample("croupier-api-keys", "bots-key")
    # metrics on the pod's interfaces, as the server's listen host there (the probe and the
    # scraper reach the pod IP)
    server = container(find(docs, "Deployment", "croupier-server"), "server")
    server_listen = env_of(server)["CROUPIER_LISTEN"]
    assert args.metrics_host == server_listen.rsplit(":", 1)[0] == "0.0.0.0"
    if args.tls_ca:
        assert mounted_secret(pod, c, args.tls_ca) == ("croupier-grpc-tls", "ca.crt")
        assert "tls.key" not in str(pod["spec"]["volumes"]), "bots never get the server's key"
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
    if overlay != "dev":
        policy = find(docs, "NetworkPolicy", "servers")
        allowed = {p["port"] for rule in policy["spec"]["ingress"] for p in rule["ports"]}
        assert web_port in allowed
        # browsers arrive over TLS at the Ingress, which sends them to croupier-web
        ingress = find(docs, "Ingress", "croupier-web")
        (tls,) = ingress["spec"]["tls"]
        assert tls["secretName"] == "croupier-web-tls"
        for rule in ingress["spec"]["rules"]:
            assert rule["host"] in tls["hosts"]
            for path in rule["http"]["paths"]:
                backend = path["backend"]["service"]
                assert backend["name"] == "croupier-web"
                assert backend["port"].get("name") == port["name"] or (
                    backend["port"].get("number") == port["port"])


def test_every_environment_variable_is_one_the_code_reads(
    rendered: tuple[str, list[dict[str, Any]]],
) -> None:
    sources = "".join(
        (REPO / f).read_text()
        for f in ("service/config.py", "service/cli.py", "bots/worker.py", "common/channel.py")
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
            # a variable only there to be put into another ($(NAME)) is no setting
            values = " ".join(str(e.get("value", "")) for e in c.get("env", []))
            helpers = set(re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", values))
            unknown = set(env_of(c)) - known - helpers
            assert not unknown, f"{d['metadata']['name']}: no code reads {sorted(unknown)}"


@needs_kubectl
def test_selectors_budgets_and_policies_name_real_pods(
    rendered: tuple[str, list[dict[str, Any]]],
) -> None:
    overlay, docs = rendered
    pods = {
        d["metadata"]["name"]: d["spec"]["template"]["metadata"]["labels"]
        for d in docs
        if d["kind"] in ("Deployment", "StatefulSet", "Job")
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
    redis = redis_of(docs)["metadata"]["name"]
    by_target = {frozenset(selected(p["spec"]["podSelector"]["matchLabels"])): p for p in policies
                 if p["metadata"]["name"] != "redis-cluster-peers"}
    redis_policy = by_target[frozenset({redis})]
    sources = [
        selected(peer["podSelector"]["matchLabels"])
        for rule in redis_policy["spec"]["ingress"]
        for peer in rule["from"]
    ]
    if overlay == "cluster":
        assert sources == [{"croupier-server"}], "only servers reach Redis"
        # besides: the nodes one another (replication, the bus) and the Job that joins them
        peers = find(docs, "NetworkPolicy", "redis-cluster-peers")
        assert selected(peers["spec"]["podSelector"]["matchLabels"]) == {redis}
        (rule,) = peers["spec"]["ingress"]
        assert [selected(p["podSelector"]["matchLabels"]) for p in rule["from"]] == [
            {redis}, {"croupier-redis-cluster-create"}]
        bus = port_named(container(redis_of(docs), "redis"), "bus")
        assert {p["port"] for p in rule["ports"]} == {6379, bus}
    else:
        # servers, and the Redis pods each other (replication, the sentinels' gossip)
        assert set().union(*sources) == {"croupier-server", "croupier-redis"}, (
            "only servers reach Redis")
    bots_policy = by_target[frozenset({"croupier-bots"})]
    assert "Egress" in bots_policy["spec"]["policyTypes"]
    for rule in bots_policy["spec"]["egress"]:
        for peer in rule["to"]:
            reached = selected(peer["podSelector"]["matchLabels"])
            is_dns = peer["podSelector"]["matchLabels"] == {"k8s-app": "kube-dns"}
            assert reached == {"croupier-server"} or is_dns, "bots reach only servers"


# --- what an SRE asks of the rendered overlays ------------------------------------------------


def raw_manifests() -> list[dict[str, Any]]:
    """Manifests applied as files, outside kustomize (tournament Jobs, the Gateway example)."""
    return [d for sub in ("tournament", "gateway") for p in sorted((K8S / sub).glob("*.yaml"))
            for d in load_all(p)]


def test_files_outside_the_overlays_pin_their_images_and_keep_pods_restricted() -> None:
    docs = raw_manifests()
    assert list(pods(docs)), "the tournament Jobs"
    check_pods(docs)


@needs_kubectl
def test_every_image_is_pinned(rendered: tuple[str, list[dict[str, Any]]]) -> None:
    _, docs = rendered
    images = [c["image"] for _, pod in pods(docs) for c in all_containers(pod)]
    assert images and all(pinned(i) for i in images), images


def restricted_problems(name: str, pod: dict[str, Any]) -> list[str]:
    """What would make Pod Security Admission's "restricted" profile refuse this pod (plus this
    project's own rules: a read-only root filesystem and no service account token)."""
    spec = pod["spec"]
    problems = []
    pod_sc = spec.get("securityContext", {})
    if spec.get("automountServiceAccountToken") is not False:
        problems.append("automountServiceAccountToken is not false")
    for host in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(host):
            problems.append(host)
    allowed_volumes = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                       "persistentVolumeClaim", "projected", "secret"}
    for v in spec.get("volumes", []):
        if not set(v) - {"name"} <= allowed_volumes:
            problems.append(f"volume {v['name']}: {sorted(set(v) - {'name'})}")
    for c in all_containers(pod):
        sc = c.get("securityContext", {})
        where = f"{name}/{c['name']}"

        def merged(key: str) -> Any:
            return sc.get(key, pod_sc.get(key))  # noqa: B023 (used at once)

        if merged("runAsNonRoot") is not True:
            problems.append(f"{where}: runAsNonRoot")
        if merged("runAsUser") == 0:
            problems.append(f"{where}: runAsUser 0")
        if (merged("seccompProfile") or {}).get("type") not in ("RuntimeDefault", "Localhost"):
            problems.append(f"{where}: seccompProfile")
        if sc.get("allowPrivilegeEscalation") is not False:
            problems.append(f"{where}: allowPrivilegeEscalation")
        if sc.get("privileged"):
            problems.append(f"{where}: privileged")
        caps = sc.get("capabilities", {})
        if "ALL" not in caps.get("drop", []) or set(caps.get("add", [])) - {"NET_BIND_SERVICE"}:
            problems.append(f"{where}: capabilities")
        if sc.get("readOnlyRootFilesystem") is not True:
            problems.append(f"{where}: writable root filesystem")
        if any(p.get("hostPort") for p in c.get("ports", [])):
            problems.append(f"{where}: hostPort")
    return problems


def check_pods(docs: list[dict[str, Any]]) -> None:
    for name, pod in pods(docs):
        assert not restricted_problems(name, pod), restricted_problems(name, pod)
        for c in all_containers(pod):
            assert pinned(c["image"]), f"{name}: {c['image']}"


def test_the_restricted_check_catches_what_it_must() -> None:
    pod: dict[str, Any] = {"spec": {"containers": [{"name": "c", "image": "x:1.0.0"}]}}
    assert len(restricted_problems("p", pod)) == 6
    pod["spec"]["hostNetwork"] = True
    pod["spec"]["volumes"] = [{"name": "h", "hostPath": {"path": "/"}}]
    assert any("hostPath" in p for p in restricted_problems("p", pod))
    assert "hostNetwork" in restricted_problems("p", pod)


@needs_kubectl
def test_pods_pass_pod_security_restricted_in_a_namespace_that_enforces_it(
    rendered: tuple[str, list[dict[str, Any]]],
) -> None:
    _, docs = rendered
    check_pods(docs)
    (namespace,) = [d for d in docs if d["kind"] == "Namespace"]
    labels = namespace["metadata"]["labels"]
    for mode in ("enforce", "audit", "warn"):
        assert labels[f"pod-security.kubernetes.io/{mode}"] == "restricted", mode
    for d in docs:
        if d["kind"] != "Namespace" and "namespace" in d["metadata"]:
            assert d["metadata"]["namespace"] == namespace["metadata"]["name"]


@needs_kubectl
def test_no_replicas_where_an_autoscaler_owns_them(
    rendered: tuple[str, list[dict[str, Any]]],
) -> None:
    _, docs = rendered
    for hpa in (d for d in docs if d["kind"] == "HorizontalPodAutoscaler"):
        ref = hpa["spec"]["scaleTargetRef"]
        target = find(docs, ref["kind"], ref["name"])
        assert "replicas" not in target["spec"], f"{ref['name']}: every apply resets the HPA"


def redis_bytes(text: str) -> int:
    """Redis's memory units (1k = 1000, 1kb = 1024, ...)."""
    m = re.fullmatch(r"(\d+)(k|kb|m|mb|g|gb)?", text.lower())
    assert m, text
    unit = {None: 1, "k": 10**3, "kb": 2**10, "m": 10**6, "mb": 2**20, "g": 10**9, "gb": 2**30}
    return int(m.group(1)) * unit[m.group(2)]


def quantity_bytes(text: str) -> int:
    """A Kubernetes memory quantity (2Gi, 512Mi, 1G)."""
    m = re.fullmatch(r"(\d+)(Ki|Mi|Gi|Ti|k|M|G|T)?", text)
    assert m, text
    unit = {None: 1, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40,
            "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
    return int(m.group(1)) * unit[m.group(2)]


@needs_kubectl
def test_redis_refuses_writes_before_its_memory_limit_and_never_evicts(
    rendered: tuple[str, list[dict[str, Any]]],
) -> None:
    overlay, docs = rendered
    if overlay == "dev":
        assert not [d for d in docs if d["kind"] == "StatefulSet"]
        return
    redis = container(redis_of(docs), "redis")
    if overlay == "cluster":  # the nodes' settings are their arguments
        args = redis["args"]
        maxmemory = redis_bytes(args[args.index("--maxmemory") + 1])
        policy = args[args.index("--maxmemory-policy") + 1]
    else:  # the settings the init script writes into redis.conf
        maxmemory = redis_bytes(redis_setting(docs, "maxmemory"))
        policy = redis_setting(docs, "maxmemory-policy")
    limit = quantity_bytes(redis["resources"]["limits"]["memory"])
    # room for the AOF rewrite's copy-on-write pages, client buffers and fragmentation
    assert 0 < maxmemory <= 0.75 * limit, (maxmemory, limit)
    assert policy == "noeviction"


@needs_kubectl
def test_statefulsets_are_governed_by_headless_services(
    rendered: tuple[str, list[dict[str, Any]]],
) -> None:
    _, docs = rendered
    for sts in (d for d in docs if d["kind"] == "StatefulSet"):
        svc = find(docs, "Service", sts["spec"]["serviceName"])
        assert svc["spec"].get("clusterIP") == "None", "a StatefulSet's serviceName is headless"
        assert labels_match(svc["spec"]["selector"], sts["spec"]["template"]["metadata"]["labels"])


def secret_references(docs: list[dict[str, Any]]) -> set[tuple[str, str]]:
    """(Secret, key) pairs the pods and Ingresses need ("" for a whole Secret)."""
    refs: set[tuple[str, str]] = set()
    for _, pod in pods(docs):
        for v in pod["spec"].get("volumes", []):
            if "secret" in v:
                keys = [i["key"] for i in v["secret"].get("items", [])] or [""]
                refs |= {(v["secret"]["secretName"], k) for k in keys}
        for c in all_containers(pod):
            for e in c.get("env", []):
                ref = e.get("valueFrom", {}).get("secretKeyRef")
                if ref:
                    refs.add((ref["name"], ref["key"]))
            for source in c.get("envFrom", []):
                if "secretRef" in source:
                    refs.add((source["secretRef"]["name"], ""))
    for ingress in (d for d in docs if d["kind"] == "Ingress"):
        refs |= {(tls["secretName"], "") for tls in ingress["spec"].get("tls", [])}
    return refs


@needs_kubectl
def test_referenced_secrets_exist_in_dev_and_are_never_generated_for_prod(
    rendered: tuple[str, list[dict[str, Any]]], tmp_path: Path,
) -> None:
    from common.channel import load_key
    from service.security import ApiKeys

    overlay, docs = rendered
    secrets = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Secret"}
    refs = secret_references(docs)
    if overlay != "dev":
        assert not secrets, "prod: the operator's Secrets, never ones from the repository"
        expected = {"croupier-api-keys", "croupier-redis", "croupier-web-tls"}
        if overlay.endswith("grpc-tls"):
            expected.add("croupier-grpc-tls")
        assert {name for name, _ in refs} == expected  # the ones docs/operations.md lists
        return
    for name, key in refs:
        assert name in secrets, f"dev: no Secret {name}"
        assert not key or key in secrets[name]["data"], f"dev: Secret {name} has no key {key}"
    # the placeholders work together: the servers' key file gives the bots' key the bots role
    # and the tables key the tables role (read by the server's own loader)
    data = {k: base64.b64decode(v).decode() for k, v in
            secrets[next(n for n in secrets if unhashed(n) == "croupier-api-keys")]["data"].items()}
    (tmp_path / "keys").write_text(data["api-keys"])
    keys = ApiKeys.load(str(tmp_path / "keys"))
    for key, role in (("bots-key", "bots"), ("tables-key", "tables")):
        (tmp_path / key).write_text(data[key])
        assert load_key(key_file=str(tmp_path / key)) == data[key], "one key, no newline"
        assert role in keys.roles(data[key]), key
    assert all("placeholder" in v for v in data.values()), "dev Secrets hold placeholders only"


def test_the_gateway_example_routes_to_the_base_services() -> None:
    services = {d["metadata"]["name"]: d for d in load_all(K8S / "base" / "server-services.yaml")}
    docs = {d["kind"]: d for d in load_all(K8S / "gateway" / "gateway.yaml")}
    gateway = docs["Gateway"]
    listeners = {lst["name"]: lst for lst in gateway["spec"]["listeners"]}
    assert all(lst["tls"]["mode"] == "Terminate" for lst in listeners.values())
    for kind, service in (("HTTPRoute", "croupier-web"), ("GRPCRoute", "croupier")):
        route = docs[kind]
        (parent,) = route["spec"]["parentRefs"]
        assert parent["name"] == gateway["metadata"]["name"]
        assert route["spec"]["hostnames"] == [listeners[parent["sectionName"]]["hostname"]]
        (rule,) = route["spec"]["rules"]
        (backend,) = rule["backendRefs"]
        assert backend["name"] == service
        (port,) = services[service]["spec"]["ports"]
        assert backend["port"] == port["port"]
        assert port["appProtocol"] == ("grpc" if kind == "GRPCRoute" else "http")

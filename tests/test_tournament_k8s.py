"""k8s/tournament/: the sharded tournament Job is valid Kubernetes and agrees with the code:
its command lines parse with the real parsers for every shard index, its shard count is the
Job's completions, it reaches a Service of the base, and it writes where the merge reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from bots.tournament.cli import build_merge_parser, build_parser
from bots.tournament.schedule import parse_shard
from tests.support import REPO

K8S = REPO / "k8s"
DIR = K8S / "tournament"


def _docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def _one(name: str) -> dict[str, Any]:
    (doc,) = _docs(DIR / name)
    return doc


def _expand(arg: str, env: dict[str, str]) -> str:
    for key, value in env.items():
        arg = arg.replace(f"$({key})", value)
    return arg


def test_manifests_validate_against_the_kubernetes_schemas() -> None:
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    for path in sorted(DIR.glob("*.yaml")):
        for doc in _docs(path):
            kubernetes_validate.validate(doc, "1.30", strict=True)


def test_every_shard_parses_and_the_merge_reads_what_they_write() -> None:
    job = _one("tournament-job.yaml")
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed"
    pod = spec["template"]["spec"]
    (c,) = pod["containers"]
    assert c["args"][0] == "tournament"
    env_names = {e["name"] for e in c["env"]}
    shard_env = next(e for e in c["env"] if e["name"] == "SHARD")
    assert "job-completion-index" in shard_env["valueFrom"]["fieldRef"]["fieldPath"]
    outs = set()
    for index in range(spec["completions"]):
        args = build_parser().parse_args(
            [_expand(a, {"SHARD": str(index)}) for a in c["args"][1:]]
        )
        assert parse_shard(args.shard) == (index, spec["completions"])
        outs.add(args.out)
    assert len(outs) == spec["completions"], "each shard its own folder"
    results_mount = next(m["mountPath"] for m in c["volumeMounts"] if m["name"] == "results")
    assert all(Path(o).is_relative_to(results_mount) for o in outs)
    # the server address names a Service of the base on its port
    server = next(e["value"] for e in c["env"] if e["name"] == "CROUPIER_SERVER")
    host, port = server.rsplit(":", 1)
    services = {d["metadata"]["name"]: d for d in _docs(K8S / "base" / "server-services.yaml")}
    assert int(port) in [p["port"] for p in services[host]["spec"]["ports"]]
    assert "CROUPIER_SERVER" in env_names
    # the merge job mounts the same claim and reads the folder the shards write into
    merge = _one("tournament-merge-job.yaml")
    (m,) = merge["spec"]["template"]["spec"]["containers"]
    margs = build_merge_parser().parse_args(m["args"][1:])
    merge_mount = next(v["mountPath"] for v in m["volumeMounts"] if v["name"] == "results")
    assert all(Path(o).is_relative_to(margs.inputs[0]) for o in outs)
    assert str(margs.inputs[0]) == merge_mount == results_mount
    claims = {
        v["persistentVolumeClaim"]["claimName"]
        for d in (job, merge)
        for v in d["spec"]["template"]["spec"]["volumes"]
        if "persistentVolumeClaim" in v
    }
    pvc = _one("results-pvc.yaml")
    assert claims == {pvc["metadata"]["name"]}
    assert "ReadWriteMany" in pvc["spec"]["accessModes"], "shards on several nodes write at once"

"""Builds croupier with its API code generated from protos/ (the `croupier.v1` package).

The protobuf and gRPC modules are generated here, at build time, so that every install has
them: `pip install .`, `pip install -e '.[envs]'` in a bare virtualenv, the Makefile's
locked install and the container image alike. Generated code is never committed or edited
(it goes to gen/, which git ignores); protoc comes from grpcio-tools, a build requirement.
Everything else about the package is declared in pyproject.toml.
"""

from __future__ import annotations

from pathlib import Path

from setuptools import find_packages, setup

ROOT = Path(__file__).resolve().parent
PROTOS = ROOT / "protos"
GEN = ROOT / "gen"


def generate() -> None:
    """protos/**/*.proto -> gen/ (messages, gRPC stubs and type stubs), when out of date."""
    sources = sorted(PROTOS.rglob("*.proto"))
    stamp = GEN / ".generated"
    if stamp.exists() and all(p.stat().st_mtime <= stamp.stat().st_mtime for p in sources):
        return
    import grpc_tools
    from grpc_tools import protoc

    GEN.mkdir(exist_ok=True)
    include = Path(grpc_tools.__file__).parent / "_proto"  # google/protobuf/*.proto
    args = [
        "protoc",
        f"-I{PROTOS}",
        f"-I{include}",
        f"--python_out={GEN}",
        f"--grpc_python_out={GEN}",
        f"--pyi_out={GEN}",
        *(str(p) for p in sources),
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed on protos/ (see its message above)")
    for package in {p.parent.relative_to(PROTOS) for p in sources}:
        for part in (package, *package.parents[:-1]):
            (GEN / part / "__init__.py").touch()
    stamp.touch()


generate()
if __name__ != "generate":  # `make gen` runs this file for the generation alone
    setup(
        packages=[
            *find_packages(include=["engines*", "common*", "service*", "bots*", "clients*"]),
            *find_packages(where="gen", include=["croupier*"]),
        ],
        package_dir={"croupier": "gen/croupier"},
    )

"""The examples in the docstrings of every package of ours run as written."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import bots
import clients
import common
import engines
import service

MODULES = sorted(
    info.name
    for package in (engines, common, service, bots, clients)
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + ".")
)


ENGINE_NAMES = ("dobro", "doppelkopf", "dos", "dou_dizhu", "sobe_e_desce")


def test_every_registered_engine_is_listed() -> None:
    from engines.registry import ENGINES

    assert sorted(ENGINES) == sorted(ENGINE_NAMES)


@pytest.mark.parametrize("name", [f"engines.{g}{part}" for g in ENGINE_NAMES
                                  for part in ("", ".moves")])
def test_each_engine_and_its_notation_have_examples(name: str) -> None:
    # every engine package shows a game being started, every moves module its notation
    failed, tried = doctest.testmod(importlib.import_module(name))
    assert tried >= 1 and not failed, f"{name}: {tried} examples, {failed} failed"


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    failed, _ = doctest.testmod(importlib.import_module(name))
    assert not failed, f"{failed} docstring examples of {name} failed"

"""The examples in the docstrings of engines, bots and service run as written."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import bots
import engines
import service

MODULES = sorted(
    info.name
    for package in (engines, bots, service)
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + ".")
)


def test_the_engines_have_examples() -> None:
    tried = sum(doctest.testmod(importlib.import_module(f"engines.{g}.moves")).attempted
                for g in ("dou_dizhu", "doppelkopf", "dobro", "dos", "sobe_e_desce"))
    assert tried >= 5


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    failed, _ = doctest.testmod(importlib.import_module(name))
    assert not failed, f"{failed} docstring examples of {name} failed"

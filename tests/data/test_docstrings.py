"""The examples in the data and market modules' docstrings run and print what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize("mod", ["tokenomics.catalog", "tokenomics.units", "tokenomics.market",
                                 "tokenomics.errorband", "tokenomics.hf_config"])
def test_docstring_examples_are_true(mod):
    res = doctest.testmod(importlib.import_module(mod))
    assert res.failed == 0

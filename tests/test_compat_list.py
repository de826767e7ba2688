"""docs/compatibility.md's list of Theano 1.0's API is current, and every name it marks supported
imports as Theano programs write it."""
import importlib.util
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("gen_compat_list", ROOT / "tools" / "gen_compat_list.py")
gen_compat_list = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gen_compat_list)


def documented_support() -> dict[str, list[str]]:
    """The names the doc marks supported, by Theano module."""
    text = gen_compat_list.DOC.read_text()
    text = text[text.index(gen_compat_list.BEGIN):text.index(gen_compat_list.END)]
    found: dict[str, list[str]] = {}
    for module, body in re.findall(r"^### `([\w.]+)`[^\n]*\n(.*?)(?=^### |\Z)", text, re.M | re.S):
        line = re.search(r"^Supported: (.*)\.$", body, re.M)
        found[module] = re.findall(r"`(\w+)`", line.group(1)) if line else []
    return found


def test_the_generated_section_is_current():
    text = gen_compat_list.DOC.read_text()
    assert gen_compat_list.replaced(text, gen_compat_list.section()) == text, \
        "docs/compatibility.md is not current: run python tools/gen_compat_list.py"


def test_the_list_covers_every_module_of_the_extracted_names():
    assert set(documented_support()) == set(gen_compat_list.theano_names())


@pytest.mark.parametrize("module", sorted(gen_compat_list.theano_names()))
def test_every_name_marked_supported_imports(module):
    names = documented_support()[module]
    target = gen_compat_list.lowering_module(module)
    for name in names:
        namespace: dict = {}
        exec(f"from {target} import {name}", namespace)
        assert name in namespace


def test_an_unsupported_name_is_marked_so():
    marks = gen_compat_list.support("theano.tensor.nnet", ["softmax", "batch_normalization"])
    assert marks == (True, {"softmax": True, "batch_normalization": False})
    assert gen_compat_list.support("theano.tensor.nnet.bn", ["batch_normalization"]) == \
        (False, {"batch_normalization": False})

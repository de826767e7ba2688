"""Theano's module paths under ``import lowering as theano``: every submodule imports as Theano
programs write it, and a Theano name or module that is missing says so, as an AttributeError or
ImportError (never an import-machinery message)."""
import importlib

import pytest

import lowering as theano
import lowering.tensor as T
from lowering.unsupported import UnsupportedModuleError, UnsupportedNameError

MODULES = [
    "lowering.tensor.nnet", "lowering.tensor.nnet.conv", "lowering.tensor.nnet.nnet",
    "lowering.tensor.nnet.sigm", "lowering.tensor.nnet.abstract_conv", "lowering.tensor.signal",
    "lowering.tensor.signal.pool", "lowering.tensor.extra_ops", "lowering.tensor.basic",
    "lowering.tensor.elemwise", "lowering.tensor.var", "lowering.tensor.type",
    "lowering.tensor.shared_randomstreams", "lowering.tensor.xlogx", "lowering.gradient",
    "lowering.printing", "lowering.compile", "lowering.compile.function_module",
    "lowering.compile.sharedvalue", "lowering.scalar", "lowering.scalar.basic",
    "lowering.ifelse", "lowering.sandbox.rng_mrg", "lowering.scan_module",
    "lowering.scan_module.scan_utils", "lowering.gof", "lowering.gof.graph", "lowering.gpuarray",
    "lowering.gpuarray.dnn", "lowering.sandbox.cuda.dnn", "lowering.sandbox.gpuarray.dnn",
]


@pytest.mark.parametrize("name", MODULES)
def test_each_theano_path_is_a_real_module_reachable_as_an_attribute(name):
    module = importlib.import_module(name)
    assert module.__name__ == name
    parent, _, leaf = name.rpartition(".")
    assert getattr(importlib.import_module(parent), leaf) is module


def test_the_submodules_hold_the_names_of_the_package():
    import lowering.tensor.basic as basic
    import lowering.tensor.nnet.nnet as nnet_nnet
    import lowering.tensor.nnet.sigm as sigm
    from lowering.tensor.extra_ops import squeeze
    assert basic.dmatrix is T.dmatrix and basic.dot is T.dot
    assert nnet_nnet.softmax is T.nnet.softmax and sigm.sigmoid is T.nnet.sigmoid
    assert squeeze is T.squeeze
    assert T.xlogx.xlogy0 is importlib.import_module("lowering.tensor.xlogx").xlogy0
    assert theano.scalar.basic.upcast("int8", "float32") == "float32"


def test_a_missing_name_is_an_attribute_error_naming_the_theano_name():
    with pytest.raises(UnsupportedNameError, match=r"theano\.tensor\.nnet\.bn is not supported "
                       r"by lowering .*docs/compatibility\.md"):
        T.nnet.bn
    assert isinstance(UnsupportedNameError("x"), AttributeError)
    assert not hasattr(T, "no_such_name") and getattr(T.signal.pool, "pool_3d", None) is None
    with pytest.raises(AttributeError, match=r"theano\.gof\.graph\.orphans"):
        theano.gof.graph.orphans


def test_a_missing_module_is_an_import_error_naming_the_theano_module():
    with pytest.raises(UnsupportedModuleError, match=r"theano\.tensor\.nnet\.bn is not "
                       r"supported by lowering"):
        import lowering.tensor.nnet.bn  # noqa: F401
    with pytest.raises(ImportError, match=r"theano\.tensor\.nlinalg is not supported"):
        from lowering.tensor import nlinalg  # noqa: F401
    with pytest.raises(ImportError, match=r"theano\.tensor\.no_such_name is not supported"):
        from lowering.tensor import no_such_name  # noqa: F401


def test_modules_outside_theanos_paths_keep_pythons_own_errors():
    with pytest.raises(ModuleNotFoundError, match="No module named 'lowering.frontend.nothing'"):
        import lowering.frontend.nothing  # noqa: F401


def test_the_backend_probes_answer_as_theano_does_without_cudnn_or_pygpu():
    from lowering.gpuarray import dnn
    from lowering.sandbox.cuda import dnn as cuda_dnn
    assert theano.gpuarray.pygpu_activated is False
    assert theano.sandbox.gpuarray.pygpu_activated is False
    assert dnn.dnn_present() is False and dnn.dnn_available(None) is False
    assert "cuDNN is not used by lowering" in dnn.dnn_available.msg
    assert cuda_dnn.dnn_available() is False and cuda_dnn.dnn_available.msg
    with theano.config.change_flags(device="cpu"):
        assert theano.sandbox.cuda.cuda_enabled is False
    assert isinstance(theano.sandbox.cuda.cuda_available, bool)

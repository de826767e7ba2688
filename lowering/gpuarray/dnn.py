"""``theano.gpuarray.dnn``'s probes: cuDNN is not part of this compiler, so ``dnn_present()`` and
``dnn_available()`` answer False, with the reason in their ``msg`` as Theano's do, and libraries
fall back to their own convolution and pooling (``T.nnet.conv2d``, ``pool_2d``), which compile
to this compiler's kernels on the GPU too.

>>> dnn_available(None), dnn_available.msg == dnn_present.msg == NO_CUDNN
(False, True)
"""
from __future__ import annotations

from lowering.unsupported import mirror_getattr

NO_CUDNN = ("cuDNN is not used by lowering: convolution and pooling compile to lowering's own "
            "CPU code and GPU kernels (T.nnet.conv2d, T.signal.pool.pool_2d)")


def dnn_present() -> bool:
    """Whether cuDNN can be used: never here (see ``dnn_present.msg``)."""
    return False


dnn_present.avail = False
dnn_present.msg = NO_CUDNN


def dnn_available(context_name=None) -> bool:
    """Whether cuDNN can be used on GPU context ``context_name``: never here."""
    return False


dnn_available.msg = NO_CUDNN

__getattr__ = mirror_getattr(__name__)

"""Every timed workload, in report order.

>>> [w.name for w in WORKLOADS][:8]
['tiny-call', 'exp-check', 'expr-1e6', 'expr-1e7', 'logreg', 'sum-axis1', 'mean', 'matmul']
>>> [w.name for w in WORKLOADS][8:]
['scan-rnn', 'scan-rnn-grad', 'lenet-fwd', 'lenet-grad', 'sparse-matmul']
"""
from . import exp_check, expression, logreg, matmul, reductions, tiny_call
from . import lenet_layer, rnn_scan
from . import sparse_matmul
from .base import Workload  # noqa: F401

WORKLOADS = [tiny_call.WORKLOAD, exp_check.WORKLOAD, expression.SMALL, expression.LARGE,
             logreg.WORKLOAD, reductions.SUM_AXIS1, reductions.MEAN, matmul.WORKLOAD]
WORKLOADS += [rnn_scan.FORWARD, rnn_scan.GRADIENT]
WORKLOADS += [lenet_layer.WORKLOAD_FORWARD, lenet_layer.WORKLOAD_GRAD]
WORKLOADS += [sparse_matmul.WORKLOAD]

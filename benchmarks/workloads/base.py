"""What a workload is: parameters, one port per library, how to time it, how to check it.

>>> from benchmarks.harness import Port

from .libs import pytensor_c_port
>>> w = Workload("demo", lambda p: f"{p['n']} items", {"n": 8, "repeats": 3}, {"repeats": 1},
...              {"numpy": lambda p: Port(lambda: p["n"])}, rtol=0, atol=0)
>>> w.parameters(quick=True)
{'n': 8, 'repeats': 1}
>>> w.title(w.parameters(quick=False))
'8 items'

A PyTensor port also makes the port of PyTensor's C backend (the same graph, another mode):

>>> w = Workload("demo", str, {}, {}, {"pytensor": lambda p: Port(lambda: 1)}, rtol=0, atol=0,
...              not_applicable={"jax": "none written"})
>>> sorted(w.ports), w.not_applicable
(['pytensor', 'pytensor_c'], {'jax': 'none written'})
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from benchmarks.harness import Port

from .libs import pytensor_c_port


@dataclass(frozen=True)
class Workload:
    """One benchmark.

    - ``describe(params)``: the table's title for these parameters.
    - ``params``: the full run's parameters (``repeats`` and, for a fixed number of calls per
      repeat, ``calls``; without ``calls`` a repeat lasts at least ``min_seconds``);
      ``quick``: what ``--quick`` changes.
    - ``ports``: for each library, ``build(params) -> Port``.
    - ``rtol``/``atol``: how close each result must be to NumPy's.
    - ``work(params)``: the work of one call as ``(amount, unit)`` where ``unit`` is ``"B"``
      (bytes moved: reported in GB/s) or ``"FLOP"`` (reported in GFLOP/s).
    - ``unit``: what one timed call is (``"call"``, ``"step"``).
    - ``parts``: names of the parts of a result that is a tuple (for the mismatch messages).
    - ``not_applicable``: libraries without a port, and why.

    A ``pytensor`` port gives a ``pytensor_c`` port (``libs.pytensor_c_port``); a workload
    where PyTensor is not applicable says the same of its C backend.
    """

    name: str
    describe: Callable[[dict], str]
    params: dict
    quick: dict
    ports: dict[str, Callable[[dict], Port]]
    rtol: float
    atol: float
    work: Callable[[dict], tuple[float, str]] | None = None
    unit: str = "call"
    parts: tuple[str, ...] = ()
    not_applicable: dict[str, str] = field(default_factory=dict)

    def __post_init__(self):
        # frozen: the derived entries are set once, here
        if "pytensor" in self.ports and "pytensor_c" not in self.ports:
            object.__setattr__(self, "ports", {
                **self.ports, "pytensor_c": pytensor_c_port(self.ports["pytensor"])})
        if "pytensor" in self.not_applicable and "pytensor_c" not in self.not_applicable:
            object.__setattr__(self, "not_applicable", {
                **self.not_applicable, "pytensor_c": self.not_applicable["pytensor"]})

    def parameters(self, quick: bool) -> dict:
        """The parameters of a full run, or of a ``--quick`` one."""
        return {**self.params, **(self.quick if quick else {})}

    def title(self, params: dict) -> str:
        return self.describe(params)

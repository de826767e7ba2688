"""What a workload is: parameters, one port per library, how to time it, how to check it.

>>> from benchmarks.harness import Port
>>> w = Workload("demo", lambda p: f"{p['n']} items", {"n": 8, "repeats": 3}, {"repeats": 1},
...              {"numpy": lambda p: Port(lambda: p["n"])}, rtol=0, atol=0)
>>> w.parameters(quick=True)
{'n': 8, 'repeats': 1}
>>> w.title(w.parameters(quick=False))
'8 items'
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from benchmarks.harness import Port


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

    def parameters(self, quick: bool) -> dict:
        """The parameters of a full run, or of a ``--quick`` one."""
        return {**self.params, **(self.quick if quick else {})}

    def title(self, params: dict) -> str:
        return self.describe(params)

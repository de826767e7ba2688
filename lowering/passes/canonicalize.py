"""``canonicalize``: folding, every op class's canonicalization patterns and dead-op removal,
applied by the greedy driver until nothing changes.

An op class contributes patterns through its classmethod ``canonicalization_patterns()`` and
constants through ``fold()`` and ``materialize_constant`` (see ``lowering.ir.patterns``). The
patterns are those of every op the pass's context knows (``PassManager(context=...)``; default:
the default context) and of every op class in the module.
"""
from __future__ import annotations

from typing import Iterable

from lowering.ir.context import Context, default_context
from lowering.ir.core import Operation, did_you_mean
from lowering.ir.passes import ModulePass, PassFailure, context_field, option, register_pass
from lowering.ir.patterns import RewritePattern, apply_patterns_greedily, rewrite_pattern


@register_pass
class Canonicalize(ModulePass):
    """Fold constants, apply each op's canonicalization patterns, erase dead ops; to a fixpoint."""

    name = "canonicalize"
    max_iterations: int = option(10, "most sweeps over the IR", minimum=1)
    disable_patterns: tuple[str, ...] = option((), "names of patterns not to apply")
    test_convergence: bool = option(False, "fail unless max-iterations sweeps reach a fixpoint")
    context: Context | None = context_field()

    def apply(self, module: Operation) -> None:
        patterns = patterns_of_known_ops(module, self.context)
        known = {p.name for p in patterns}
        for unknown in sorted(set(self.disable_patterns) - known):
            raise PassFailure(f"disable-patterns: no canonicalization pattern is called "
                              f"'{unknown}'{did_you_mean(unknown, known)}")
        patterns = [p for p in patterns if p.name not in self.disable_patterns]
        apply_patterns_greedily(module, patterns, max_iterations=self.max_iterations,
                                raise_on_cap=self.test_convergence)


def patterns_of_known_ops(module: Operation, context: Context | None = None
                          ) -> list[RewritePattern]:
    """The canonicalization patterns of every op ``context`` knows (default: the default
    context; rewrites may create ops the input lacks) and of any other op class in ``module``.

    >>> from lowering.dialects.tensor import ExpOp
    >>> len(patterns_of_known_ops(Operation())) >= len(ExpOp.canonicalization_patterns())
    True
    """
    classes = dict.fromkeys((context or default_context()).ops.values())
    for op in module.walk():
        classes.setdefault(type(op))
    return canonicalization_patterns(classes)


def canonicalization_patterns(op_classes: Iterable[type]) -> list[RewritePattern]:
    """The canonicalization patterns of ``op_classes``: each class asked once, each pattern
    object kept once (a base class may hand the same patterns to all its subclasses), in order.

    >>> class WithOne(Operation):
    ...     name = "doc.with_one"
    ...     @classmethod
    ...     def canonicalization_patterns(cls):
    ...         return [rewrite_pattern(cls)(lambda op, rewriter: False)]
    >>> len(canonicalization_patterns([WithOne, WithOne, Operation]))
    1
    """
    found: dict[int, RewritePattern] = {}
    for cls in dict.fromkeys(op_classes):
        for pattern in cls.canonicalization_patterns():
            pattern = pattern() if isinstance(pattern, type) else pattern
            found.setdefault(id(pattern), pattern)
    return list(found.values())

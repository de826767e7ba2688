"""The dialect-agnostic IR: values with use-lists, operations, blocks and regions, op definitions.

An op is defined as a short class with typed fields, in the style of xDSL's irdl and MLIR's ODS::

    T = ConstraintVar("T", TensorOf(AnyFloat))

    @register_op
    class AddOp(Operation):
        name = "demo.add"
        traits = frozenset({PURE, COMMUTATIVE})
        lhs = operand(T)                 # a float tensor; binds T
        rhs = operand(T)                 # the same type
        result = result(T)
        mode = attr(EnumAttr(("wrap", "saturate")), default="wrap")

        def verify_(self):
            ...                          # only rules no constraint says

The fields become properties (``op.lhs``, ``op.result``). The structural verifier
(``verify_structure``) checks the numbers of operands, results and regions, each field's
constraint (``constraints``) and each trait's rule (``traits``) before the op's own ``verify_``.

``@register_op`` marks the class as an op definition: the ``Dialect`` of its package lists it, and a
``Context`` that loaded that dialect finds it by name (``lowering.ir.context``).

>>> from lowering.ir.types import F32, TensorType
>>> op = Operation(result_types=[TensorType((2,), F32)])
>>> str(op.result.type), op.result.uses
('tensor<2xf32>', [])
"""
from __future__ import annotations

import difflib
import itertools
from typing import Any, ClassVar, Iterable, Iterator

from .assembly_format import AssemblyFormat, compile_format
from .errors import IRError, VerifyError  # noqa: F401  (the errors of IR, raised here)
from .attributes import Attribute, to_attribute
from .constraints import AnyType, attribute_constraint, type_constraint
from .location import UNKNOWN, Location, caller_location
from .traits import (COMMUTATIVE, ELEMENTWISE, ISOLATED, PURE, SYMBOL,  # noqa: F401
                     TERMINATOR, HasCanonicalizationPatterns, Trait, get_trait)
from .types import Type


# ---------------------------------------------------------------------------------------------
# Values


class Use:
    """One use of a value: operand ``index`` of ``op``."""

    __slots__ = ("op", "index")

    def __init__(self, op: "Operation", index: int):
        self.op = op
        self.index = index

    def __repr__(self):
        return f"Use({self.op.name}, {self.index})"


class Value:
    """An SSA value: an op result or a block argument. ``uses`` lists who reads it."""

    __slots__ = ("type", "uses", "name_hint", "__weakref__")

    def __init__(self, type: Type, name_hint: str | None = None):
        self.type = type
        self.uses: list[Use] = []
        self.name_hint = name_hint

    @property
    def owner(self):  # pragma: no cover - overridden
        raise NotImplementedError

    def replace_all_uses_with(self, new: "Value") -> None:
        """Make every user of this value read ``new`` instead."""
        if new is self:
            return
        for use in list(self.uses):
            use.op._set_operand(use.index, new)

    def users(self) -> list["Operation"]:
        seen: dict[int, Operation] = {}
        for use in self.uses:
            seen.setdefault(id(use.op), use.op)
        return list(seen.values())

    def has_uses(self) -> bool:
        return bool(self.uses)


class OpResult(Value):
    __slots__ = ("op", "index")

    def __init__(self, type: Type, op: "Operation", index: int):
        super().__init__(type)
        self.op = op
        self.index = index

    @property
    def owner(self) -> "Operation":
        return self.op

    def __repr__(self):
        return f"<OpResult {self.op.name}#{self.index}: {self.type}>"


class BlockArgument(Value):
    __slots__ = ("block", "index")

    def __init__(self, type: Type, block: "Block", index: int, name_hint: str | None = None):
        super().__init__(type, name_hint)
        self.block = block
        self.index = index

    @property
    def owner(self) -> "Block":
        return self.block

    def __repr__(self):
        return f"<BlockArgument #{self.index}: {self.type}>"


# ---------------------------------------------------------------------------------------------
# Op definitions: typed class fields

_field_counter = itertools.count()


class _Field:
    kind = ""

    def __init__(self):
        self.order = next(_field_counter)
        self.name = ""

    def __set_name__(self, owner, name):
        self.name = name


class operand(_Field):
    """One operand; ``constraint`` says which types it accepts (see ``constraints``)."""
    kind = "operand"
    variadic = False

    def __init__(self, constraint: Any = AnyType):
        super().__init__()
        self.constraint = type_constraint(constraint)

    def __get__(self, op, owner=None):
        if op is None:
            return self
        return op.operands[op._operand_slices[self.name]]


class var_operand(operand):
    """Zero or more operands (at most one variadic operand field per op)."""
    variadic = True


class result(_Field):
    """One result; ``constraint`` says which types it may have."""
    kind = "result"
    variadic = False

    def __init__(self, constraint: Any = AnyType):
        super().__init__()
        self.constraint = type_constraint(constraint)

    def __get__(self, op, owner=None):
        if op is None:
            return self
        return op.results[op._result_slices[self.name]]


class var_result(result):
    """Zero or more results (at most one variadic result field per op)."""
    variadic = True


class region(_Field):
    """One region."""
    kind = "region"

    def __get__(self, op, owner=None):
        if op is None:
            return self
        return op.regions[op._region_index[self.name]]


_MISSING = object()


class attr(_Field):
    """An attribute; reading it gives its plain value (``op.axis`` → ``1``).

    ``constraint`` is an Attribute class (or a tuple of them) it must be an instance of, or any
    attribute constraint (``EnumAttr(("x", "y"))``); ``default`` makes it optional.
    """
    kind = "attr"

    def __init__(self, constraint: Any = Attribute, default: Any = _MISSING):
        super().__init__()
        self.constraint = attribute_constraint(constraint)
        self.default = default

    @property
    def optional(self) -> bool:
        return self.default is not _MISSING

    def __get__(self, op, owner=None):
        if op is None:
            return self
        a = op.attributes.get(self.name)
        if a is None:
            return None if self.default is _MISSING else self.default
        return a.value


# Op definitions in the order they were made; each dialect collects its own
# (``lowering.ir.context.Dialect.of_package``), and a ``Context`` finds ops by name.
_DEFINED_OPS: list[type["Operation"]] = []


def register_op(cls: type["Operation"]) -> type["Operation"]:
    """Class decorator: mark ``cls`` as an op definition (not an abstract base), so the dialect
    of its package lists it (see ``lowering.ir.context``)."""
    if cls not in _DEFINED_OPS:
        _DEFINED_OPS.append(cls)
    return cls


def defined_ops() -> list[type["Operation"]]:
    """Every class ``register_op`` marked, in the order they were defined."""
    return list(_DEFINED_OPS)


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``"; did you mean 'x', 'y'?"`` for the nearest of ``known``, or ``""``."""
    close = difflib.get_close_matches(name, list(known), n=3, cutoff=0.5)
    return "; did you mean " + ", ".join(f"'{c}'" for c in close) + "?" if close else ""


# ---------------------------------------------------------------------------------------------
# Operations


class Operation:
    """An operation: operands, results, attributes, regions, a location, a parent block.

    Use ``Op.create(...)`` (or an op class's own ``build``) to make one. Ops may live detached
    (the front end's expression graphs) or inside a block.
    """

    name: ClassVar[str] = "builtin.unregistered"
    traits: ClassVar[frozenset] = frozenset()
    # The op's pretty form (see lowering.ir.assembly_format), None for the generic form only;
    # compiled into ``compiled_format`` and the printer's and parser's hooks when the class is
    # defined.
    assembly_format: ClassVar[str | None] = None
    compiled_format: ClassVar[AssemblyFormat | None] = None
    # Filled by __init_subclass__ from the typed fields.
    _operand_fields: ClassVar[tuple] = ()
    _result_fields: ClassVar[tuple] = ()
    _region_fields: ClassVar[tuple] = ()
    _attr_fields: ClassVar[tuple] = ()
    _typed_fields: ClassVar[tuple] = ()       # operand and result fields with a constraint
    _verifying_traits: ClassVar[tuple] = ()   # traits with a ``verify`` rule

    __slots__ = ("operands", "results", "attributes", "regions", "location", "parent",
                 "prev_op", "next_op", "_operand_slices", "_result_slices", "_region_index",
                 "__weakref__", "__dict__")

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        fields = []
        for klass in reversed(cls.__mro__):
            for key, value in vars(klass).items():
                if isinstance(value, _Field):
                    fields = [f for f in fields if f.name != key] + [value]
        fields.sort(key=lambda f: f.order)
        cls._operand_fields = tuple(f for f in fields if f.kind == "operand")
        cls._result_fields = tuple(f for f in fields if f.kind == "result")
        cls._region_fields = tuple(f for f in fields if f.kind == "region")
        cls._attr_fields = tuple(f for f in fields if f.kind == "attr")
        for group in (cls._operand_fields, cls._result_fields):
            if sum(f.variadic for f in group) > 1:
                raise TypeError(f"{cls.__name__}: at most one variadic field of each kind")
        cls._typed_fields = tuple(f for f in cls._operand_fields + cls._result_fields
                                  if f.constraint is not AnyType)
        cls._verifying_traits = tuple(t for t in sorted(cls.traits)  # in a fixed order
                                      if type(t).verify is not Trait.verify)
        for trait in cls.traits:
            trait.check_op_class(cls)
        _install_format(cls)

    def __init__(self, operands: Iterable[Value] = (), result_types: Iterable[Type] = (),
                 attributes: dict[str, Any] | None = None, regions: Iterable["Region"] = (),
                 location: Location | None = None):
        self.operands: list[Value] = []
        self.parent: Block | None = None
        self.prev_op: Operation | None = None
        self.next_op: Operation | None = None
        for index, value in enumerate(operands):
            if not isinstance(value, Value):
                raise IRError(f"{self.name}: operand #{index} is {type(value).__name__}, not a Value")
            self.operands.append(value)
            value.uses.append(Use(self, index))
        self.results = [OpResult(t, self, i) for i, t in enumerate(result_types)]
        self.attributes: dict[str, Attribute] = {
            k: to_attribute(v) for k, v in (attributes or {}).items() if v is not None}
        self.regions: list[Region] = []
        for reg in regions:
            self.add_region(reg)
        self.location = location if location is not None else caller_location()
        self._operand_slices = _field_slices(self._operand_fields, len(self.operands))
        self._result_slices = _field_slices(self._result_fields, len(self.results))
        self._region_index = {f.name: i for i, f in enumerate(self._region_fields)}

    @classmethod
    def create(cls, operands=(), result_types=(), attributes=None, regions=(), location=None):
        """Make an op of this class (or, on ``Operation`` itself, of the registered class)."""
        return cls(operands, result_types, attributes, regions, location)

    # -- operands -------------------------------------------------------------------------

    def _set_operand(self, index: int, value: Value) -> None:
        old = self.operands[index]
        for i, use in enumerate(old.uses):
            if use.op is self and use.index == index:
                del old.uses[i]
                break
        self.operands[index] = value
        value.uses.append(Use(self, index))

    def set_operand(self, index: int, value: Value) -> None:
        self._set_operand(index, value)

    def set_operands(self, values: Iterable[Value]) -> None:
        """Replace the whole operand list (field slices are recomputed)."""
        self.drop_operand_uses()
        self.operands = []
        for index, value in enumerate(values):
            self.operands.append(value)
            value.uses.append(Use(self, index))
        self._operand_slices = _field_slices(self._operand_fields, len(self.operands))

    def drop_operand_uses(self) -> None:
        for index, value in enumerate(self.operands):
            for i, use in enumerate(value.uses):
                if use.op is self and use.index == index:
                    del value.uses[i]
                    break

    # -- results, regions -----------------------------------------------------------------

    @property
    def result(self) -> OpResult:
        """The only result (an error for ops with several)."""
        if len(self.results) != 1:
            raise IRError(f"{self.name} has {len(self.results)} results, not one", self)
        return self.results[0]

    def add_region(self, reg: "Region") -> "Region":
        if reg.parent is not None:
            raise IRError("region already belongs to an op", self)
        reg.parent = self
        self.regions.append(reg)
        return reg

    # -- attributes -----------------------------------------------------------------------

    def get_attr(self, name: str, default=None):
        a = self.attributes.get(name)
        return default if a is None else a.value

    # -- placement ------------------------------------------------------------------------

    @property
    def parent_region(self) -> "Region | None":
        return self.parent.parent if self.parent is not None else None

    @property
    def parent_op(self) -> "Operation | None":
        reg = self.parent_region
        return reg.parent if reg is not None else None

    def ancestors(self) -> Iterator["Operation"]:
        op = self.parent_op
        while op is not None:
            yield op
            op = op.parent_op

    def detach(self) -> "Operation":
        """Take the op out of its block (it keeps its operands and uses)."""
        if self.parent is not None:
            self.parent._unlink(self)
        return self

    def erase(self, check_uses: bool = True) -> None:
        """Remove the op for good: drop its operand uses and those of everything nested inside."""
        if check_uses:
            for res in self.results:
                if res.uses:
                    raise IRError(f"cannot erase {self.name}: result #{res.index} still has uses "
                                  f"({', '.join(u.op.name for u in res.uses)})", self)
        self.detach()
        for op in list(self.walk(post_order=True)):
            op.drop_operand_uses()

    def walk(self, post_order: bool = False) -> Iterator["Operation"]:
        """This op and every op nested in its regions, pre-order (or post-order)."""
        if not post_order:
            yield self
        for reg in self.regions:
            for block in reg.blocks:
                for op in list(block.ops):
                    yield from op.walk(post_order)
        if post_order:
            yield self

    def is_before_in_block(self, other: "Operation") -> bool:
        op = self.next_op
        while op is not None:
            if op is other:
                return True
            op = op.next_op
        return False

    # -- copying --------------------------------------------------------------------------

    def clone(self, value_map: dict[Value, Value] | None = None) -> "Operation":
        """A deep copy; operands are looked up in ``value_map`` (which the copy extends)."""
        value_map = {} if value_map is None else value_map
        new = type(self).__new__(type(self))
        Operation.__init__(new, [value_map.get(v, v) for v in self.operands],
                           [r.type for r in self.results], dict(self.attributes), (), self.location)
        for k, v in getattr(self, "__dict__", {}).items():
            new.__dict__.setdefault(k, v)
        for old_res, new_res in zip(self.results, new.results):
            value_map[old_res] = new_res
            new_res.name_hint = old_res.name_hint
        for reg in self.regions:
            new.add_region(reg.clone(value_map))
        return new

    # -- verification hooks ---------------------------------------------------------------

    def verify_structure(self) -> None:
        """What the op class declares: the counts of operands, results and regions, the
        constraints of its fields and the rules of its traits."""
        cls = type(self)
        if cls is Operation:
            return
        _check_count(self, "operand", cls._operand_fields, len(self.operands))
        _check_count(self, "result", cls._result_fields, len(self.results))
        if len(self.regions) != len(cls._region_fields):
            raise VerifyError(f"expected {len(cls._region_fields)} region(s), got {len(self.regions)}",
                              self)
        env: dict = {}
        for f in cls._typed_fields:
            values = (self.operands[self._operand_slices[f.name]] if f.kind == "operand"
                      else self.results[self._result_slices[f.name]])
            if not f.variadic:
                _check_constraint(self, f.constraint, values.type, env, f"the {f.name}")
                continue
            for index, v in enumerate(values):
                _check_constraint(self, f.constraint, v.type, env, f"{f.name} #{index}")
        for f in cls._attr_fields:
            a = self.attributes.get(f.name)
            if a is None:
                if not f.optional:
                    raise VerifyError(f"missing attribute '{f.name}'", self)
            else:
                _check_constraint(self, f.constraint, a, env, f"attribute '{f.name}'")
        for trait in cls._verifying_traits:
            message = trait.verify(self)
            if message is not None:
                raise VerifyError(message, self)

    def verify_(self) -> None:
        """The op's own checks; raise VerifyError. Overridden by op classes."""

    # -- rewriting hooks --------------------------------------------------------------------

    def fold(self) -> list | None:
        """Constant-fold: a list with one Attribute (a constant) or Value per result, or None."""
        return None

    @classmethod
    def canonicalization_patterns(cls) -> list:
        """The patterns the HasCanonicalizationPatterns trait finds for this class (or none)."""
        trait = get_trait(cls, HasCanonicalizationPatterns)
        return [] if trait is None else trait.patterns(cls)

    def __repr__(self):
        return f"<{self.name} at {self.location.short()}>"


def _install_format(cls) -> None:
    """Compile the class's ``assembly_format`` into its pretty-form hooks (``print_pretty``,
    ``parse_pretty``); hooks written by hand in the class itself are kept instead."""
    own = vars(cls)
    hand_written = "print_pretty" in own or "parse_pretty" in own
    if hand_written and own.get("assembly_format") is not None:
        raise TypeError(f"{cls.name} ({cls.__name__}): both an assembly_format and "
                        f"print_pretty/parse_pretty hooks")
    if hand_written or (cls.assembly_format is None and cls.compiled_format is None):
        return
    if cls.assembly_format is None:  # a base class's format, switched off here
        cls.compiled_format = cls.print_pretty = cls.parse_pretty = None
        return
    compiled = cls.compiled_format = compile_format(cls, cls.assembly_format)
    cls.print_pretty = compiled.print
    cls.parse_pretty = compiled.parse


def _field_slices(fields, count: int) -> dict[str, Any]:
    slices: dict[str, Any] = {}
    fixed = sum(1 for f in fields if not f.variadic)
    extra = max(count - fixed, 0)
    pos = 0
    for f in fields:
        if f.variadic:
            slices[f.name] = slice(pos, pos + extra)
            pos += extra
        else:
            slices[f.name] = pos
            pos += 1
    return slices


def _check_constraint(op, constraint, x, env: dict, what: str) -> None:
    if not constraint.check(x, env):
        raise VerifyError(f"{op.name}: {what} must be {constraint.describe(env)}, got "
                          f"{constraint.show(x)}", op)


def _check_count(op, what, fields, count):
    fixed = sum(1 for f in fields if not f.variadic)
    variadic = any(f.variadic for f in fields)
    if count < fixed or (count != fixed and not variadic):
        want = f"at least {fixed}" if variadic else str(fixed)
        raise VerifyError(f"expected {want} {what}(s), got {count}", op)


# ---------------------------------------------------------------------------------------------
# Blocks and regions


class Block:
    """A list of ops (a linked list: insertion and removal are O(1)) with typed arguments."""

    __slots__ = ("args", "parent", "first_op", "last_op", "_len", "__weakref__")

    def __init__(self, arg_types: Iterable[Type] = (), ops: Iterable[Operation] = ()):
        self.args: list[BlockArgument] = [BlockArgument(t, self, i) for i, t in enumerate(arg_types)]
        self.parent: Region | None = None
        self.first_op: Operation | None = None
        self.last_op: Operation | None = None
        self._len = 0
        for op in ops:
            self.append(op)

    @property
    def ops(self) -> Iterator[Operation]:
        op = self.first_op
        while op is not None:
            nxt = op.next_op
            yield op
            op = nxt

    def __len__(self):
        return self._len

    def add_arg(self, type: Type, name_hint: str | None = None) -> BlockArgument:
        arg = BlockArgument(type, self, len(self.args), name_hint)
        self.args.append(arg)
        return arg

    def erase_arg(self, arg: BlockArgument) -> None:
        if arg.uses:
            raise IRError("cannot erase a block argument that is still used")
        self.args.remove(arg)
        for i, a in enumerate(self.args):
            a.index = i

    @property
    def terminator(self) -> Operation | None:
        op = self.last_op
        return op if op is not None and TERMINATOR in op.traits else None

    def _check_free(self, op: Operation) -> None:
        if op.parent is not None:
            raise IRError(f"{op.name} is already in a block; detach it first", op)

    def append(self, op: Operation) -> Operation:
        self._check_free(op)
        op.parent, op.prev_op, op.next_op = self, self.last_op, None
        if self.last_op is None:
            self.first_op = op
        else:
            self.last_op.next_op = op
        self.last_op = op
        self._len += 1
        return op

    def insert_before(self, op: Operation, anchor: Operation) -> Operation:
        self._check_free(op)
        if anchor.parent is not self:
            raise IRError("insertion anchor is not in this block", anchor)
        op.parent, op.prev_op, op.next_op = self, anchor.prev_op, anchor
        if anchor.prev_op is None:
            self.first_op = op
        else:
            anchor.prev_op.next_op = op
        anchor.prev_op = op
        self._len += 1
        return op

    def insert_after(self, op: Operation, anchor: Operation) -> Operation:
        if anchor.next_op is None:
            if anchor.parent is not self:
                raise IRError("insertion anchor is not in this block", anchor)
            return self.append(op)
        return self.insert_before(op, anchor.next_op)

    def _unlink(self, op: Operation) -> None:
        if op.prev_op is None:
            self.first_op = op.next_op
        else:
            op.prev_op.next_op = op.next_op
        if op.next_op is None:
            self.last_op = op.prev_op
        else:
            op.next_op.prev_op = op.prev_op
        op.parent = op.prev_op = op.next_op = None
        self._len -= 1

    @property
    def parent_op(self) -> Operation | None:
        return self.parent.parent if self.parent is not None else None

    def clone(self, value_map: dict[Value, Value]) -> "Block":
        new = Block()
        for arg in self.args:
            value_map[arg] = new.add_arg(arg.type, arg.name_hint)
        for op in self.ops:
            new.append(op.clone(value_map))
        return new


class Region:
    """A list of blocks owned by an op."""

    __slots__ = ("blocks", "parent", "__weakref__")

    def __init__(self, blocks: Iterable[Block] = ()):
        self.blocks: list[Block] = []
        self.parent: Operation | None = None
        for b in blocks:
            self.add_block(b)

    def add_block(self, block: Block) -> Block:
        if block.parent is not None:
            raise IRError("block already belongs to a region")
        block.parent = self
        self.blocks.append(block)
        return block

    @property
    def block(self) -> Block:
        """The entry block (most regions have exactly one)."""
        if not self.blocks:
            raise IRError("region has no block", self.parent)
        return self.blocks[0]

    def clone(self, value_map: dict[Value, Value]) -> "Region":
        return Region([b.clone(value_map) for b in self.blocks])

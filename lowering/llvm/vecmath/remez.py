"""Minimax polynomials in decimal arithmetic: where the vector math coefficients come from.

Each approximation in the vector math library has the form ``target(x) ≈ Σ c_i φ_i(x)`` with
basis functions ``φ_i(x) = scale(x) · var(x)**i`` (e.g. ``exp(r) - 1 - r ≈ r² · Q(r)``), and its
error is measured with a weight (``1/f`` for a relative error).  :func:`minimax` runs the Remez
exchange algorithm on a dense grid with 60-digit :mod:`decimal` arithmetic, so the coefficients are
exact to far below a double's precision; :func:`fit_rounded` then rounds them one at a time to the
target format, refitting the remaining ones after each rounding, so the rounding of the early
(large) coefficients is compensated by the later ones.

Regenerate ``vecmath/coefficients.py`` with ``python -m lowering.llvm.vecmath.remez``.

>>> from decimal import Decimal
>>> spec = FitSpec("square", (Decimal(0), Decimal(1)), target=lambda x: x * x,
...                scale=lambda x: 1, weight=lambda x: 1, degree={"f64": 3})
>>> [float(c) for c in fit_rounded(spec, "f64").coefficients]
[0.0, 0.0, 1.0]
"""
from __future__ import annotations

import dataclasses
import math
import struct
import sys
from decimal import Decimal, localcontext
from typing import Callable

PRECISION = 60
GRID_POINTS = 1200

Fn = Callable[[Decimal], Decimal]


# ---------------------------------------------------------------- decimal reference functions

def pi() -> Decimal:
    """π to the current precision (Machin's formula)."""
    with localcontext() as ctx:
        ctx.prec += 5
        result = 16 * _atan_inverse(5) - 4 * _atan_inverse(239)
    return +result


def _atan_inverse(n: int) -> Decimal:
    """atan(1/n) by its Taylor series."""
    x = Decimal(1) / n
    term, total, k, x2 = x, x, 1, x * x
    while True:
        term *= -x2
        step = term / (2 * k + 1)
        if total + step == total:
            return total
        total += step
        k += 1


def sin(x: Decimal) -> Decimal:
    """sin(x) by its Taylor series (meant for |x| ≤ 2)."""
    return _series(x, -x * x, lambda k: (2 * k) * (2 * k + 1))


def cos(x: Decimal) -> Decimal:
    """cos(x) by its Taylor series (meant for |x| ≤ 2)."""
    return _series(Decimal(1), -x * x, lambda k: (2 * k - 1) * (2 * k))


def _series(first: Decimal, ratio: Decimal, divisor: Callable[[int], int]) -> Decimal:
    with localcontext() as ctx:
        ctx.prec += 10
        term, total, k = first, first, 1
        while True:
            term = term * ratio / divisor(k)
            if total + term == total:
                break
            total += term
            k += 1
    return +total


def atan(x: Decimal) -> Decimal:
    """atan(x) by its Taylor series (meant for |x| ≤ 0.5)."""
    with localcontext() as ctx:
        ctx.prec += 10
        x2, power, total, k = x * x, x, x, 1
        while True:
            power *= -x2
            step = power / (2 * k + 1)
            if total + step == total:
                break
            total += step
            k += 1
    return +total


def asin(x: Decimal) -> Decimal:
    """asin(x) by its Taylor series (meant for |x| ≤ 0.6)."""
    with localcontext() as ctx:
        ctx.prec += 10
        x2, coefficient, power, total, k = x * x, Decimal(1), x, x, 1
        while True:
            coefficient = coefficient * (2 * k - 1) / (2 * k)
            power *= x2
            step = coefficient * power / (2 * k + 1)
            if total + step == total:
                break
            total += step
            k += 1
    return +total


def atanh(x: Decimal) -> Decimal:
    """atanh(x) = log((1+x)/(1-x))/2."""
    with localcontext() as ctx:
        ctx.prec += 10
        result = ((1 + x) / (1 - x)).ln() / 2
    return +result


def erf(x: Decimal) -> Decimal:
    """erf(x) by its Taylor series, with the extra digits its cancellation needs (|x| ≤ 7)."""
    with localcontext() as ctx:
        ctx.prec += 30
        x2, power, total, k = x * x, x, x, 1
        while True:
            power = -power * x2 / k
            step = power / (2 * k + 1)
            if abs(step) < abs(total) * Decimal(10) ** (-ctx.prec) and k > x2:
                break
            total += step
            k += 1
        result = total * 2 / pi().sqrt()
    return +result


def erfc_scaled(x: Decimal) -> Decimal:
    """erfc(x) · exp(x²)."""
    with localcontext() as ctx:
        ctx.prec += 20
        result = (1 - erf(x)) * (x * x).exp()
    return +result


# ---------------------------------------------------------------- rounding to machine formats

def round_to_format(value: Decimal, fmt: str) -> float:
    """The f32 or f64 number nearest to ``value`` (ties to even), as a Python float.

    >>> round_to_format(Decimal("0.1"), "f32")
    0.10000000149011612
    """
    nearest64 = float(value)
    if fmt == "f64":
        return nearest64
    if fmt != "f32":
        raise ValueError(f"unknown float format '{fmt}' (expected 'f32' or 'f64')")
    guess = _f32(nearest64)
    if guess == 0 or math.isinf(guess):
        return guess
    bits = struct.unpack("<i", struct.pack("<f", guess))[0]
    neighbours = [struct.unpack("<f", struct.pack("<i", b))[0] for b in (bits - 1, bits, bits + 1)]
    neighbours = [c for c in neighbours if math.isfinite(c) and (c > 0) == (guess > 0)]
    return min(neighbours, key=lambda c: (abs(Decimal(c) - value), _is_odd_f32(c)))


def _f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _is_odd_f32(x: float) -> int:
    return struct.unpack("<i", struct.pack("<f", x))[0] & 1


# ---------------------------------------------------------------- the Remez exchange

@dataclasses.dataclass(frozen=True)
class FitSpec:
    """One approximation: ``target(x) ≈ scale(x) · Σ c_i var(x)**i`` on ``interval``.

    ``degree`` maps a format (``"f32"``, ``"f64"``) to the number of coefficients; ``weight(x)``
    multiplies the error (``1/f(x)`` makes it relative to the final function ``f``).
    """

    name: str
    interval: tuple[Decimal, Decimal]
    target: Fn
    scale: Fn
    weight: Fn
    degree: dict[str, int]
    var: Fn = lambda x: x  # noqa: E731 (a plain default; instances never bind it)


@dataclasses.dataclass(frozen=True)
class Fit:
    """Rounded coefficients and the weighted error they reach (measured on the grid)."""

    spec_name: str
    fmt: str
    coefficients: tuple[float, ...]
    max_error: float

    @property
    def error_bits(self) -> float:
        """-log2 of the weighted error: how many bits of the result the polynomial gets right."""
        return -math.log2(self.max_error) if self.max_error > 0 else math.inf


def _grid(a: Decimal, b: Decimal, n: int) -> list[Decimal]:
    """Chebyshev-distributed points on [a, b] (dense near the ends, where minimax errors peak)."""
    points = []
    for k in range(n):
        t = (1 - math.cos(math.pi * (k + 0.5) / n)) / 2
        points.append(a + (b - a) * Decimal(t))
    return [a] + points + [b]


def _solve(matrix: list[list[Decimal]], rhs: list[Decimal]) -> list[Decimal]:
    """Gaussian elimination with partial pivoting."""
    n = len(rhs)
    m = [row[:] + [r] for row, r in zip(matrix, rhs)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        if m[pivot][col] == 0:
            raise ArithmeticError("singular Remez system: basis functions are not independent")
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(col + 1, n):
            f = m[r][col] / m[col][col]
            if f:
                for c in range(col, n + 1):
                    m[r][c] -= f * m[col][c]
    x = [Decimal(0)] * n
    for r in reversed(range(n)):
        x[r] = (m[r][n] - sum(m[r][c] * x[c] for c in range(r + 1, n))) / m[r][r]
    return x


def _alternating_extrema(err: list[Decimal], count: int) -> list[int]:
    """Indices of ``count`` extrema of ``err`` with alternating signs, largest kept."""
    extrema: list[int] = []
    for i, e in enumerate(err):
        if extrema and (e >= 0) == (err[extrema[-1]] >= 0):
            if abs(e) > abs(err[extrema[-1]]):
                extrema[-1] = i
        else:
            extrema.append(i)
    while len(extrema) > count:
        if len(extrema) - count == 1:
            drop = 0 if abs(err[extrema[0]]) < abs(err[extrema[-1]]) else len(extrema) - 1
            del extrema[drop]
            continue
        smallest = min(range(len(extrema)), key=lambda k: abs(err[extrema[k]]))
        if smallest in (0, len(extrema) - 1):
            del extrema[smallest]
        else:
            left, right = extrema[smallest - 1], extrema[smallest + 1]
            keep = left if abs(err[left]) >= abs(err[right]) else right
            extrema[smallest - 1:smallest + 2] = [keep]
    return extrema


def _single_exchange(reference: list[int], err: list[Decimal]) -> list[int]:
    """Swap the point of largest error into the reference, keeping the error signs alternating
    (the classic one-point exchange: slower than the multi-point one, but it cannot stall)."""
    worst = max(range(len(err)), key=lambda j: abs(err[j]))
    if worst in reference:
        return reference
    positive = err[worst] >= 0
    same = [(err[j] >= 0) == positive for j in reference]
    ref = reference[:]
    if worst < ref[0]:
        if same[0]:
            ref[0] = worst
        else:
            ref = [worst] + ref[:-1]
    elif worst > ref[-1]:
        if same[-1]:
            ref[-1] = worst
        else:
            ref = ref[1:] + [worst]
    else:
        k = max(i for i, j in enumerate(ref) if j < worst)
        ref[k if same[k] else k + 1] = worst
    return ref


def minimax(points: list[Decimal], targets: list[Decimal], basis: list[list[Decimal]],
            weights: list[Decimal], iterations: int = 60) -> tuple[list[Decimal], Decimal]:
    """Coefficients minimizing ``max_j |targets[j] - Σ c_i basis[i][j]| · weights[j]``.

    With no coefficient to fit, returns ``([], max error)``.
    """
    n = len(basis)
    size = len(points)

    def errors(coeffs):
        return [(targets[j] - sum(c * basis[i][j] for i, c in enumerate(coeffs))) * weights[j]
                for j in range(size)]

    if n == 0:
        return [], max(abs(e) for e in errors([]))
    # Start from points spread over the grid, leaving out those where the weighted error is forced
    # to vanish (e.g. the relative error of x + x³·P(x²) at x = 0): no reference point can go there.
    reach = [max(abs(basis[i][j]) for i in range(n)) * abs(weights[j]) for j in range(size)]
    eligible = [j for j in range(size) if reach[j] >= max(reach) * Decimal("1e-3")]
    reference = [eligible[round(k * (len(eligible) - 1) / n)] for k in range(n + 1)]
    best: tuple[list[Decimal], Decimal] | None = None
    for _ in range(iterations):
        matrix = [[basis[i][j] for i in range(n)] + [Decimal((-1) ** k) / weights[j]]
                  for k, j in enumerate(reference)]
        solution = _solve(matrix, [targets[j] for j in reference])
        coeffs, level = solution[:n], abs(solution[n])
        err = errors(coeffs)
        worst = max(abs(e) for e in err)
        if best is None or worst < best[1]:
            best = (coeffs, worst)
        if worst <= level * Decimal("1.000001"):
            break
        new_reference = _alternating_extrema(err, n + 1)
        if len(new_reference) < n + 1:
            new_reference = _single_exchange(reference, err)
        if new_reference == reference:
            break
        reference = new_reference
    return best


def fit_rounded(spec: FitSpec, fmt: str, grid_points: int = GRID_POINTS) -> Fit:
    """Fit ``spec`` for ``fmt``, rounding the coefficients to ``fmt`` one by one and refitting
    the rest after each."""
    with localcontext() as ctx:
        ctx.prec = PRECISION
        points = _grid(*spec.interval, grid_points)
        targets = [spec.target(x) for x in points]
        weights = [spec.weight(x) for x in points]
        scales = [Decimal(spec.scale(x)) for x in points]
        variables = [spec.var(x) for x in points]
        n = spec.degree[fmt]
        basis = [[s * (v ** i if i else 1) for s, v in zip(scales, variables)] for i in range(n)]
        rounded: list[float] = []
        residual = targets[:]
        for i in range(n):
            coeffs, _ = minimax(points, residual, basis[i:], weights)
            c = round_to_format(coeffs[0], fmt)
            rounded.append(c)
            residual = [r - Decimal(c) * b for r, b in zip(residual, basis[i])]
        worst = max(abs(r * w) for r, w in zip(residual, weights))
    return Fit(spec.name, fmt, tuple(rounded), float(worst))


# ---------------------------------------------------------------- the library's approximations

def _d(text: str) -> Decimal:
    return Decimal(text)


def _log_r(z: Decimal) -> Decimal:
    """R(z) = 2·atanh(s)/s - 2 with z = s²: log(1+f) = 2s + s·R(s²) where s = f/(2+f)."""
    s = z.sqrt()
    return 2 * atanh(s) / s - 2


def _tanh(x: Decimal) -> Decimal:
    e = (2 * x).exp()
    return (e - 1) / (e + 1)


def _half_width(a: Decimal, b: Decimal) -> tuple[Decimal, Decimal]:
    return (a + b) / 2, (b - a) / 2


ERF_SMALL_BOUND = _d("1")
ERF_LARGE = {"f32": (ERF_SMALL_BOUND, _d("4")), "f64": (ERF_SMALL_BOUND, _d("6"))}
ERF_LARGE_DEGREE = {"f32": 10, "f64": 22}


ERF_SMALL_DEGREE = {"f32": 7, "f64": 13}


def two_over_sqrt_pi(fmt: str) -> float:
    """2/√π rounded to ``fmt``: erf(x) = x·(2/√π)_rounded + x·P(x²) keeps erf(tiny) exact."""
    with localcontext() as ctx:
        ctx.prec = PRECISION
        return round_to_format(2 / pi().sqrt(), fmt)


def _erf_small_spec(fmt: str) -> FitSpec:
    """erf on [0, 1] as x·c + x·P(x²), with c = 2/√π rounded and P fitted to what c misses."""
    c = Decimal(two_over_sqrt_pi(fmt))
    return FitSpec(
        "erf_small", (_d("1e-30"), ERF_SMALL_BOUND), target=lambda x: erf(x) - c * x,
        scale=lambda x: x,
        weight=lambda x: 1 / erf(x), degree={fmt: ERF_SMALL_DEGREE[fmt]}, var=lambda x: x * x)


def _erfc_scaled_spec(fmt: str) -> FitSpec:
    """erfc(x)·exp(x²) on [1, b] in t = (x - center)/half; the error is weighted as it shows in
    erf = 1 - exp(-x²)·g(x), so large x, where erfc is tiny next to 1, needs fewer terms."""
    a, b = ERF_LARGE[fmt]
    center, half = _half_width(a, b)
    return FitSpec(
        "erfc_scaled", (a, b), target=erfc_scaled, scale=lambda x: 1,
        weight=lambda x: (-x * x).exp() / erf(x), degree={fmt: ERF_LARGE_DEGREE[fmt]},
        var=lambda x: (x - center) / half)


def library_specs() -> list[FitSpec]:
    """Every approximation the vector math library evaluates, with its degree per format."""
    quarter_pi = pi() / 4 + _d("0.001")
    specs = [
        FitSpec("exp", (_d("-0.3466"), _d("0.3466")), target=lambda x: x.exp() - 1 - x,
                scale=lambda x: x * x, weight=lambda x: 1 / x.exp(), degree={"f32": 5, "f64": 10}),
        FitSpec("exp2", (_d("-0.5"), _d("0.5")), target=lambda x: (x * Decimal(2).ln()).exp() - 1,
                scale=lambda x: x, weight=lambda x: 1 / (x * Decimal(2).ln()).exp(),
                degree={"f32": 6, "f64": 12}),
        FitSpec("expm1", (_d("-0.3466"), _d("0.3466")), target=lambda x: x.exp() - 1 - x,
                scale=lambda x: x * x, weight=lambda x: 1 / abs(x.exp() - 1),
                degree={"f32": 6, "f64": 11}),
        FitSpec("log", (_d("1e-30"), _d("0.02944")), target=_log_r, scale=lambda z: z,
                weight=lambda z: z.sqrt() / (2 * atanh(z.sqrt())), degree={"f32": 3, "f64": 7}),
        FitSpec("log_tail", (_d("1e-30"), _d("0.02944")),
                target=lambda z: (_log_r(z) - 2 * z / 3) / (z * z), scale=lambda z: 1,
                weight=lambda z: z * z * z.sqrt() / (2 * atanh(z.sqrt())), degree={"f64": 7}),
        FitSpec("sin", (_d("1e-30"), quarter_pi), target=lambda x: sin(x) - x,
                scale=lambda x: x * x * x, weight=lambda x: 1 / sin(x), degree={"f32": 3, "f64": 6},
                var=lambda x: x * x),
        FitSpec("cos", (_d("1e-30"), quarter_pi), target=lambda x: cos(x) - 1 + x * x / 2,
                scale=lambda x: x ** 4, weight=lambda x: 1 / cos(x), degree={"f32": 3, "f64": 6},
                var=lambda x: x * x),
        FitSpec("sin_pi", (_d("1e-30"), _d("0.501")), target=lambda f: sin(pi() * f),
                scale=lambda f: f, weight=lambda f: 1 / sin(pi() * f), degree={"f64": 6},
                var=lambda f: f * f),
        FitSpec("atan", (_d("1e-30"), _d("0.4376")), target=lambda x: atan(x) - x,
                scale=lambda x: x * x * x, weight=lambda x: 1 / atan(x),
                degree={"f32": 5, "f64": 11}, var=lambda x: x * x),
        FitSpec("asin", (_d("1e-30"), _d("0.5")), target=lambda x: asin(x) - x,
                scale=lambda x: x * x * x, weight=lambda x: 1 / asin(x),
                degree={"f32": 6, "f64": 13}, var=lambda x: x * x),
        FitSpec("sinh", (_d("1e-30"), _d("1")),
                target=lambda x: ((x.exp() - (-x).exp()) / 2) - x, scale=lambda x: x * x * x,
                weight=lambda x: 2 / (x.exp() - (-x).exp()), degree={"f32": 4, "f64": 8},
                var=lambda x: x * x),
        FitSpec("tanh", (_d("1e-30"), _d("0.625")), target=lambda x: _tanh(x) - x,
                scale=lambda x: x * x * x, weight=lambda x: 1 / _tanh(x),
                degree={"f32": 5, "f64": 11}, var=lambda x: x * x),
        FitSpec("cbrt_seed", (_d("1"), _d("8")), target=lambda x: x ** (Decimal(1) / 3),
                scale=lambda x: 1, weight=lambda x: x ** (-Decimal(1) / 3),
                degree={"f32": 4, "f64": 4}),
    ]
    specs += [_erf_small_spec(fmt) for fmt in ("f32", "f64")]
    specs += [_erfc_scaled_spec(fmt) for fmt in ("f32", "f64")]
    return specs


def render_table(fits: list[Fit]) -> str:
    """Python source of the coefficient table."""
    lines = [
        '"""Polynomial coefficients of the vector math library (generated; do not edit).',
        "",
        "Regenerate with ``python -m lowering.llvm.vecmath.remez``: minimax fits in 60-digit",
        "decimal arithmetic, each coefficient rounded to its format with the remaining ones",
        "refitted.",
        "Keys are ``(approximation, format)``; values are coefficients of increasing power.",
        '"""',
        "",
        "COEFFICIENTS: dict[tuple[str, str], tuple[float, ...]] = {",
    ]
    for fit in fits:
        lines.append(f"    # weighted error 2^-{fit.error_bits:.1f}")
        lines.append(f"    ({fit.spec_name!r}, {fit.fmt!r}): (")
        lines.extend(f"        {c!r}," for c in fit.coefficients)
        lines.append("    ),")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Fit every approximation and write the coefficient table (or print one fit's report)."""
    import argparse
    import pathlib

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="fit only this approximation and print it")
    parser.add_argument("--output", default=str(pathlib.Path(__file__).with_name(
        "vecmath/coefficients.py")))
    args = parser.parse_args(argv)
    fits = []
    for spec in library_specs():
        if args.only and spec.name != args.only:
            continue
        for fmt in spec.degree:
            fit = fit_rounded(spec, fmt)
            print(f"{spec.name:24s} {fmt} {len(fit.coefficients):2d} coefficients: "
                  f"2^-{fit.error_bits:.1f}", file=sys.stderr)
            fits.append(fit)
    if args.only:
        print(render_table(fits))
    else:
        pathlib.Path(args.output).write_text(render_table(fits))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

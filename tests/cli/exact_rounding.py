# Rounding of exact values (Python's fractions) for the CLI tests' expected results, independent of wavg and numpy.
from fractions import Fraction


def rounded(q, bits):
    """q rounded to `bits` significant bits, ties to even (normal numbers): bfloat16 has 8, float16 11, float32 24."""
    if q == 0:
        return q
    a, e = abs(q), 0
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    ulp = Fraction(2) ** (e + 1 - bits)
    return (1 if q > 0 else -1) * round(a / ulp) * ulp

"""The science: pure functions and small dataclasses, each formula with its citation.

Nothing here declares an input or an output (no ``Param``, ``Output`` or
``Calculator``) and nothing here imports a calculator module: calculators compose
these formulas, never each other.
"""

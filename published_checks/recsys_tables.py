"""Recommendation models of 2026 (docs/sparse.md): the popularity model under the tier
calculator (harmonic numbers, the LFU hit ratio of a Zipf(1) stream, Che's LRU on a
uniform table) and HierarchicalKV's bytes per slot under dynamic_tables."""

from __future__ import annotations

import math

from calculators.formulas.sparse.hash_tables import collisionless_table
from calculators.formulas.sparse.zipf import Zipf
from calculators.inputs.hash_tables import KEY_BYTES, METADATA_BYTES
from published_checks import Check

_EULER_GAMMA = 0.5772156649015329
_HKV = "https://github.com/NVIDIA-Merlin/HierarchicalKV"


def _harmonic_trillion() -> float:
    return Zipf(1e12, 1.0).norm


def _lfu_zipf1() -> float:
    return Zipf(1e9, 1.0).top_share(1e7)


def _lru_uniform() -> float:
    return Zipf(1e9, 0.0).lru_hit_ratio(1e8)


def _hkv_slot_overhead() -> float:
    """A slot's bytes beyond its value: key, score and digest."""
    return collisionless_table(1.0, 1.0, KEY_BYTES, METADATA_BYTES, 0.0).slot_bytes


CHECKS: tuple[Check, ...] = (
    Check(
        id="zipf-harmonic-number-1e12", chapter="sparse.md",
        claim="H(10^12), the normaliser of a Zipf(1) table of a trillion rows, from the "
              "sum the tier model integrates",
        source="Derivation: Euler-Maclaurin, H(n) = ln n + gamma + 1/(2n) - ..., so "
               "H(1e12) = 27.631021 + 0.577216 = 28.208237",
        derived=True, formula=_harmonic_trillion, formula_name="zipf.Zipf(1e12, 1).norm",
        published=math.log(1e12) + _EULER_GAMMA, unit="count", rel_tol=1e-7,
        why_tolerance="the next term, 1/(2n) = 5e-13, is negligible; 1e-7 bounds the "
                      "Simpson integration of the tail beyond rank 512",
    ),
    Check(
        id="zipf-lfu-log-ratio", chapter="sparse.md",
        claim="An LFU cache of 10^7 of 10^9 rows under Zipf(1) serves about "
              "ln C / ln N of the lookups",
        source="Derivation: the LFU hit ratio H(C)/H(N) of a Zipf stream (the model of "
               "Breslau et al. 1999, INFOCOM) with H(n) ~ ln n: ln 1e7 / ln 1e9 = 7/9 = 0.7778",
        derived=True, formula=_lfu_zipf1, formula_name="zipf.Zipf(1e9, 1).top_share(1e7)",
        published=7 / 9, unit="%", rel_tol=0.01,
        why_tolerance="ln C / ln N drops Euler's gamma from both harmonic numbers: "
                      "(16.118 + 0.577) / (20.723 + 0.577) = 0.7838, 0.77% above 7/9",
    ),
    Check(
        id="che-lru-uniform", chapter="sparse.md",
        claim="Che's LRU approximation on a uniform table: a cache of C rows of N hits "
              "C / N of the lookups",
        source="Derivation: with p_i = 1/N, N (1 - e^(-T/N)) = C gives a hit ratio "
               "1 - e^(-T/N) = C / N = 1e8 / 1e9 = 0.1 (Che, Tung and Wang 2002, IEEE "
               "JSAC 20(7))",
        derived=True, formula=_lru_uniform, formula_name="zipf.Zipf(1e9, 0).lru_hit_ratio(1e8)",
        published=0.1, unit="%", rel_tol=1e-6,
        why_tolerance="an identity: only the bisection for T and the tail integral "
                      "leave an error, below 1e-6",
    ),
    Check(
        id="hierarchicalkv-slot-bytes", chapter="sparse.md",
        claim="HierarchicalKV stores 17 bytes per slot besides the embedding: a uint64 "
              "key, a uint64 score and a one-byte digest",
        source="Derivation: NVIDIA-Merlin/HierarchicalKV README (uint64_t keys; \"The "
               "score_type must be uint64_t\") and include/merlin/types.cuh (using D = "
               "byte): 8 + 8 + 1 = 17 B",
        url=_HKV, derived=True, formula=_hkv_slot_overhead,
        formula_name="dynamic_tables.collisionless_table(1 ID, load 1, default key and "
                     "metadata bytes, empty row).slot_bytes",
        published=17, unit="B", rel_tol=0.0, why_tolerance="a count of bytes: exact",
    ),
)

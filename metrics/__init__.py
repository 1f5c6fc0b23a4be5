"""kpass metric core: exact, vectorized estimators and intervals on arrays of counts.

Every estimator here is higher-is-better. Nothing in this package does I/O or imports an
evaluation framework; the public surface is ``__all__`` (re-exported from :mod:`kpass`).
"""

# --- core estimators (pass@k family, cons@k, CoT-Pass@k, fin@k) ---
# --- end core estimators ---

# --- consensus ---
# --- end consensus ---

# --- intervals and power ---
# --- end intervals and power ---

__all__: list[str] = sorted(
    name for name in dir() if not name.startswith("_")
)

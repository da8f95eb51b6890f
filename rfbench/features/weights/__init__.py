"""Couplings of the projection vectors ω (DESIGN §2; spec/spectraformer.md §3, spec/simrf.md §1.2).

Importing this package registers every sampler with the registry.
"""

from rfbench.features.weights import mc, qmc, quadrature, structured  # noqa: F401

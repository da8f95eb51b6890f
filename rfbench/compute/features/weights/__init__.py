"""Couplings of the projection vectors ω (Spectraformer's weight components; SimRF's couplings).

Every module of this package is imported by the registry on first use, which registers its
samplers (``@register_weights``).
"""

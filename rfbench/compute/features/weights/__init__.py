"""Couplings of the projection vectors ω; each module registers its samplers on import."""

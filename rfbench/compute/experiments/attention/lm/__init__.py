"""The ``lm`` experiment (a causal language model after the attention swap), inside the attention
package: it measures the attention study's methods and shares its code (one experiment package may
not import another)."""

"""``rfbench compare``: two result folders row by row (``compare``), their inputs checked first
(``inputs``), the outcome as a table or markdown (``output``)."""

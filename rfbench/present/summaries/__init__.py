"""Terminal summaries: ``<experiment>.py`` holds ``summary(results)`` for ``rfbench <experiment>``
(found by name, rfbench.present.summary)."""

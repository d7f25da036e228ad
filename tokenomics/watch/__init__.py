"""The three metrics the article says to watch: price cuts, megakernel adoption, supernode deliveries.

>>> from tokenomics.watch import watch          # doctest: +SKIP
>>> d = watch(); d.to_frame()[["metric", "status"]]   # doctest: +SKIP

Submodules: :mod:`.prices`, :mod:`.megakernels`, :mod:`.supernodes`, :mod:`.dashboard`. Heavy
libraries (statsmodels, scipy, matplotlib) are imported inside the functions that use them.
"""

from __future__ import annotations

from .dashboard import Dashboard, watch, write_report

__all__ = ["Dashboard", "watch", "write_report"]

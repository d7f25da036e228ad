"""Run sweep chunks on a dask.distributed cluster (optional: ``pip install -e '.[dask]'``).

Dask is imported lazily, inside the functions. :func:`map_ordered` submits chunks to a cluster
(an existing scheduler at ``scheduler``, or a fresh ``LocalCluster``), keeps a bounded window of
chunks in flight, and yields results **in submission order**, so the caller writes rows in the
same order as a single-process run and memory stays bounded by the window.
"""

from __future__ import annotations

import contextlib
import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .errors import TokenomicsError, ValidationError

_DONE = object()
#: Most LocalCluster workers (processes) one run starts.
MAX_WORKERS = 256


def _import_distributed():
    try:
        import distributed  # noqa: F401
    except ModuleNotFoundError:
        raise TokenomicsError("the dask engine needs dask.distributed. Hint: pip install -e '.[dask]' "
                              "or use --engine local") from None
    return distributed


_ADDRESS = re.compile(r"^(?:(?:tcp|tls|ucx|ws|wss)://)?(?:\[[0-9a-fA-F:]+\]|[A-Za-z0-9_.-]+):(\d{1,5})/?$")


def check_cluster_args(scheduler: str | None, n_workers: Any) -> None:
    """Check a scheduler address (``tcp://host:port`` or ``host:port``) and a worker count
    before any cluster starts; raises a one-line :class:`TokenomicsError`.

    A LocalCluster with zero workers would wait for one forever, so ``n_workers`` must be an
    integer from 1 to :data:`MAX_WORKERS`.
    """
    from . import _validate as v

    if scheduler is not None:
        if not isinstance(scheduler, str):
            raise ValidationError(f"scheduler must be an address string, got {type(scheduler).__name__}")
        m = _ADDRESS.match(scheduler.strip())
        if not m or not 0 < int(m.group(1)) < 65536:
            raise ValidationError(f"scheduler address {scheduler!r} must look like tcp://host:8786 "
                                  "(scheme optional, port required)")
    if isinstance(n_workers, bool):
        raise ValidationError(f"workers must be an integer >= 1, got {n_workers!r}")
    v.count(n_workers, "workers", minimum=1)
    if n_workers > MAX_WORKERS:
        raise ValidationError(f"workers must be at most {MAX_WORKERS}, got {n_workers}")


@contextlib.contextmanager
def client(scheduler: str | None = None, *, n_workers: int = 2, threads_per_worker: int = 1,
           processes: bool = True) -> Iterator[Any]:
    """A ``distributed.Client``: connected to ``scheduler`` (e.g. ``tcp://10.0.0.5:8786``), or
    to a LocalCluster of ``n_workers`` workers started here and closed on exit."""
    check_cluster_args(scheduler, n_workers)
    distributed = _import_distributed()
    if scheduler:
        try:
            c = distributed.Client(scheduler, timeout="10s")
        except (OSError, TimeoutError, ValueError) as exc:
            raise TokenomicsError(f"cannot reach dask scheduler {scheduler!r}: {exc}. "
                                  "Hint: start one with 'dask scheduler', or omit --scheduler") from None
        try:
            yield c
        finally:
            c.close()
        return
    import logging

    logging.getLogger("distributed").setLevel(logging.ERROR)
    with distributed.LocalCluster(n_workers=n_workers, threads_per_worker=threads_per_worker,
                                  processes=processes, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as c:
            yield c


def map_ordered(fn: Callable[[Any], Any], items: Iterable[Any], *, scheduler: str | None = None,
                n_workers: int = 2, processes: bool = True, window: int | None = None,
                dask_client: Any = None) -> Iterator[Any]:
    """Apply ``fn`` to each item on a cluster; yield the results in item order.

    Parameters
    ----------
    fn : callable
        Picklable function of one item.
    items : iterable
        Work items (small, picklable).
    scheduler : str, optional
        Address of a running scheduler; default: a LocalCluster of ``n_workers`` workers.
    window : int, optional
        Items in flight at once (default ``4 x workers``): bounds memory on the caller.
    dask_client : distributed.Client, optional
        Reuse an existing client instead of making one.
    """
    check_cluster_args(scheduler, n_workers)

    def run(c) -> Iterator[Any]:
        nw = max(1, len(c.scheduler_info().get("workers", {})) or n_workers)
        w = window or 4 * nw
        pending: deque = deque()
        it = iter(items)
        for item in it:
            pending.append(c.submit(fn, item, pure=False))
            if len(pending) >= w:
                break
        while pending:
            fut = pending.popleft()
            res = fut.result()
            fut.release()
            nxt = next(it, _DONE)
            if nxt is not _DONE:
                pending.append(c.submit(fn, nxt, pure=False))
            yield res

    if dask_client is not None:
        yield from run(dask_client)
        return
    with client(scheduler, n_workers=n_workers, processes=processes) as c:
        yield from run(c)

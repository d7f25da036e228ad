"""Serving-engine releases by date: which release a version string or a date stands for.

``datasets/engine_releases.csv`` lists every published release of vLLM, SGLang and
TensorRT-LLM with the day its first file reached PyPI. A user names a release with
``--engine sglang@0.4.3`` (:func:`split_engine`; a release the table does not list is an error
that lists the known ones) or a date, ``--engine sglang@2025-02``: the newest release published
by then (:func:`release_in_force`). A published serving row names its release in
``engine_version``; a blank one is timed with the newest kernels (a result's publication date
does not say which release ran: vendors' own submissions run builds ahead of the public ones).
How much slower an older release runs comes from measurements only
(:mod:`tokenomics.perf.kernel_versions`); the date places a release between the measured ones.
"""

from __future__ import annotations

import datetime as _dt
import functools
import re

from ..errors import ValidationError


@functools.lru_cache(maxsize=1)
def _table() -> dict[str, list[tuple[tuple, str, _dt.date]]]:
    """Releases per engine as (version key, version, date), oldest version first."""
    from ..catalog import load
    from .kernel_versions import version_key

    out: dict[str, list] = {}
    for r in load("engine_releases").itertuples():
        out.setdefault(str(r.engine), []).append(
            (version_key(str(r.version)), str(r.version), _dt.date.fromisoformat(str(r.release_date))))
    return {e: sorted(v) for e, v in out.items()}


def engines_with_releases() -> tuple[str, ...]:
    """Engines (``datasets/engines.csv`` names) whose releases are tabulated."""
    return tuple(sorted(_table()))


def known_releases(engine: str) -> list[str]:
    """The releases of ``engine`` a user may name, oldest first: the published ones and those
    whose kernels were measured (``datasets/engine_kernel_versions.csv``: release candidates
    timed by NVIDIA's aiconfigurator that never reached PyPI); empty if none are tabulated."""
    from ..catalog import load
    from .kernel_versions import version_key

    if engine not in _table():
        return []
    k = load("engine_kernel_versions")
    k = k[k["engine"] == engine]
    names = {v for _, v, _ in _table()[engine]} | set(k["engine_version"].astype(str)) | set(k["reference_version"].astype(str))
    return sorted(names, key=version_key)


def split_engine(engine: str | None, engine_version: str | None = None) -> tuple[str | None, str | None]:
    """``"sglang@0.4.3"`` -> ``("sglang", "0.4.3")``; a name without ``@`` passes through.

    A release given with ``@`` must be one the table lists (else a one-line error listing the
    known releases), and must not conflict with a separately given ``engine_version``.

    >>> split_engine("sglang@0.4.3")
    ('sglang', '0.4.3')
    >>> split_engine("sglang@2025-02")  # a date: the newest release published by its end
    ('sglang', '0.4.3.post2')
    >>> split_engine("trt", "1.1.0rc2")
    ('trt', '1.1.0rc2')
    """
    if engine is None or "@" not in str(engine):
        return engine, engine_version
    name, _, ver = str(engine).strip().partition("@")
    name, ver = name.strip().lower(), ver.strip().lstrip("v")
    from ..deployment import ENGINE_ALIASES

    name = ENGINE_ALIASES.get(name, name)
    if engine_version and str(engine_version).strip() != ver:
        raise ValidationError(f"--engine {engine} conflicts with --engine-version {engine_version}; give the release once")
    known = known_releases(name)
    if not known:
        raise ValidationError(f"engine {name!r} has no tabulated releases (engines with releases: "
                              f"{', '.join(engines_with_releases())}); give the engine without @VERSION")
    if re.match(r"^\d{4}(-\d{1,2}(-\d{1,2})?)?$", ver):  # sglang@2025-02: the release in force then
        at = release_in_force(name, ver)
        if at is None:
            raise ValidationError(f"no {name} release was published by {ver} (the first: {known[0]})")
        return name, at
    if ver not in known:
        raise ValidationError(f"{name} release {ver!r} is not known; known {name} releases: {', '.join(known)}")
    return name, ver


def release_date(engine: str, version: str) -> _dt.date | None:
    """The day ``engine`` ``version`` was published; a release the table does not list (a
    container build such as ``1.1.0rc2.post2``) takes the date of the latest listed release at or
    below it. None when nothing of ``engine`` at or below it is tabulated."""
    from .kernel_versions import version_key

    key = version_key(version)
    rows = [d for k, _, d in _table().get(engine, []) if k <= key]
    exact = [d for k, v, d in _table().get(engine, []) if v == version]
    return exact[0] if exact else (rows[-1] if rows else None)


def period_end(as_of: str) -> _dt.date | None:
    """The last day of an ``as_of`` period: ``2025`` -> 2025-12-31, ``2025-02`` -> 2025-02-28,
    ``2025-02-14`` -> itself; None when it is not a date."""
    m = re.match(r"^\s*(\d{4})(?:-(\d{1,2}))?(?:-(\d{1,2}))?", str(as_of or ""))
    if not m:
        return None
    y, mo, d = int(m.group(1)), m.group(2), m.group(3)
    if d:
        return _dt.date(y, int(mo), int(d))
    if mo:
        nxt = _dt.date(y + int(mo) // 12, int(mo) % 12 + 1, 1)
        return nxt - _dt.timedelta(days=1)
    return _dt.date(y, 12, 31)


def release_in_force(engine: str, as_of: str) -> str | None:
    """The newest release of ``engine`` published by the end of the ``as_of`` period (a
    result published then ran that release or an older one); None when the engine has no
    tabulated releases or ``as_of`` is not a date.

    >>> release_in_force("sglang", "2025-02")
    '0.4.3.post2'
    """
    end = period_end(as_of)
    rows = _table().get(engine, [])
    if end is None or not rows:
        return None
    hits = [(k, v) for k, v, d in rows if d <= end]
    return max(hits)[1] if hits else None


"""Atomic file output: nothing is ever half-written.

Every file the package writes goes to a temporary file in the target directory first and is
renamed into place (``os.replace`` is atomic on POSIX), so an interrupted run leaves either the
old file or the new one, never a fragment.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING

from .errors import ValidationError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it to ``path`` if the block succeeds.

    Examples
    --------
    >>> with atomic_path("out.png") as tmp:          # doctest: +SKIP
    ...     fig.savefig(tmp, format="png")
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    os.chmod(tmp_path, 0o666 & ~_umask())  # mkstemp makes 0600; give what open() would
    try:
        yield tmp_path
        os.replace(tmp_path, path)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w") -> Iterator[IO]:
    """Open a temporary file for writing; it replaces ``path`` only when the block succeeds."""
    with atomic_path(path) as tmp:
        with open(tmp, mode) as fh:
            yield fh


def write_text(path: str | os.PathLike, text: str) -> Path:
    """Write text atomically; return the path."""
    with atomic_open(path, "w") as fh:
        fh.write(text)
    return Path(path)


def iso_dates(df: "pd.DataFrame") -> "pd.DataFrame":
    """``df`` with each datetime64 column as ISO text: ``YYYY-MM-DD`` when every value is a
    whole day, full ISO 8601 otherwise; NaT becomes empty (missing). Other columns unchanged.

    CSV and JSON output go through this, so files keep ISO dates while the DataFrames the
    library returns carry datetime64.
    """
    import pandas as pd

    cols = [c for c in df.columns if pd.api.types.is_datetime64_any_dtype(df[c])]
    if not cols:
        return df
    df = df.copy()
    for c in cols:
        s = df[c]
        whole = bool((s.dropna() == s.dropna().dt.normalize()).all())
        text = s.dt.strftime("%Y-%m-%d") if whole else s.map(lambda t: t.isoformat() if pd.notna(t) else None)
        df[c] = text.astype(object).where(s.notna(), None)
    return df


def write_frame(df: "pd.DataFrame", path: str | os.PathLike) -> Path:
    """Write a DataFrame atomically as CSV, JSON or Parquet, chosen by the file suffix
    (datetime64 columns as ISO dates in CSV and JSON, :func:`iso_dates`)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".json", ".parquet"):
        raise ValidationError(f"output file must end in .csv, .json or .parquet, got {path.name!r}")
    if suffix in (".csv", ".json"):
        df = iso_dates(df)
    with atomic_path(path) as tmp:
        if suffix == ".csv":
            df.to_csv(tmp, index=False)
        elif suffix == ".json":
            df.to_json(tmp, orient="records", indent=1, date_format="iso")
        else:
            df.to_parquet(tmp, index=False)
    return path


def save_png(fig, path: str | os.PathLike, dpi: int = 110, **savefig_kw) -> Path:
    """Save a matplotlib figure as PNG atomically, then close it; return the path."""
    import matplotlib.pyplot as plt

    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=dpi, **savefig_kw)
    plt.close(fig)
    return Path(path)

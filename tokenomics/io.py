"""File input and output: readers that fail in one line, writers that never half-write.

Output: every file the package writes goes to a temporary file ``.NAME.PID.XXXX.tmp`` in the
target directory first and is renamed into place (``os.replace`` is atomic on POSIX), so an
interrupted run leaves either the old file or the new one, never a fragment. A run killed
outright (SIGKILL) cannot remove its temporary file; the next write to the same target removes
such leftovers of processes that no longer exist and warns once about each
(:func:`clean_stale_temps`). Report directories are built beside the target and swapped in
(:func:`atomic_dir`). :func:`check_output` checks an output path before any work starts.

Input: every file a user hands in is read by :func:`read_bytes` (through :func:`read_text` and
:func:`read_csv`): a named pipe, a device, a socket or a directory is refused by ``stat`` before it
is opened, a file over :func:`max_input_bytes` (64 MiB, ``$TOKENOMICS_MAX_INPUT_BYTES``) before it
is read, a shell pipe (``<(...)``) read up to that size. They turn a missing file, an unreadable or
non-UTF-8 file, an empty or ragged CSV into one-line :class:`~tokenomics.errors.DataError` errors
(a UTF-8 byte-order mark is dropped);
:func:`numeric_column` coerces a column with the row of the first bad value in the message.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import time
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from .errors import DataError, TokenomicsError, TokenomicsWarning, ValidationError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: A temporary file without a process id in its name is stale once untouched this long [s].
STALE_AFTER_S = 86400.0


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # exists but not ours, or cannot tell: leave it
    return True


def clean_stale_temps(path: str | os.PathLike) -> list[Path]:
    """Remove temporary files of earlier writes to ``path`` whose process no longer exists.

    Temporary names carry the writer's process id (``.NAME.PID.XXXX.tmp``, or a directory
    ``.NAME.PID.XXXX.tmpdir``); a live writer's files are left alone. Names without an id
    (``.NAME.XXXX.tmp``, from earlier versions) are removed once untouched for
    :data:`STALE_AFTER_S` (a live writer streams into its file and keeps it fresh). Each removal
    is reported with a :class:`~tokenomics.errors.TokenomicsWarning`.

    Returns
    -------
    list of Path
        The files removed.
    """
    path = Path(path)
    removed: list[Path] = []
    if not path.parent.is_dir():
        return removed
    pat = re.compile(rf"^\.{re.escape(path.name)}\.(\d+)\.[^.]+\.tmp(dir)?$")
    # names without a process id (written before ids were added): stale once untouched for a day
    old_pat = re.compile(rf"^\.{re.escape(path.name)}\.[^.]+\.tmp$")
    try:
        entries = list(path.parent.iterdir())
    except OSError:
        return removed
    now = time.time()
    for p in entries:
        m = pat.match(p.name)
        if m:
            if _pid_alive(int(m.group(1))):
                continue
        elif not old_pat.match(p.name):
            continue
        else:
            try:
                if now - p.stat().st_mtime < STALE_AFTER_S:
                    continue
            except OSError:
                continue
        try:
            size = p.stat().st_size
            shutil.rmtree(p) if p.is_dir() else p.unlink()
        except OSError:
            continue
        removed.append(p)
        warnings.warn(f"removed {p} ({size:,} B), left by an interrupted write of {path.name}",
                      TokenomicsWarning, stacklevel=3)
    return removed


def _check_parent_writable(path: Path, what: str) -> None:
    parent = path.parent
    probe = parent
    while not probe.exists():  # the first existing ancestor must be a writable directory
        if probe == probe.parent:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise ValidationError(f"{what} {str(path)!r}: {str(probe)!r} is a file, not a directory")
    if probe.exists() and not os.access(probe, os.W_OK | os.X_OK):
        raise ValidationError(f"{what} {str(path)!r}: directory {str(probe)!r} is not writable")
    if probe.exists():  # permission bits do not bind root, nor tell a read-only or pseudo file system
        try:
            with tempfile.TemporaryFile(dir=probe):
                pass
        except OSError as exc:
            raise ValidationError(f"{what} {str(path)!r}: cannot write in {str(probe)!r} "
                                  f"({exc.strerror or exc}); expected a writable directory") from None


#: System directories no output may resolve into (through a symlink or ``../..``).
SYSTEM_DIRS = ("/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/boot", "/dev", "/proc", "/sys")


def _guard_system(path: Path, what: str) -> Path:
    """``path`` resolved (symlinks followed); refused when that lies in a :data:`SYSTEM_DIRS`."""
    resolved = Path(os.path.realpath(path))
    for d in SYSTEM_DIRS:
        if resolved == Path(d) or Path(d) in resolved.parents:
            via = f" (it resolves to {str(resolved)!r})" if str(resolved) != os.path.abspath(path) else ""
            raise ValidationError(f"{what} {str(path)!r} is inside the system directory {d}{via}; "
                                  "expected a path of your own")
    return resolved


def check_output(path: str | os.PathLike, *, kind: str = "file", suffixes: Iterable[str] | None = None,
                 what: str = "--out", force: bool | None = None) -> Path:
    """Check an output path before any work starts; return it as a Path.

    Parameters
    ----------
    path : path
        Where the output will go.
    kind : {"file", "dir"}
        A file is refused when the path is an existing directory; a directory when it is an
        existing file. In both cases the nearest existing ancestor must be a writable directory.
    suffixes : iterable of str, optional
        Accepted file suffixes (``.csv``, ...), compared case-insensitively.
    what : str
        How messages name the path (an option name).
    force : bool, optional
        A directory: with False, refuse the current directory (or one holding it) when it is not
        empty (``--out .``); None (the library) leaves that to :func:`atomic_dir`, which never
        removes files it did not write.

    A path that resolves into a system directory (:data:`SYSTEM_DIRS`, through a symlink or
    ``..``) is refused whatever ``kind``.

    Raises
    ------
    ValidationError
        With one line saying what is wrong.
    """
    if path is None or str(path).strip() == "":
        raise ValidationError(f"{what} is empty; expected a {'directory' if kind == 'dir' else 'file'} path")
    p = Path(path)
    resolved = _guard_system(p, what)
    if kind == "dir" and force is False and resolved.is_dir():
        cwd = Path(os.path.realpath(os.getcwd()))
        if (resolved == cwd or resolved in cwd.parents) and any(resolved.iterdir()):
            where = "the current directory" if resolved == cwd else "a directory holding the current one"
            raise ValidationError(f"{what} {str(path)!r} is {where} and it is not empty; expected a new or "
                                  "empty directory (or pass --force to write into it: only this command's "
                                  "files are replaced)")
    if kind == "file":
        if p.is_dir():
            raise ValidationError(f"{what} must be a file path, got the directory {str(p)!r}")
        if suffixes is not None:
            suffixes = tuple(s.lower() for s in suffixes)
            if p.suffix.lower() not in suffixes:
                listed = ", ".join(suffixes[:-1]) + " or " + suffixes[-1] if len(suffixes) > 1 else suffixes[0]
                raise ValidationError(f"{what} must end in {listed}, got {p.name!r}")
        if p.exists() and not os.access(p, os.W_OK) and not os.access(p.parent, os.W_OK):
            raise ValidationError(f"{what} {str(p)!r} is not writable")
    elif kind == "dir":
        if p.exists() and not p.is_dir():
            raise ValidationError(f"{what} must be a directory, got the file {str(p)!r}")
    else:  # pragma: no cover - programming error
        raise ValueError(kind)
    _check_parent_writable(p, what)
    return p


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it to ``path`` if the block succeeds.

    Examples
    --------
    >>> with atomic_path("out.png") as tmp:          # doctest: +SKIP
    ...     fig.savefig(tmp, format="png")
    """
    path = Path(path)
    if path.is_dir():
        raise ValidationError(f"{str(path)!r} is a directory; expected a file path")
    path.parent.mkdir(parents=True, exist_ok=True)
    clean_stale_temps(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent)
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
def atomic_dir(path: str | os.PathLike, owned: Iterable[str] | None = None) -> Iterator[Path]:
    """Yield a temporary directory beside ``path``; swap it in for ``path`` if the block succeeds.

    The old directory (if any) is renamed aside, the new one renamed into place, and the old one
    removed: an interrupted run leaves the old directory untouched (or, killed between the two
    renames, the old one under a ``.tmpdir`` name that the next write removes), never a mix of
    old and new files.

    Parameters
    ----------
    path : path
        The directory to (re)place.
    owned : iterable of str, optional
        Names of the files this writer produces. If ``path`` holds anything else (``--out .``),
        the directory is not swapped, so nothing foreign is ever removed: the new files are
        moved in one by one instead, each atomically. The same holds when ``path`` is the
        working directory or holds it.
    """
    path = Path(os.path.realpath(path))  # through a symlink: the target is swapped, the link stays
    if path.exists() and not path.is_dir():
        raise ValidationError(f"{str(path)!r} is a file; expected a directory")
    path.parent.mkdir(parents=True, exist_ok=True)
    clean_stale_temps(path)
    cwd = Path(os.path.abspath(os.getcwd()))
    in_use = cwd == path or path in cwd.parents  # never rename the working directory away
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmpdir", dir=path.parent))
    os.chmod(tmp, 0o777 & ~_umask())
    old = None
    try:
        yield tmp
        foreign = path.exists() and (in_use or owned is None and any(path.iterdir())
                                     or owned is not None and any(p.name not in set(owned) for p in path.iterdir()))
        if foreign:
            for f in sorted(tmp.iterdir()):
                os.replace(f, path / f.name)
        else:
            if path.exists():
                old = Path(tempfile.mkdtemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmpdir", dir=path.parent))
                os.rmdir(old)
                os.replace(path, old)
            os.replace(tmp, path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
        if old is not None and old.exists():
            shutil.rmtree(old, ignore_errors=True)


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


#: First characters that make a spreadsheet read a cell as a formula (OWASP's CSV-injection list).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$|^[+-]?(inf|infinity|nan)$", re.I)


def spreadsheet_safe(df: "pd.DataFrame") -> "pd.DataFrame":
    """``df`` with every text cell that a spreadsheet would run as a formula neutralised.

    A text cell (case ids, series, project and provider names: anything from user input) that
    starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading ``'``, so
    ``=HYPERLINK(...)`` is shown, not run (OWASP's CSV-injection rule). Numbers stay numbers:
    numeric columns are untouched, and a text cell that reads as a number (``-0.5``) is kept.
    CSV output goes through this; JSON and Parquet keep the value.
    """
    import pandas as pd

    cols = [c for c in df.columns if df[c].dtype == object or isinstance(df[c].dtype, pd.StringDtype)
            or isinstance(df[c].dtype, pd.CategoricalDtype)]
    if not cols:
        return df

    def fix(x: Any) -> Any:
        if isinstance(x, str) and x[:1] in FORMULA_STARTS and not _NUMBER.match(x.strip()):
            return "'" + x
        return x

    out = None
    for c in cols:
        col = df[c].astype(object) if isinstance(df[c].dtype, pd.CategoricalDtype) else df[c]
        fixed = col.map(fix)
        if not fixed.equals(col):
            out = df.copy() if out is None else out
            out[c] = fixed
    return df if out is None else out


def write_frame(df: "pd.DataFrame", path: str | os.PathLike) -> Path:
    """Write a DataFrame atomically as CSV, JSON or Parquet, chosen by the file suffix
    (datetime64 columns as ISO dates in CSV and JSON, :func:`iso_dates`; CSV cells that a
    spreadsheet would run as formulas neutralised, :func:`spreadsheet_safe`)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".json", ".parquet"):
        raise ValidationError(f"output file must end in .csv, .json or .parquet, got {path.name!r}")
    if suffix in (".csv", ".json"):
        df = iso_dates(df)
    if suffix == ".csv":
        df = spreadsheet_safe(df)
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


# ---------------------------------------------------------------------------------------------
# input

#: Default largest input file read [bytes]; ``$TOKENOMICS_MAX_INPUT_BYTES`` changes it.
MAX_INPUT_BYTES = 64 * 1024 * 1024
MAX_INPUT_ENV = "TOKENOMICS_MAX_INPUT_BYTES"

# a pipe the shell already opened for us: ``<(...)`` is /dev/fd/N (or /proc/self/fd/N), stdin too
_OPEN_FD = re.compile(r"^/(?:dev/fd|proc/self/fd|proc/\d+/fd)/\d+$|^/dev/stdin$")


def max_input_bytes() -> int:
    """The largest input file read [bytes]: ``$TOKENOMICS_MAX_INPUT_BYTES`` (a positive whole
    number; ``64MB``, ``1GiB`` and the like also accepted) or :data:`MAX_INPUT_BYTES`."""
    raw = os.environ.get(MAX_INPUT_ENV, "").strip()
    if not raw:
        return MAX_INPUT_BYTES
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kmgt]?i?b?)?", raw.replace("_", "").lower())
    if m is None or float(m.group(1)) <= 0:
        raise ValidationError(f"${MAX_INPUT_ENV} is {raw!r}; expected a positive number of bytes, e.g. 67108864 or 64MB")
    unit = (m.group(2) or "").rstrip("b")
    base = 1024 if unit.endswith("i") else 1000
    scale = base ** " kmgt".index(unit[:1] or " ") if unit else 1
    return max(1, int(float(m.group(1)) * scale))


def _size_text(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB" if n >= 2**20 else f"{n:,} B"


def _unreadable(label: str, exc: OSError) -> DataError:
    """One line for a file the system would not stat or open: missing, forbidden, or why not."""
    if isinstance(exc, FileNotFoundError):
        return DataError(f"{label} not found; expected an existing file")
    if isinstance(exc, PermissionError):
        return DataError(f"{label} is not readable (permission denied)")
    return DataError(f"{label} cannot be read: {exc.strerror or exc}; expected a regular file")


def read_bytes(path: str | os.PathLike, what: str = "file") -> bytes:
    """Read an input file's bytes, checked like a flag before anything is read.

    A regular file is read when not larger than :func:`max_input_bytes`; a pipe the shell opened
    (``--prices <(...)``: ``/dev/fd/N``, ``/proc/self/fd/N``, ``/dev/stdin``) is read up to that
    many bytes. A named pipe, a device, a socket or a directory is refused by ``stat`` before it
    is opened, so no input can block a command or fill its memory.

    Parameters
    ----------
    path : path
        The file.
    what : str
        How messages name the file (``"cases file"``, ``"grid file"``, ...).

    Raises
    ------
    DataError
        One line: the file as given, what is wrong, what was expected.
    """
    import stat

    if not isinstance(path, (str, os.PathLike)):
        raise ValidationError(f"{what} must be a path, got {type(path).__name__}")
    if str(path).strip() == "":
        raise DataError(f"{what} path is empty; expected a file")
    p = Path(path)
    label = f"{what} {str(p)!r}"
    try:
        st = os.stat(p)
    except OSError as exc:
        raise _unreadable(label, exc) from None
    cap = max_input_bytes()
    mode = st.st_mode
    piped = bool(_OPEN_FD.match(str(path))) and (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode))
    if stat.S_ISDIR(mode):
        raise DataError(f"{label} is a directory; expected a file")
    if not (stat.S_ISREG(mode) or piped):
        kind = ("a named pipe (FIFO)" if stat.S_ISFIFO(mode) else "a character device" if stat.S_ISCHR(mode)
                else "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
                else "not a regular file")
        raise DataError(f"{label} is {kind}; expected a regular file (or a shell pipe such as <(cat FILE))")
    if stat.S_ISREG(mode) and st.st_size > cap:
        raise DataError(f"{label} is {_size_text(st.st_size)}, more than the {_size_text(cap)} an input file may be; "
                        f"expected a smaller file (or raise ${MAX_INPUT_ENV})")
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise _unreadable(label, exc) from None
    try:
        os.set_blocking(fd, True)  # opened without blocking (a FIFO swapped in after stat), read blocking
        st2 = os.fstat(fd)
        if not (stat.S_ISREG(st2.st_mode) or piped):  # replaced between stat and open
            raise DataError(f"{label} is not a regular file; expected a regular file")
        chunks, n = [], 0
        while n <= cap:
            try:
                chunk = os.read(fd, min(1 << 20, cap + 1 - n))
            except IsADirectoryError:
                raise DataError(f"{label} is a directory; expected a file") from None
            except OSError as exc:
                raise DataError(f"{label} cannot be read: {exc.strerror or exc}") from None
            if not chunk:
                break
            chunks.append(chunk)
            n += len(chunk)
    finally:
        os.close(fd)
    if n > cap:
        raise DataError(f"{label} holds more than the {_size_text(cap)} an input file may be; "
                        f"expected a smaller input (or raise ${MAX_INPUT_ENV})")
    return b"".join(chunks)


def read_text(path: str | os.PathLike, what: str = "file") -> str:
    """Read a UTF-8 text file (:func:`read_bytes`; a byte-order mark is dropped); every way it can
    fail is one :class:`DataError` line.

    Parameters
    ----------
    path : path
        The file.
    what : str
        How messages name the file (``"cases file"``, ``"grid file"``, ...).
    """
    data = read_bytes(path, what)
    p = Path(path)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise DataError(f"{what} {str(p)!r} is not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line}); "
                        "save it as UTF-8") from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise DataError(f"{what} {str(p)!r} holds a NUL byte on line {line}; expected a text file")
    return text


#: Deepest nesting of tables and arrays a TOML or JSON input may have (the deepest any input
#: file needs is 3: a table of tables of arrays).
MAX_NESTING = 8


def _depth(obj: Any, limit: int, depth: int = 1) -> int:
    """Nesting depth of ``obj`` (dicts and lists), counted up to ``limit + 1``."""
    if depth > limit or not isinstance(obj, (dict, list)):
        return depth - (not isinstance(obj, (dict, list)))
    kids = obj.values() if isinstance(obj, dict) else obj
    return max((_depth(k, limit, depth + 1) for k in kids), default=depth)


def load_document(path: str | os.PathLike, what: str, kind: str) -> Any:
    """Parse a TOML or JSON input file (read by :func:`read_text`) whose nesting is at most
    :data:`MAX_NESTING` deep; every failure is one :class:`DataError` line.

    Parameters
    ----------
    path : path
        The file.
    what : str
        How messages name it (``"deployment file"``).
    kind : {"toml", "json"}
        Its syntax.
    """
    import json
    import tomllib

    text = read_text(path, what)
    label = f"{what} {str(path)!r}"
    try:
        doc = tomllib.loads(text) if kind == "toml" else json.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise DataError(f"{label} is not valid TOML: {' '.join(str(exc).split())}") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{label} is not valid JSON: {exc.msg} at line {exc.lineno}") from None
    except (RecursionError, MemoryError):
        raise DataError(f"{label} is nested too deeply; expected at most {MAX_NESTING} levels of tables "
                        "and arrays") from None
    except ValueError as exc:  # e.g. a number too large to convert
        raise DataError(f"{label} cannot be parsed: {' '.join(str(exc).split())[:200]}") from None
    if _depth(doc, MAX_NESTING) > MAX_NESTING:
        raise DataError(f"{label} is nested too deeply; expected at most {MAX_NESTING} levels of tables and arrays")
    return doc


_TYPE_WORDS = {str: "text", bool: "true or false", int: "a whole number", float: "a number", dict: "a table",
               list: "a list"}


def _type_word(t: Any) -> str:
    ts = t if isinstance(t, tuple) else (t,)
    words = list(dict.fromkeys(_TYPE_WORDS.get(x, x.__name__) for x in ts))
    if "a whole number" in words and "a number" in words:
        words.remove("a whole number")
    return " or ".join(words)


def _got(value: Any) -> str:
    kind = {bool: "true/false", str: "text", int: "a number", float: "a number", dict: "a table",
            list: "a list"}.get(type(value), type(value).__name__)
    shown = repr(value)
    return f"{kind} {shown if len(shown) <= 40 else shown[:37] + '...'}"


def check_table(data: Any, schema: dict[str, Any], label: str) -> dict[str, Any]:
    """Check a parsed TOML/JSON table against ``schema`` (key -> accepted Python type or tuple of
    types; ``int`` excludes booleans, ``float`` accepts whole numbers, and a ``bool`` key also
    accepts the text ``"true"``/``"false"``, read by :func:`tokenomics._validate.flag`).

    Unknown keys are refused with the closest known ones; the message starts with ``label``.
    Returns the table (booleans normalised).
    """
    import difflib

    from . import _validate

    if not isinstance(data, dict):
        raise DataError(f"{label} must be a table of keys, got {_got(data)}")
    out = dict(data)
    for key, val in data.items():
        if key not in schema:
            close = difflib.get_close_matches(str(key), list(schema), n=3, cutoff=0.6)
            hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            raise DataError(f"{label}: unknown key {str(key)!r}.{hint} Known: {', '.join(schema)}")
        want = schema[key]
        ts = want if isinstance(want, tuple) else (want,)
        if bool in ts:
            try:
                out[key] = _validate.flag(val, key)
                continue
            except TokenomicsError:
                raise DataError(f"{label}: {key} must be true or false, got {_got(val)}") from None
        ok = any(isinstance(val, t) and not (isinstance(val, bool) and t in (int, float)) for t in ts) or (
            float in ts and isinstance(val, int) and not isinstance(val, bool))
        if not ok:
            raise DataError(f"{label}: {key} must be {_type_word(want)}, got {_got(val)}")
    return out


def _check_rectangular(text: str, label: str) -> None:
    """Every non-blank row has as many fields as the header (pandas would otherwise take extra
    leading fields for an index, silently shifting every column)."""
    import csv
    import io as _io

    rows = csv.reader(_io.StringIO(text))
    try:
        header = next(rows, None)
        if header is None:
            return
        n = len(header)
        for row in rows:
            if row and any(c.strip() for c in row) and len(row) != n:
                raise DataError(f"{label} is not a rectangular CSV: line {rows.line_num} has {len(row)} fields, "
                                f"the header has {n}")
    except csv.Error as exc:
        raise DataError(f"{label} cannot be parsed as CSV: line {rows.line_num}: {exc}") from None


def exact_floats() -> dict:
    """Keyword arguments that make :func:`pandas.read_csv` parse floats correctly rounded.

    pandas 3.1 does by default (and deprecates the option); older releases' default parser is off
    by up to ~1e-12 relative, so results (and pinned figures) would depend on the pandas installed.
    """
    import pandas as pd

    major, minor = (int(v) for v in re.findall(r"\d+", pd.__version__)[:2])
    return {} if (major, minor) >= (3, 1) else {"float_precision": "round_trip"}


def read_csv(source: Any, what: str = "CSV file", *, required: Iterable[str] = (),
             dtype: Any = None, allow_empty: bool = False) -> "pd.DataFrame":
    """Read a CSV file (or take a DataFrame) and check its columns, in one-line errors.

    Parameters
    ----------
    source : path or DataFrame
        The CSV file, or a DataFrame to check (copied).
    what : str
        How messages name it.
    required : iterable of str
        Columns that must be present.
    dtype : optional
        Passed to :func:`pandas.read_csv`.
    allow_empty : bool
        Accept a header without rows.

    Raises
    ------
    DataError
        Missing, directory, unreadable, not UTF-8, empty, ragged rows, missing columns, no rows.
    ValidationError
        ``source`` is neither a path nor a DataFrame.
    """
    import io as _io

    import pandas as pd

    if isinstance(source, pd.DataFrame):
        df = source.copy()
        label = what
    elif isinstance(source, (str, os.PathLike)):
        text = read_text(source, what)
        label = f"{what} {str(source)!r}"
        if not text.strip():
            raise DataError(f"{label} is empty; expected a header line and rows")
        _check_rectangular(text, label)
        try:
            df = pd.read_csv(_io.StringIO(text), dtype=dtype, **exact_floats())
        except pd.errors.EmptyDataError:
            raise DataError(f"{label} is empty; expected a header line and rows") from None
        except pd.errors.ParserError as exc:
            m = re.search(r"line (\d+), saw (\d+)", str(exc))
            where = f"line {m.group(1)} has {m.group(2)} fields, more than the header" if m else str(exc).strip()
            raise DataError(f"{label} is not a rectangular CSV: {where}") from None
        except (ValueError, TypeError) as exc:
            raise DataError(f"{label} cannot be parsed as CSV: {str(exc).splitlines()[0]}") from None
    else:
        raise ValidationError(f"{what} must be a path or a pandas DataFrame, got {type(source).__name__}")
    missing_columns(df, required, label)
    if df.empty and not allow_empty:
        raise DataError(f"{label} has no rows")
    return df


def missing_columns(df: "pd.DataFrame", required: Iterable[str], label: str) -> None:
    """Raise one :class:`DataError` line naming the required columns ``df`` lacks.

    The header read is quoted only where it shares a column with the schema (a CSV of the
    expected kind with a column missing): a file of another kind (a key file, a log) is said to
    be one, without echoing its first line.
    """
    required = list(required)
    missing = [c for c in required if c not in df.columns]
    if not missing:
        return
    if len(missing) == len(required):
        raise DataError(f"{label} has none of the expected columns (is it the right file?); expected a header "
                        f"line naming {', '.join(required)}")
    found = [str(c) if len(str(c)) <= 40 else str(c)[:37] + "..." for c in df.columns[:30]]
    raise DataError(f"{label} is missing columns {missing}; found {found}")


def blank_cells(values: "pd.Series") -> "pd.Series":
    """Cells of ``values`` that are missing or only whitespace (a CSV's 'not given')."""
    return values.isna() | values.astype(str).str.strip().eq("")


def numeric_column(df: "pd.DataFrame", column: str, what: str, *, minimum: float | None = None,
                   maximum: float | None = None, strict_minimum: bool = False, integer: bool = False,
                   required: bool = True, line_offset: int = 2) -> "pd.Series":
    """Coerce ``df[column]`` to float and check it; the message names the first bad row.

    Parameters
    ----------
    df : DataFrame
        Rows as read (row ``i`` is on file line ``i + line_offset``: header on line 1).
    column : str
        Column to check.
    what : str
        How messages name the table.
    minimum, maximum : float, optional
        Range (inclusive; ``strict_minimum`` makes the minimum exclusive).
    integer : bool
        Values must be whole numbers.
    required : bool
        Missing cells are errors (else they stay NaN).

    Returns
    -------
    pandas.Series
        The column as float.

    Raises
    ------
    CellError
        The first bad row (:func:`numeric_cell_problems` says what is wrong with each).
    """
    vals, problems = numeric_cell_problems(df, column, minimum=minimum, maximum=maximum,
                                           strict_minimum=strict_minimum, integer=integer, required=required)
    bad = problems.to_numpy().nonzero()[0]
    if bad.size:
        from .errors import CellError

        i = int(bad[0])
        raise CellError(what, i, i + line_offset, problems.iloc[i])
    return vals


def numeric_cell_problems(df: "pd.DataFrame", column: str, *, minimum: float | None = None,
                          maximum: float | None = None, strict_minimum: bool = False, integer: bool = False,
                          required: bool = True) -> "tuple[pd.Series, pd.Series]":
    """``df[column]`` as float and, per row, what is wrong with its cell (``""`` where nothing is).

    The checks of :func:`numeric_column`, row by row, for a reader that keeps the good rows of a
    table (``"COLUMN is not a number, got 'abc'"``, ``"COLUMN must be >= 1, got -8"``; the first
    failed check of each cell: not a number, missing, not finite, range, whole number).

    Returns
    -------
    tuple of pandas.Series
        The values (NaN where missing or not a number) and the problems (str).
    """
    import numpy as np
    import pandas as pd

    raw = df[column]
    vals = pd.to_numeric(raw, errors="coerce").astype(float)
    missing = blank_cells(raw)
    if raw.dtype == bool:
        vals = vals.where(False)
    bad_text = vals.isna() & ~missing
    checks = [(bad_text, "is not a number")]
    if required:
        checks.append((missing, "is missing"))
    fin = vals.notna()
    checks.append((fin & ~np.isfinite(vals.fillna(0)), "is not finite"))
    ok = fin & np.isfinite(vals.fillna(0))
    if minimum is not None:
        below = (vals <= minimum) if strict_minimum else (vals < minimum)
        checks.append((ok & below, f"must be {'>' if strict_minimum else '>='} {minimum:g}"))
    if maximum is not None:
        checks.append((ok & (vals > maximum), f"must be <= {maximum:g}"))
    if integer:
        checks.append((ok & (vals != np.round(vals)), "must be a whole number"))
    problems = pd.Series("", index=df.index, dtype=object)
    for mask, msg in reversed(checks):  # the first check that fails names the cell
        m = np.asarray(mask, dtype=bool)
        problems[m] = msg
    for i in np.flatnonzero(problems.to_numpy() != ""):
        val = raw.iloc[i]
        val = val.item() if hasattr(val, "item") else val
        problems.iloc[i] = f"{column} {problems.iloc[i]}, got {val!r}"
    return vals, problems


# --- declared schemas of user CSV files ----------------------------------------------------------

#: Bad cells one :class:`DataError` names before ``and N more``.
MAX_PROBLEMS_NAMED = 10

#: Kinds of :class:`Column`.
COLUMN_KINDS = ("number", "integer", "choice", "text", "date")

_DATE_WORDS = "YYYY-MM-DD, YYYY-MM or YYYY"


@dataclass(frozen=True)
class Column:
    """One column of a user CSV file: what each cell must hold.

    Parameters
    ----------
    name : str
        Header name.
    kind : {"number", "integer", "choice", "text", "date"}
        ``number``: a finite number (stored back as float); ``integer``: a whole number (float);
        ``choice``: one of ``choices`` (stored back stripped); ``text``: any text, not blank where
        ``required``; ``date``: ``YYYY-MM-DD``, ``YYYY-MM`` or ``YYYY`` (kept as text).
    minimum, maximum : float, optional
        Physical range (inclusive; ``strict_minimum`` makes the minimum exclusive); for a ``date``,
        the first and last year.
    strict_minimum : bool
        The minimum is excluded (a price or time must be > 0).
    choices : tuple of str
        Words a ``choice`` cell may hold.
    values : tuple of float
        Numbers a ``number`` cell may hold (bytes per parameter: 4, 2, 1, 0.5), where only some are.
    required : bool
        A blank cell is a problem (else it stays NaN / blank).
    optional : bool
        The column may be absent from the header (checked where present).
    unit : str
        Unit of a number, for the message (``"s"``, ``"USD per million tokens"``).
    expected : str
        What a cell should hold, in words, where the kind's own words are not enough.
    not_after_today : bool
        A ``date`` later than today (``datetime.date.today()``; a month or year from its first
        day) is a problem: a file records what was observed.
    fold_case : bool
        A ``choice`` cell is compared lower-cased (and stored back lower-cased).
    """

    name: str
    kind: str = "number"
    minimum: float | None = None
    maximum: float | None = None
    strict_minimum: bool = False
    choices: tuple[str, ...] = ()
    values: tuple[float, ...] = ()
    required: bool = True
    optional: bool = False
    unit: str = ""
    expected: str = ""
    not_after_today: bool = False
    fold_case: bool = False

    def __post_init__(self) -> None:
        if self.kind not in COLUMN_KINDS:
            raise ValidationError(f"Column {self.name!r}: kind must be one of {', '.join(COLUMN_KINDS)}, "
                                  f"got {self.kind!r}")

    def expectation(self) -> str:
        """What a cell of this column should hold, in words (``"a whole number >= 1"``)."""
        if self.expected:
            return self.expected
        if self.kind == "choice":
            return f"one of {', '.join(self.choices)}"
        if self.kind == "date":
            return f"a date {_DATE_WORDS}"
        if self.kind == "text":
            return f"text in {self.name}"
        if self.values:
            return f"one of {', '.join(f'{x:g}' for x in self.values)}"
        word = "a whole number" if self.kind == "integer" else "a number"
        rng = []
        if self.minimum is not None:
            rng.append(f"{'>' if self.strict_minimum else '>='} {self.minimum:g}")
        if self.maximum is not None:
            rng.append(f"<= {self.maximum:g}")
        unit = f" [{self.unit}]" if self.unit else ""
        return f"{word}{' ' + ' and '.join(rng) if rng else ''}{unit}"


def schema_columns(schema: Iterable[Column]) -> tuple[str, ...]:
    """Columns of ``schema`` a file must have in its header (those not ``optional``)."""
    return tuple(c.name for c in schema if not c.optional)


def _future(parsed: Any, precision: str, today: Any) -> bool:
    """Whether a parsed date (a month or year from its first day) lies after ``today``."""
    import numpy as np

    d = parsed
    if precision == "month":
        d = d.astype("datetime64[M]").astype("datetime64[D]")
    elif precision == "year":
        d = d.astype("datetime64[Y]").astype("datetime64[D]")
    return bool(d > np.datetime64(today, "D"))


def _column_problems(df: "pd.DataFrame", col: Column, today: Any) -> "list[tuple[int, str]]":
    """Problems of one column's cells, ``(row position, detail)``; the column is stored back
    converted (numbers as float, words stripped)."""
    import difflib

    import numpy as np

    out: list[tuple[int, str]] = []
    raw = df[col.name]
    if col.kind in ("number", "integer"):
        vals, probs = numeric_cell_problems(df, col.name, minimum=col.minimum, maximum=col.maximum,
                                            strict_minimum=col.strict_minimum, integer=col.kind == "integer",
                                            required=col.required)
        if col.values:
            off = vals.notna() & ~vals.isin(list(col.values)) & (probs == "")
            for i in np.flatnonzero(off.to_numpy()):
                probs.iloc[i] = f"{col.name} is not one of the values allowed, got {raw.iloc[i]!r}"
        for i in np.flatnonzero((probs != "").to_numpy()):
            out.append((int(i), f"{probs.iloc[i]}; expected {col.expectation()}"))
        df[col.name] = vals
        return out
    blank = blank_cells(raw).to_numpy()
    text = raw.where(~blank, "").astype(object).map(str).str.strip()
    if col.kind == "choice":
        if col.fold_case:
            text = text.str.lower()
        for i in np.flatnonzero(~text.isin(col.choices).to_numpy()):
            if blank[i]:
                if col.required:
                    out.append((int(i), f"{col.name} is empty; expected {col.expectation()}"))
                continue
            close = difflib.get_close_matches(text.iloc[i], list(col.choices), n=1)
            got = repr(raw.iloc[i])
            got = got if len(got) <= 60 else got[:57] + "..."
            out.append((int(i), f"{col.name} must be {col.expectation()}, got {got}"
                        + (f". Did you mean {close[0]!r}?" if close else "")))
        df[col.name] = text
        return out
    if col.kind == "text":
        if col.required:
            out.extend((int(i), f"{col.name} is empty; expected {col.expectation()}") for i in np.flatnonzero(blank))
        return out
    from .dates import parse_date  # date

    for i, (cell, empty) in enumerate(zip(raw, blank)):
        if empty:
            if col.required:
                out.append((i, f"missing {col.name}; expected {col.expectation()}"))
            continue
        parsed = parse_date(cell)
        if parsed is None:
            out.append((i, f"bad {col.name} {str(cell).strip()!r}; expected {col.expectation()}"))
            continue
        year = int(str(parsed[0])[:4])
        if (col.minimum is not None and year < col.minimum) or (col.maximum is not None and year > col.maximum):
            span = (f"outside {col.minimum:g} to {col.maximum:g}" if None not in (col.minimum, col.maximum)
                    else f"before {col.minimum:g}" if col.minimum is not None else f"after {col.maximum:g}")
            out.append((i, f"{col.name} {year} is {span}; expected the year it happened"))
        elif col.not_after_today and _future(parsed[0], parsed[1], today):
            out.append((i, f"{col.name} {str(cell).strip()!r} is after today ({today}); expected a date on or "
                           "before it"))
    return out


def frame_problems(df: "pd.DataFrame", schema: Iterable[Column]) -> "list[tuple[int, str]]":
    """Every bad cell of ``df`` against ``schema``, ``(row position, detail)``, in row order (then
    the schema's column order); the checked columns are stored back converted (numbers as float,
    words stripped), so a reader can go on with the good rows.

    Parameters
    ----------
    df : DataFrame
        Rows as read; a column ``optional`` in ``schema`` may be absent (it is skipped).
    schema : iterable of Column
        The file kind's declared columns.

    Returns
    -------
    list of (int, str)
        ``(row, "batch is not a number, got 'x'; expected a whole number >= 1")``; empty where
        every cell is good.
    """
    import datetime as _dt

    today = _dt.date.today()
    out: list[tuple[int, str]] = []
    for col in schema:
        if col.name in df.columns:
            out.extend(_column_problems(df, col, today))
    return sorted(out, key=lambda p: p[0])  # stable: a row's cells in the schema's order


def problem_lines(problems: "Iterable[tuple[int, str]]", line_offset: int = 2) -> list[str]:
    """``row N (line M): detail`` for each problem (row position ``i`` on file line ``i + line_offset``)."""
    return [f"row {i + 1} (line {i + line_offset}): {detail}" for i, detail in sorted(problems, key=lambda p: p[0])]


def raise_problems(label: str, problems: "Iterable[tuple[int, str]]", line_offset: int = 2,
                   noun: str = "bad cells") -> None:
    """Raise one :class:`DataError` line naming every problem (the first :data:`MAX_PROBLEMS_NAMED`
    and how many more), or return where there is none.

    One problem reads ``LABEL row N (line M): detail``; several
    ``LABEL: K bad cells: row N (line M): detail; ...; and J more`` (``noun`` for "bad cells").
    """
    lines = problem_lines(problems, line_offset)
    if not lines:
        return
    if len(lines) == 1:
        raise DataError(f"{label} {lines[0]}")
    more = f"; and {len(lines) - MAX_PROBLEMS_NAMED} more" if len(lines) > MAX_PROBLEMS_NAMED else ""
    raise DataError(f"{label}: {len(lines)} {noun}: {'; '.join(lines[:MAX_PROBLEMS_NAMED])}{more}")


def check_frame(df: "pd.DataFrame", schema: Iterable[Column], label: str, *,
                extra: "Iterable[tuple[int, str]]" = (), line_offset: int = 2) -> "pd.DataFrame":
    """Check every cell of ``df`` against ``schema`` and refuse the table with all its problems.

    Parameters
    ----------
    df : DataFrame
        Rows as read (file row ``i`` on line ``i + line_offset``); converted in place.
    schema : iterable of Column
        The file kind's declared columns.
    label : str
        How the message names the table (``"cases file 'x.csv'"``).
    extra : iterable of (int, str)
        Problems the reader found itself (rules across cells), listed with the schema's.

    Returns
    -------
    pandas.DataFrame
        ``df``, its checked columns converted.

    Raises
    ------
    DataError
        One line naming each bad cell (row, line, column, what was expected), up to
        :data:`MAX_PROBLEMS_NAMED` of them and a count of the rest.
    """
    raise_problems(label, [*frame_problems(df, schema), *extra], line_offset)
    return df

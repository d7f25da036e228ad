"""Every `$ tokenomics ...` command shown in README.md and the guides (docs/guide/*.md) runs as
documented, and every ```python block runs. The README's run in the default tier, the guides' in the
``integration`` tier.

Pipes and comments are stripped; output paths are redirected into a temporary directory; a
command whose transcript shows `Error:` must exit with code 2 and print that error.
"""

import re
import shlex
from pathlib import Path

import numpy as np
import pytest

from tokenomics.cli import main

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
#: Every document whose transcripts are checked: {name: text}; the README first.
DOCS = {"README.md": README, **{f"docs/guide/{p.name}": p.read_text()
                                for p in sorted((ROOT / "docs" / "guide").glob("*.md"))}}


def _tier(doc: str) -> list:
    return [] if doc == "README.md" else [pytest.mark.integration]


def _commands():
    out = []
    for doc, text in DOCS.items():
        out += _commands_of(doc, text)
    return out


def _commands_of(doc: str, text: str):
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        if line.startswith("pip install -e . && tokenomics"):  # the quickstart's main job
            line = "$ " + line.split("&&", 1)[1].strip()
        if not line.startswith("$ tokenomics"):
            continue
        cmd = line[2:].split(" | ")[0]
        cmd = re.sub(r"\s+#.*$", "", cmd).strip()
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        expect_error = nxt.startswith("Error:")
        rows = []
        for s in lines[i + 1:]:
            if s.startswith(("$ ", "```")):
                break
            rows += [s] if s.startswith("│") else []
        out.append(pytest.param(cmd, nxt if expect_error else None, rows, id=f"{doc}: {cmd[:70]}",
                                marks=([pytest.mark.slow] if "--engine dask" in cmd else []) + _tier(doc)))
    return out


COMMANDS = _commands()


def test_readme_has_transcripts():
    assert len(_commands_of("README.md", README)) >= 3


def _cells(row: str) -> list[str]:
    """The cells of a table row, thousands separators dropped from numbers."""
    out = [c.strip() for c in row.strip().strip("│").split("│")]
    return [c.replace(",", "") if re.fullmatch(r"-?[\d,]+(\.\d+)?", c) else c for c in out]


@pytest.mark.parametrize("cmd, error, rows", COMMANDS)
def test_readme_command(cmd, error, rows, tmp_path, monkeypatch, capsys):
    """The command runs (or fails with the error shown); every table row its transcript shows is a
    row it prints today, each number equal to the digits shown (rows matched by their first cell,
    so the terminal width does not matter)."""
    monkeypatch.chdir(ROOT)
    args = shlex.split(cmd)[1:]
    for j, a in enumerate(args):
        if j > 0 and args[j - 1] in ("--out", "-o"):
            args[j] = str(tmp_path / Path(a.rstrip("/")).name)
    with pytest.raises(SystemExit) as exc:
        main(args)
        raise SystemExit(0)
    cap = capsys.readouterr()
    err = cap.err
    if error:
        assert exc.value.code == 2
        assert err.strip() == error.strip()
    else:
        assert exc.value.code in (0, None), err
    printed = [_cells(r) for r in cap.out.splitlines() if r.startswith("│")]
    for row in rows:
        want = _cells(row)
        same = [got for got in printed if got[0] == want[0] and len(got) == len(want)]
        assert any(all(_same(w, g, True) for w, g in zip(want, got)) for got in same), \
            f"README row {row.strip()!r}; today: {[' | '.join(g) for g in same] or 'no such row'}"


def _python_blocks():
    blocks = []
    for doc, text in DOCS.items():
        cur, inside = [], False
        for line in text.splitlines():
            if line.strip() == "```python":
                inside, cur = True, []
            elif inside and line.strip() == "```":
                inside = False
                blocks.append(pytest.param("\n".join(cur), id=f"{doc}: {cur[0][:50] if cur else ''}", marks=_tier(doc)))
            elif inside:
                cur.append(line)
    return blocks


@pytest.mark.parametrize("code", _python_blocks())
def test_readme_python_example_runs(code, tmp_path, monkeypatch):
    """Every ```python block of the README runs (in a scratch directory that sees examples/)."""
    for d in ("examples", "tests", "docs"):  # the files the guides' examples name, from a scratch directory
        (tmp_path / d).symlink_to(ROOT / d)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})


def _cut(line: str, spec: str) -> str:
    """``cut -d, -f SPEC`` of one CSV line (fields like 2,5,6 or 50-52)."""
    cells = line.split(",")
    keep = []
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        keep += range(int(lo), int(hi or lo) + 1)
    return ",".join(cells[k - 1] for k in keep if k <= len(cells))


def _cut_transcripts():
    out = []
    for doc, text in DOCS.items():
        lines = text.splitlines()
        for i, line in enumerate(lines):
            m = re.match(r"\$ (tokenomics .*?) \| cut -d, -f([\d,\-]+)", line)
            if m and i + 1 < len(lines):
                out.append(pytest.param(m.group(1), m.group(2), lines[i + 1], id=f"{doc}: {m.group(1)[:60]}",
                                        marks=_tier(doc)))
    return out


@pytest.mark.parametrize("cmd, fields, header", _cut_transcripts())
def test_readme_cut_transcripts_show_the_real_columns(cmd, fields, header, monkeypatch, capsys):
    """A transcript that cuts CSV columns by position shows the header those positions give today
    (a column added to a result must not silently change what the README shows)."""
    monkeypatch.chdir(ROOT)
    with pytest.raises(SystemExit):
        main(shlex.split(cmd)[1:])
        raise SystemExit(0)
    first = capsys.readouterr().out.splitlines()[0]
    assert _cut(first, fields) == header


def _run_stdout(cmd: str, monkeypatch, capsys) -> list[str]:
    monkeypatch.chdir(ROOT)
    with pytest.raises(SystemExit):
        main(shlex.split(cmd)[1:])
        raise SystemExit(0)
    return capsys.readouterr().out.splitlines()


def _data_transcripts():
    """README transcripts of CSV/JSON output (after `cut`, `head`, `grep` as written): the lines shown
    under each command, up to the next command, the block's end or an elision."""
    out = []
    for doc, text in DOCS.items():
        out += _data_transcripts_of(doc, text)
    return out


def _data_transcripts_of(doc: str, text: str):
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        m = re.match(r"\$ (tokenomics .*(?:--format|-f) (?:csv|json)\b.*)$", line)
        if not m:
            continue
        rounded = "numbers rounded here" in m.group(1)
        parts = [p.strip() for p in re.sub(r"\s+#.*$", "", m.group(1)).split(" | ")]
        shown = []
        for s in lines[i + 1:]:
            if s.startswith(("$ ", "```")):
                break
            shown.append(s)
        if shown:
            out.append(pytest.param(parts, shown, rounded, id=f"{doc}: {parts[0][:60]}", marks=_tier(doc)))
    return out


_TOKEN = re.compile(r'([,\s:\[\]{}"]+)')


def _same(shown: str, actual: str, rounded: bool) -> bool:
    """Equal text, numbers equal to 1e-6 (across library versions), or, where the README says
    its numbers are rounded, equal to the digits shown."""
    if "numbers rounded here" in shown:
        shown, rounded = re.sub(r"\s+#.*$", "", shown), True
    a, b = _TOKEN.split(shown.strip()), _TOKEN.split(actual.strip())
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x == y:
            continue
        try:
            fx, fy = float(x), float(y)
        except ValueError:
            return False
        if rounded:
            mant = x.lower().split("e")[0]
            digits = len(mant.split(".")[1]) if "." in mant else 0
            scale = 10 ** int(x.lower().split("e")[1]) if "e" in x.lower() else 1.0
            if abs(fx - fy) > max(0.5 * 10 ** -digits * scale * (1 + 1e-9), 1e-6 * abs(fy)):  # last digit of a large count may differ by CPU
                return False
        elif not np.isclose(fx, fy, rtol=1e-6, atol=1e-12):
            return False
    return True


@pytest.mark.parametrize("parts, shown, rounded", _data_transcripts())
def test_readme_data_transcripts_show_todays_numbers(parts, shown, rounded, monkeypatch, capsys):
    """Every CSV/JSON transcript line in the README is what the command prints today (a change that
    moves a figure must move the README with it); `...` elides lines, a JSON `"key":` line is found
    by its key (fields in the printed order)."""
    out = _run_stdout(parts[0], monkeypatch, capsys)
    for p in parts[1:]:
        if p.startswith("cut"):
            out = [_cut(s, re.search(r"-f\s*([\d,\-]+)", p).group(1)) for s in out]
        elif p.startswith("head"):
            out = out[:int(re.search(r"(\d+)", p).group(1))]
        elif p.startswith("grep"):
            out = [s for s in out if re.search(shlex.split(p)[-1], s)]
    k, elided = 0, False
    for s in shown:
        if s.strip() == "...":
            elided = True
            continue
        if re.match(r'\s*"[^"]+":', s):  # a JSON field: found by its key, in order
            key = s.strip().split(":")[0]
            while k < len(out) and out[k].strip().split(":")[0] != key:
                k += 1
        elif elided:  # the first line after an elision: the next one that reads the same
            while k < len(out) and out[k].strip() != s.strip():
                k += 1
        elided = False
        assert k < len(out), f"README shows more than `{' | '.join(parts)}` prints: {s!r}"
        assert _same(s, out[k], rounded), f"README: {s!r}\ntoday:  {out[k]!r}"
        k += 1

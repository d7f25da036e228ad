"""Date catalogue-sourced price rows by the change that set the price, from the catalogue's git history.

Rows of ``tokenomics/datasets/market_prices.csv`` taken from the public price catalogue
``pydantic/genai-prices`` carry ``as_of`` = the date of the last commit touching the provider's
file, which is often months after the price took effect. This script walks that file's history
(``git log --follow``) in a local mirror of the catalogue, parses the provider YAML at every
commit, and finds, for each row, the oldest commit of the unbroken run of commits ending at the
row's source commit in which the row's model id lists the row's price (input and output USD per
million tokens). That commit is the change that set the price. It writes two columns:

* ``price_effective_date``: the commit's author date; or, where that commit records the model's
  ``prices_checked`` date earlier than the merge, that date (the price was seen in effect then);
  or the catalogue's own ``start_date`` constraint on that price where it has one (the
  provider's stated start). Where the setting commit is the file's first, the price may be older
  and ``date_source`` says so;
* ``date_source``: ``genai-prices commit abc1234 'message' YYYY-MM-DD`` (or why no date was
  found; such rows keep ``price_effective_date`` empty and ``as_of`` is then the date to use).

``as_of`` is kept. Rows from other sources are left with an empty ``price_effective_date`` and a
``date_source`` saying the row's ``date`` column is its source's own date.

Rows of ``tokenomics/datasets/api_prices.csv`` are dated by hand from each provider's
announcement (their ``date`` column), except those dated by a ``simonw/llm-prices`` snapshot
(``note`` says "listing date"): for those, :data:`LLM_PRICES_IDS` names the catalogue's model id
and the same walk over ``data/<vendor>.json`` finds the first commit listing the row's price.

Run from the repository root with a bare mirror of the catalogue (the search tool's ``fetch
github:pydantic/genai-prices`` puts one at ``/work/.mirror/pydantic+genai-prices/repo``)::

    python tools/date_catalogue_prices.py /work/.mirror/pydantic+genai-prices/repo \
        /work/.mirror/simonw+llm-prices/repo

It needs git and PyYAML; it is not run by the tests (the mirror is not part of the repository).
"""

from __future__ import annotations

import re
import subprocess
import sys
from functools import lru_cache

import pandas as pd
import yaml

DST = "tokenomics/datasets/market_prices.csv"
SRC_RE = re.compile(r"github:pydantic/genai-prices@([0-9a-f]{40}):(\S+)\s*\(model id ([^;),]+)")
NO_DATE = "no effective date found in the catalogue history ({why}); as_of (last commit touching the file) kept"


def _git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", repo, *args], check=True, capture_output=True, text=True).stdout


@lru_cache(maxsize=None)
def history(repo: str, commit: str, path: str) -> list[tuple[str, str, str, str]]:
    """Commits touching ``path`` up to ``commit``, newest first: (sha, date, subject, path then)."""
    out = _git(repo, "log", "--follow", "--name-only", "--format=%x00%H%x01%ad%x01%s", "--date=short",
               commit, "--", path)
    rows = []
    for block in out.split("\x00")[1:]:
        head, _, names = block.partition("\n")
        sha, date, subject = head.split("\x01", 2)
        names = [n for n in names.split("\n") if n.strip()]
        rows.append((sha, date, subject, names[-1] if names else path))
    return rows


@lru_cache(maxsize=None)
def models_at(repo: str, sha: str, path: str) -> dict[str, object]:
    """The provider file's model entries at one commit, by id and by the names their ``match``
    equals ({} if unreadable)."""
    try:
        doc = yaml.safe_load(_git(repo, "show", f"{sha}:{path}"))
    except (subprocess.CalledProcessError, yaml.YAMLError):
        return {}
    out: dict[str, object] = {}
    for m in (doc or {}).get("models", []) or []:
        if isinstance(m, dict) and "id" in m:
            out[str(m["id"])] = m
    for m in (doc or {}).get("models", []) or []:  # a model named by what its `match` equals
        if isinstance(m, dict):
            for name in re.findall(r"equals: '?([^\s',}]+)", yaml.safe_dump(m.get("match"))):
                out.setdefault(name, m)
    return out


def _base(x: object) -> float | None:
    if isinstance(x, dict):  # tiered: {base: ..., tiers: [...]}
        x = x.get("base")
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def price_blocks(prices: object, constraint: dict | None = None):
    """Every (input, output, constraint) listed in a model's ``prices`` (flat, list or constrained)."""
    if isinstance(prices, list):
        for p in prices:
            if isinstance(p, dict) and "prices" in p:
                yield from price_blocks(p["prices"], p.get("constraint"))
            else:
                yield from price_blocks(p, constraint)
    elif isinstance(prices, dict):
        if "output_mtok" in prices or "input_mtok" in prices:
            yield _base(prices.get("input_mtok")), _base(prices.get("output_mtok")), constraint
        elif "prices" in prices:
            yield from price_blocks(prices["prices"], prices.get("constraint"))


def _same(a: float | None, b: float) -> bool:
    return a is not None and pd.notna(b) and abs(a - float(b)) <= 1e-9 + 1e-6 * abs(float(b))


def lists_price(prices: object, inp: float, out: float) -> tuple[bool, dict | None]:
    for i, o, c in price_blocks(prices):
        if _same(o, out) and (pd.isna(inp) or _same(i, inp)):
            return True, c
    return False, None


def date_row(repo: str, commit: str, path: str, model_id: str, inp: float, out: float) -> tuple[str, str]:
    """(price_effective_date, date_source) for one catalogue row."""
    hist = history(repo, commit, path)
    if not hist:
        return "", NO_DATE.format(why=f"{path} has no history at {commit[:7]}")
    setter, constraint, checked = None, None, None
    for sha, date, subject, p in hist:  # newest first: walk back while the price is listed
        entry = models_at(repo, sha, p).get(model_id) or {}
        ok, c = lists_price(entry.get("prices"), inp, out)
        if not ok:
            break
        setter, constraint, checked = (sha, date, subject), c, entry.get("prices_checked")
    if setter is None:
        return "", NO_DATE.format(why=f"model id {model_id} at {inp}/{out} not found at {commit[:7]}")
    sha, date, subject = setter
    subject = subject.replace("'", "").replace('"', "")[:80]
    src = f"genai-prices commit {sha[:7]} '{subject}' {date}"
    if sha == hist[-1][0]:
        src += " (the file's first commit: the price may be older)"
    start = (constraint or {}).get("start_date") if isinstance(constraint, dict) else None
    if start:
        return str(start)[:10], f"genai-prices start_date constraint {str(start)[:10]} on this price; {src}"
    if checked and str(checked)[:10] < date:  # the contributor saw the price in effect before the merge
        return str(checked)[:10], f"prices_checked {str(checked)[:10]} recorded by {src}"
    return date, src


#: api_prices.csv model -> (llm-prices vendor file, model id) for rows dated by a snapshot listing.
LLM_PRICES_IDS = {
    "GPT-5.5": ("openai", "gpt-5.5"),
    "Claude Opus 4.5/4.6/4.7": ("anthropic", "claude-opus-4-5"),  # the first Opus at 5/25
    "Gemini 3 Pro preview": ("google", "gemini-3-pro-preview"),
    "Gemini 3.5 Flash": ("google", "gemini-3.5-flash"),
    "Qwen3.6-plus": ("qwen", "qwen3.6-plus"),
}


def llm_prices_row(repo: str, vendor: str, model_id: str, inp: float, out: float) -> tuple[str, str]:
    """(price_effective_date, date_source): the first llm-prices commit listing the price."""
    import json

    path = f"data/{vendor}.json"
    broken = None  # a commit adding the model in a file that did not parse (fixed by a later one)
    for sha, date, subject, p in reversed(history(repo, "HEAD", path)):  # oldest first
        try:
            text = _git(repo, "show", f"{sha}:{p}")
            doc = json.loads(text)
        except subprocess.CalledProcessError:
            continue
        except ValueError:
            if broken is None and f'"{model_id}"' in text:
                broken = (sha, date, subject)
            continue
        if broken is not None and not any(m.get("id") == model_id for m in doc.get("models", [])):
            broken = None
        if broken is not None:
            sha, date, subject = broken[0], broken[1], broken[2] + " (JSON fixed by a later commit)"
        for m in doc.get("models", []):
            if m.get("id") != model_id:
                continue
            for h in m.get("price_history", []):
                if _same(h.get("output"), out) and _same(h.get("input"), inp):
                    subject = subject.replace("'", "").replace('"', "")[:80]
                    src = f"llm-prices commit {sha[:7]} '{subject}' {date} ({model_id})"
                    if h.get("from_date"):
                        return str(h["from_date"])[:10], f"llm-prices from_date {h['from_date']}; {src}"
                    return date, src
    return "", NO_DATE.format(why=f"{model_id} at {inp}/{out} not in {path}")


def date_api_prices(repo: str, dst: str = "tokenomics/datasets/api_prices.csv") -> None:
    df = pd.read_csv(dst, dtype=str, keep_default_na=False)
    eff, why = [], []
    for r in df.itertuples(index=False):
        if "llm-prices" in r.source and "listing date" in r.note and r.model in LLM_PRICES_IDS:
            e, s = llm_prices_row(repo, *LLM_PRICES_IDS[r.model], float(r.input_usd_per_m_tok),
                                  float(r.output_usd_per_m_tok))
        else:
            e, s = "", "date column: the provider's or the source's own date for this price"
        eff.append(e)
        why.append(s)
    _write(df, eff, why, dst)
    print(f"api_prices: {sum(bool(e) for e in eff)} snapshot-dated rows dated by the change that set the price")


def _write(df: pd.DataFrame, eff: list[str], why: list[str], dst: str) -> None:
    import os

    df = df.drop(columns=[c for c in ("price_effective_date", "date_source") if c in df.columns])
    df["price_effective_date"] = eff
    df["date_source"] = why
    cols = [c for c in df.columns if c not in ("price_effective_date", "date_source")]
    at = cols.index("as_of") + 1
    df = df[cols[:at] + ["price_effective_date", "date_source"] + cols[at:]]
    tmp = dst + ".tmp"
    df.to_csv(tmp, index=False)
    os.replace(tmp, dst)


def main(repo: str, llm_prices_repo: str | None = None, dst: str = DST) -> None:
    df = pd.read_csv(dst, dtype=str, keep_default_na=False)
    eff, why = [], []
    for r in df.itertuples(index=False):
        m = SRC_RE.search(r.source)
        if not m:
            eff.append("")
            why.append("not from a price catalogue: the row's date is its source's own date"
                       if r.date else "not from a price catalogue; no date but as_of")
            continue
        commit, path, model_id = m.group(1), m.group(2), m.group(3).strip()
        inp = float(r.input_usd_per_m_tok) if r.input_usd_per_m_tok else float("nan")
        e, s = date_row(repo, commit, path, model_id, inp, float(r.output_usd_per_m_tok))
        eff.append(e)
        why.append(s)
    _write(df, eff, why, dst)
    df = pd.read_csv(dst, dtype=str, keep_default_na=False)
    cat = df["source"].str.contains("genai-prices")
    dated = cat & (df["price_effective_date"] != "")
    lag = (pd.to_datetime(df.loc[dated, "as_of"]) - pd.to_datetime(df.loc[dated, "price_effective_date"])).dt.days
    print(f"{int(cat.sum())} catalogue rows, {int(dated.sum())} dated by the change that set the price; "
          f"as_of minus effective date: median {lag.median():.0f} days, max {lag.max():.0f} -> {dst}")
    if llm_prices_repo:
        date_api_prices(llm_prices_repo)


if __name__ == "__main__":
    main(*sys.argv[1:])

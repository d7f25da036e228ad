"""Fill the ``definition`` and ``kind`` columns of tokenomics/datasets/token_demand.csv (run once).

    python tools/fill_definitions.py

``definition`` names what a figure counts (scope, and who measured it); a series whose
definition changes gets its level shift estimated at the change (tokenomics.forecast.measurement).
``kind`` says how the figure was published (datasets/measurement_kinds.csv), joined with ``+``:
``reported`` (the entity's own figure), ``lower_bound`` ("over X", read as X), ``estimate`` (a third
party's estimate), ``derived`` (computed from a stated growth rate, period total or share) and
``secondary`` (read in press or digests, not in the primary). Read from each row's metric and note;
the rows whose reading needs judgement are set by hand below (the reason beside each).
"""

import re
from pathlib import Path

import pandas as pd

PATH = Path(__file__).resolve().parent.parent / "tokenomics" / "datasets" / "token_demand.csv"

#: One definition per series unless stated otherwise in BY_HAND.
DEFINITIONS = {
    "china": "national daily token consumption (National Data Administration)",
    "doubao": "Doubao model tokens a day (Volcano Engine / ByteDance)",
    "google": "tokens processed across Google products (Alphabet)",
    "google-gemini-api": "Gemini direct API tokens (Alphabet)",
    "microsoft": "tokens processed by Azure AI Foundry (Microsoft)",
    "minimax": "MiniMax model tokens a day (MiniMax)",
    "openai": "OpenAI API tokens (OpenAI)",
    "openrouter": "tokens routed by OpenRouter, prompt + completion (OpenRouter rankings)",
    "openrouter-china": "weekly tokens of Chinese-developed models on OpenRouter (OpenRouter rankings)",
    "qwen": "Qwen model tokens a day (third-party estimate)",
    "yuanbao": "Yuanbao model tokens a day (third-party estimate)",
    "fireworks": "tokens processed on the Fireworks inference cloud (Fireworks AI)",
    "china-enterprise": "Chinese enterprises' LLM daily tokens (Frost & Sullivan survey)",
    "china-maas-idc": "Chinese public-cloud MaaS tokens to external customers (IDC)",
}

#: (series, date) -> (definition or None to keep the series', kind), where the text needs judgement.
BY_HAND = {
    # the 500 T figure is CCTV's "大模型日均词元调用量" (daily token calls), reported by IT之家 without
    # a month; no NDA text gives it; 3.6x the NDA's March figure in three months while Doubao, the
    # largest platform, grew 1.5x: counted on another basis than the NDA's series
    ("china", "2026-06"): ("national daily token calls (CCTV report; basis not stated)", "lower_bound+secondary"),
    ("doubao", "2025-12"): (None, "estimate"),
    # "over 10x" in the note qualifies the later figure, not this one
    ("doubao", "2024-12-18"): (None, "reported"),
    # "about 30 trillion"; the "more than 10 trillion" in the note is another outlet's reading
    ("fireworks", "2026-05-27"): (None, "secondary"),
    # derived from "up more than 7x": an upper bound, not a lower one
    ("microsoft", "2023-12-31"): (None, "derived"),
}


def kind_of(metric: str, note: str, source: str) -> str:
    """The kinds a row's metric, note and source text state (see the module docstring)."""
    text = f"{metric} {note}".lower()
    kinds = []
    if "(estimate)" in metric or "third-party institution estimate" in text:
        kinds.append("estimate")
    if note.lower().startswith("derived") or "annualized" in text or "annualised" in text:
        kinds.append("derived")
    if re.search(r'"(over|more than) |">|\bover \d|more than \d|trillion\+|lower bound|突破', note, re.I) \
            and "estimate" not in kinds:
        kinds.append("lower_bound")
    if re.search(r"secondary|tertiary|github-stored|digest|claimed", f"{note} {source}", re.I):
        kinds.append("secondary")
    return "+".join(kinds) or "reported"


def main() -> None:
    d = pd.read_csv(PATH, dtype=str, keep_default_na=False)
    d["definition"] = [DEFINITIONS[s] for s in d["series"]]
    d["kind"] = [kind_of(m, n, s) for m, n, s in zip(d["metric"], d["note"], d["source"])]
    for (series, date), (definition, kind) in BY_HAND.items():
        row = (d["series"] == series) & (d["date"] == date)
        assert row.sum() == 1, (series, date)
        if definition is not None:
            d.loc[row, "definition"] = definition
        d.loc[row, "kind"] = kind
    d.to_csv(PATH, index=False)
    print(d.groupby("kind").size().to_string())


if __name__ == "__main__":
    main()

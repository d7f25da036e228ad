"""Disaggregated prefill/decode serving versus co-located serving (the HC2000 argument).

Inspur's HC2000 runs prefill on high-performance chips and decode on cost-effective chips and
claims 10x token capacity at the same capex. Per request of ``input_tok`` in and ``output_tok``
out, at one request per second:

    prefill chips   n_p = input_tok  / prefill_tok_s(P)
    decode chips    n_d = output_tok / decode_tok_s(D)
    co-located      n_c = input_tok / prefill_tok_s(P) + output_tok / decode_tok_s(P)

(co-located chips time-slice both phases; interference between them is ignored, which favours
co-location and so makes the test of the claim conservative). Token capacity at equal capex is
the ratio of the capex of the two fleets. The capex the decode fleet may cost for a target
capacity ratio ``k`` is ``capex_c / k - n_p * capex_P``; if that is <= 0 no decode chip can
deliver ``k`` -- prefill alone is already too expensive.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validate as v
from .._display import Display
from .pricing import price_usd_per_1k_tok


def chip_s_per_request(prefill_tok_per_s: Any, decode_tok_per_s: Any, input_tok: Any,
                       output_tok: Any) -> np.ndarray:
    """Chip time one request takes when its prompt and its output share the chips [s].

    ``input_tok / prefill_tok_per_s + output_tok / decode_tok_per_s``: the chips time-slice the
    two phases, each at its own throughput per chip (interference between them ignored).

    Parameters
    ----------
    prefill_tok_per_s, decode_tok_per_s : float or array
        Prompt and output tokens/s of one chip [tokens/s].
    input_tok, output_tok : float or array
        Tokens per request.

    Examples
    --------
    1,000 prompt tokens at 10,000 tok/s and 100 output tokens at 1,000 tok/s: 0.1 + 0.1 s.

    >>> float(chip_s_per_request(10_000, 1_000, 1_000, 100))
    0.2
    """
    v.positive(prefill_tok_per_s, "prefill_tok_per_s")
    v.positive(decode_tok_per_s, "decode_tok_per_s")
    v.non_negative(input_tok, "input_tok")
    v.non_negative(output_tok, "output_tok")
    return (np.asarray(input_tok, float) / np.asarray(prefill_tok_per_s, float)
            + np.asarray(output_tok, float) / np.asarray(decode_tok_per_s, float))


@dataclass(frozen=True, repr=False)
class DisaggResult(Display):
    """Disaggregated versus co-located serving of one workload (per 1 request/s).

    All arrays broadcast over the inputs. ``to_frame()`` has one row per configuration.
    """

    prefill_hardware: str
    decode_hardware: str
    input_tok: Any
    output_tok: Any
    n_prefill_chips: Any
    n_decode_chips: Any
    n_colocated_chips: Any
    instance_ratio: Any  # prefill chips per decode chip
    capex_disagg_usd: Any
    capex_colocated_usd: Any
    capacity_ratio_same_capex: Any  # disaggregated output tokens per capex $ / co-located
    cost_disagg_usd_per_1k_output_tok: Any
    cost_colocated_usd_per_1k_output_tok: Any
    target_ratio: float
    max_decode_capex_usd_per_chip_for_target: Any  # NaN where impossible
    required_decode_tok_per_s_per_usd_ratio: Any  # D chip decode tok/s per capex $ vs P chip, needed
    prefill_share_of_colocated_capex_frac: Any

    def to_frame(self):
        import pandas as pd

        cols = {k: np.ravel(np.asarray(getattr(self, k))) for k in (
            "input_tok", "output_tok", "n_prefill_chips", "n_decode_chips", "n_colocated_chips",
            "instance_ratio", "capex_disagg_usd", "capex_colocated_usd", "capacity_ratio_same_capex",
            "cost_disagg_usd_per_1k_output_tok", "cost_colocated_usd_per_1k_output_tok",
            "max_decode_capex_usd_per_chip_for_target", "required_decode_tok_per_s_per_usd_ratio",
            "prefill_share_of_colocated_capex_frac")}
        n = max(len(c) for c in cols.values())
        df = pd.DataFrame({k: np.broadcast_to(c, (n,)) for k, c in cols.items()})
        df.insert(0, "decode_hardware", self.decode_hardware)
        df.insert(0, "prefill_hardware", self.prefill_hardware)
        df["target_ratio"] = self.target_ratio
        df["target_possible"] = np.isfinite(df["max_decode_capex_usd_per_chip_for_target"])
        from ..units import per_million

        return per_million(df)  # USD per million output tokens

    def what_must_be_true(self) -> str:
        """One sentence per configuration: what a ``target_ratio``x capacity claim requires."""
        df = self.to_frame()
        out = []
        for r in df.itertuples():
            if not r.target_possible:
                out.append(
                    f"{self.target_ratio:g}x is impossible for {int(r.input_tok)}/{int(r.output_tok)}: "
                    f"prefill on {self.prefill_hardware} alone is {r.prefill_share_of_colocated_capex_frac:.0%} "
                    f"of the co-located capex (must be < {1 / self.target_ratio:.0%})")
            else:
                out.append(
                    f"{self.target_ratio:g}x needs decode chips giving {r.required_decode_tok_per_s_per_usd_ratio:.1f}x "
                    f"the decode tokens/s per capex dollar of {self.prefill_hardware} "
                    f"(model gives {r.capacity_ratio_same_capex:.2f}x capacity with {self.decode_hardware})")
        return "\n".join(out)


def compare(prefill_tok_per_s_p: Any, decode_tok_per_s_p: Any, decode_tok_per_s_d: Any,
            capex_p_usd: Any, capex_d_usd: Any, cost_p_usd_per_h: Any, cost_d_usd_per_h: Any,
            input_tok: Any, output_tok: Any, *, prefill_hardware: str = "P",
            decode_hardware: str = "D", target_ratio: float = 10.0,
            colocated_chip_s_per_request: Any = None) -> DisaggResult:
    """Compare disaggregated (prefill on P, decode on D) with co-located serving on P.

    Parameters
    ----------
    prefill_tok_per_s_p : float or array
        Prompt tokens/s one P chip prefills [tokens/s].
    decode_tok_per_s_p, decode_tok_per_s_d : float or array
        Output tokens/s of one P chip and one D chip while decoding [tokens/s].
    capex_p_usd, capex_d_usd : float or array
        All-in capex per chip [USD].
    cost_p_usd_per_h, cost_d_usd_per_h : float or array
        All-in cost per chip-hour [USD/h].
    input_tok, output_tok : float or array
        Tokens per request.
    target_ratio : float
        Capacity ratio to test (10 for the HC2000 claim).
    colocated_chip_s_per_request : float or array, optional
        P-chip seconds one request takes co-located [s] (e.g. from the serving model, where
        prompts share the decode iterations); default the two phases time-sliced,
        :func:`chip_s_per_request` (interference ignored).
    """
    for name, x in (("prefill_tok_per_s_p", prefill_tok_per_s_p), ("decode_tok_per_s_p", decode_tok_per_s_p),
                    ("decode_tok_per_s_d", decode_tok_per_s_d), ("capex_p_usd", capex_p_usd),
                    ("capex_d_usd", capex_d_usd), ("cost_p_usd_per_h", cost_p_usd_per_h),
                    ("cost_d_usd_per_h", cost_d_usd_per_h), ("output_tok", output_tok),
                    ("target_ratio", target_ratio)):
        v.positive(x, name)
    v.non_negative(input_tok, "input_tok")
    a = lambda x: np.asarray(x, float)  # noqa: E731
    pp, dp, dd = a(prefill_tok_per_s_p), a(decode_tok_per_s_p), a(decode_tok_per_s_d)
    cp, cd, hp, hd = a(capex_p_usd), a(capex_d_usd), a(cost_p_usd_per_h), a(cost_d_usd_per_h)
    i, o = a(input_tok), a(output_tok)
    n_p, n_d = i / pp, o / dd
    n_c = chip_s_per_request(pp, dp, i, o) if colocated_chip_s_per_request is None else a(
        v.positive(colocated_chip_s_per_request, "colocated_chip_s_per_request"))
    capex_dis = n_p * cp + n_d * cd
    capex_col = n_c * cp
    cap_ratio = capex_col / capex_dis
    # a request's chip-seconds in each pool times $/chip-h, spread over its o output tokens
    cost_dis = price_usd_per_1k_tok(n_p * hp + n_d * hd, o)
    cost_col = price_usd_per_1k_tok(n_c * hp, o)
    budget = capex_col / target_ratio - n_p * cp
    possible = budget > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        max_capex_d = np.where(possible, budget / n_d, np.nan)
        need_tok_per_usd = np.where(possible, o / budget, np.nan)
    ratio_needed = need_tok_per_usd / (dp / cp)
    return DisaggResult(prefill_hardware, decode_hardware, i, o, n_p, n_d, n_c, n_p / n_d, capex_dis,
                        capex_col, cap_ratio, cost_dis, cost_col, float(target_ratio), max_capex_d,
                        ratio_needed, n_p * cp / capex_col)

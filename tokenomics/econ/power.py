"""Board power as a function of the work: idle plus memory and compute activity, capped at TDP.

    board_power_w = min(idle_w + hbm_coef_w * hbm_util_frac + flop_coef_w * flop_util_frac, tdp_w)

``hbm_util_frac`` is achieved HBM bytes/s over the datasheet bandwidth and ``flop_util_frac``
achieved FLOP/s over the datasheet dense peak, as the performance core reports them. The three
coefficients are fitted (non-negative least squares on relative error, :func:`fit_power_model`)
on the measured H200 rows of ``datasets/h200_microbench.csv``: idle, four CUDA-graph decode runs,
a copy loop and a GEMM loop. The fitted values are stored in ``datasets/power_model.csv`` and a
test refits them.

Host-bound steps: the utilizations are averages over the whole step (bytes and FLOP of the step
over step time x datasheet rate), so a step that is busy on the GPU for ``gpu_s`` of ``step_s``
(an eager decode waiting on kernel launches) draws, by linearity,
``(gpu_s * P_active + (step_s - gpu_s) * idle_w) / step_s``: idle power in the host-bound gap,
not busy power (tests/market/test_market.py checks the identity on an H200 eager step, which lands at
~200 W against the 395 W measured for a CUDA-graph batch-1 decode). In a multi-chip step,
exposed communication scales both utilizations by the compute share as well (``chain.price``).
Chip-hours not sold draw idle power (``chain.price`` with ``utilization_frac`` < 1).

Other accelerators: *transfer assumption* -- idle power and both coefficients scale with TDP
(the H200's values as fractions of its 700 W). This is documented, not measured.

Examples
--------
>>> pm = power_model("h200")
>>> 140 < float(pm.board_power_w(0.0, 0.0)) < 160      # idle, measured 148 W
True
"""

from __future__ import annotations

import functools

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validate as v
from ..errors import DataError, ValidationError


@dataclass(frozen=True)
class PowerModel:
    """Workload-dependent board power of one accelerator.

    Parameters
    ----------
    hardware : str
        Accelerator name.
    idle_w : float
        Board power with nothing running [W].
    hbm_coef_w : float
        Extra power at 100 % of datasheet HBM bandwidth [W].
    flop_coef_w : float
        Extra power at 100 % of the datasheet dense FLOP/s [W].
    tdp_w : float
        Board power limit [W]; the model is capped there.
    fitted_on : str
        Which measurements the coefficients come from (or the transfer rule used).
    """

    hardware: str
    idle_w: float
    hbm_coef_w: float
    flop_coef_w: float
    tdp_w: float
    fitted_on: str = ""

    def __post_init__(self) -> None:
        v.positive(self.idle_w, "idle_w")
        v.non_negative(self.hbm_coef_w, "hbm_coef_w")
        v.non_negative(self.flop_coef_w, "flop_coef_w")
        v.positive(self.tdp_w, "tdp_w")
        if self.idle_w > self.tdp_w:
            raise ValidationError(f"idle_w ({self.idle_w:g}) exceeds tdp_w ({self.tdp_w:g})")

    def board_power_w(self, hbm_util_frac: Any, flop_util_frac: Any) -> np.ndarray:
        """Board power for given utilizations [W] (broadcasts; capped at ``tdp_w``).

        Parameters
        ----------
        hbm_util_frac, flop_util_frac : float or array
            Achieved fractions of datasheet bandwidth and dense FLOP/s [0-1].
        """
        v.fraction(hbm_util_frac, "hbm_util_frac")
        v.fraction(flop_util_frac, "flop_util_frac")
        p = (self.idle_w + self.hbm_coef_w * np.asarray(hbm_util_frac, dtype=float)
             + self.flop_coef_w * np.asarray(flop_util_frac, dtype=float))
        out = np.minimum(p, self.tdp_w)
        return out if np.ndim(out) else float(out)

    def scaled_to(self, hardware: str, tdp_w: float) -> "PowerModel":
        """Transfer to another accelerator by TDP (idle and coefficients as fractions of TDP)."""
        v.positive(tdp_w, f"{hardware}.tdp_w")
        k = float(tdp_w) / self.tdp_w
        return PowerModel(hardware, self.idle_w * k, self.hbm_coef_w * k, self.flop_coef_w * k,
                          float(tdp_w), fitted_on=f"TDP-scaled from {self.hardware} (transfer assumption)")

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame([{"hardware": self.hardware, "idle_w": self.idle_w,
                              "hbm_coef_w": self.hbm_coef_w, "flop_coef_w": self.flop_coef_w,
                              "tdp_w": self.tdp_w, "fitted_on": self.fitted_on}])


def h200_power_observations():
    """The measured H200 power rows with the utilizations they imply.

    Decode rows: step time from the tok/s measured with the power (``note`` column), bytes per
    step = weights except the embedding table (bf16) + the KV cache read
    (``batch * context * kv_bytes_per_tok``); FLOP per step = ``2 * params * batch`` + attention
    ``4 * n_layers * n_q_heads * head_dim * context * batch``; architectures from
    ``datasets/h200_cases.csv``. Copy: 4.22 TB/s over 4.8 TB/s. GEMM: 664 TFLOP/s over 989.4
    (and 3 x 134 MB per 8192^3 matmul of HBM traffic). Idle: both zero.

    Returns
    -------
    pandas.DataFrame
        experiment, description, hbm_util_frac, flop_util_frac, board_power_w, tok_per_s_per_chip.
    """
    import re

    import pandas as pd

    from .. import catalog

    mb = catalog.load("h200_microbench")
    cases = catalog.load("h200_cases")
    hw = catalog.accelerator("h200")
    bw, peak = hw.hbm_bytes_per_s, hw.peak_bf16_flop_per_s
    rows = []
    for _, r in mb[mb["experiment"].str.startswith("power_")].iterrows():
        note, desc = str(r.get("note", "")), str(r["description"])
        hbm = flop = 0.0
        tok_s = float("nan")
        if r["experiment"] == "power_decode":
            m = re.search(r"([\d.]+) tok/s", note)
            model = re.search(r"(dense-\d+b)", desc).group(1)
            batch = int(re.search(r"batch (\d+)", desc).group(1))
            ctx = int(re.search(r"context (\d+)", desc).group(1))
            if not m:
                raise DataError(f"power_decode row without tok/s in note: {note!r}")
            tok_s = float(m.group(1))
            a = cases[cases["model"] == model].iloc[0]
            step_s = batch / tok_s
            params = float(a["total_params"]) - float(a["vocab"]) * float(a["hidden"])
            kv_per_tok = 2 * a["n_kv_heads"] * a["head_dim"] * a["kv_bytes_per_elem"] * a["n_layers"]
            bytes_ = params * a["weight_bytes_per_param"] + batch * ctx * kv_per_tok
            flop_ = 2 * params * batch + 4 * a["n_layers"] * a["n_q_heads"] * a["head_dim"] * ctx * batch
            hbm, flop = bytes_ / step_s / bw, flop_ / step_s / peak
        elif r["experiment"] == "power_copy":
            hbm = float(re.search(r"([\d.]+) TB/s", note).group(1)) * 1e12 / bw
        elif r["experiment"] == "power_gemm":
            tflops = float(re.search(r"([\d.]+) TFLOP/s", note).group(1)) * 1e12
            flop = tflops / peak
            n = 8192
            hbm = 3 * n * n * 2 / (2 * n**3 / tflops) / bw
        rows.append({"experiment": r["experiment"], "description": desc, "hbm_util_frac": hbm,
                     "flop_util_frac": flop, "board_power_w": float(r["value"]), "tok_per_s_per_chip": tok_s})
    return pd.DataFrame(rows)


def fit_power_model(hbm_util_frac: Any, flop_util_frac: Any, board_power_w: Any, *,
                    hardware: str = "h200", tdp_w: float = 700.0, fitted_on: str = "") -> PowerModel:
    """Fit ``idle + a*hbm + b*flop`` by non-negative least squares on relative error (scipy).

    Parameters
    ----------
    hbm_util_frac, flop_util_frac : array
        Utilizations of each measurement [0-1].
    board_power_w : array
        Measured board power [W].

    Returns
    -------
    PowerModel
    """
    from scipy.optimize import lsq_linear

    h = np.asarray(hbm_util_frac, dtype=float)
    f = np.asarray(flop_util_frac, dtype=float)
    p = np.asarray(board_power_w, dtype=float)
    v.positive(p, "board_power_w")
    if p.size < 3:
        raise ValidationError(f"need at least 3 measurements to fit 3 coefficients, got {p.size}")
    A = np.column_stack([np.ones_like(h), h, f]) / p[:, None]
    res = lsq_linear(A, np.ones_like(p), bounds=(0, np.inf))
    idle, a, b = (float(x) for x in res.x)
    return PowerModel(hardware, idle, a, b, float(tdp_w), fitted_on=fitted_on)


def fit_h200() -> PowerModel:
    """Refit the H200 power model on the measured rows (what ``datasets/power_model.csv`` holds)."""
    obs = h200_power_observations()
    from .. import catalog

    return fit_power_model(obs["hbm_util_frac"], obs["flop_util_frac"], obs["board_power_w"],
                           hardware="h200", tdp_w=catalog.accelerator("h200").tdp_w,
                           fitted_on="datasets/h200_microbench.csv power_* rows (idle, decode x4, copy, gemm)")


def power_model(hardware: Any) -> PowerModel:
    """The power model of an accelerator: fitted where measured, else TDP-scaled from the H200.

    Parameters
    ----------
    hardware : str or Accelerator
        Catalog name or spec.
    """
    from .. import catalog
    from ..specs import Accelerator

    acc = hardware if isinstance(hardware, Accelerator) else catalog.accelerator(hardware)
    return _power_model(acc, str(catalog.data_dir()))


@functools.lru_cache(maxsize=128)
def _power_model(acc: Any, _dir: str) -> PowerModel:
    from .. import catalog

    df = catalog.load("power_model")
    if acc.name in df.index:
        r = df.loc[acc.name]
        return PowerModel(acc.name, float(r["idle_w"]), float(r["hbm_coef_w"]),
                          float(r["flop_coef_w"]), float(r["tdp_w"]), str(r["fitted_on"]))
    ref = df.loc["h200"]
    base = PowerModel("h200", float(ref["idle_w"]), float(ref["hbm_coef_w"]),
                      float(ref["flop_coef_w"]), float(ref["tdp_w"]), str(ref["fitted_on"]))
    tdp = acc.tdp_w
    if tdp is None or math.isnan(tdp):
        from .tco import param

        tdp = param("tdp_w", acc.name, default=float("nan"))
    if math.isnan(tdp):
        raise DataError(
            f"accelerator {acc.name!r} has no tdp_w in datasets/accelerators.csv or tco_params.csv; "
            "the power model scales by TDP. Hint: pass power=PowerModel(...) or board_power_w="
        )
    return base.scaled_to(acc.name, tdp)

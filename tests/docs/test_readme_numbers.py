"""Every number of the README's answers and accuracy tables is a pinned golden figure, rounded as
shown: a model change that moves a figure fails here until the README says the new number.
(tests/house/test_golden.py checks the pinned figures against the model; tests/docs/test_readme.py runs the
README's transcripts.)"""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
GOLDEN = json.loads((ROOT / "tests" / "golden" / "headline.json").read_text())
G = GOLDEN.get


def _dataset_value(name: str, parameter: str) -> float:
    """A sourced figure the README quotes beside the model's (a published forecast, not pinned)."""
    from tokenomics import catalog

    df = catalog.load(name)
    return float(df.loc[df["parameter"] == parameter, "value"].iloc[0])

def _demand_row(series: str, date: str) -> float:
    """A published token volume of ``datasets/token_demand.csv`` [tokens/day]."""
    from tokenomics import catalog

    df = catalog.load("token_demand")
    return float(df.loc[(df["series"] == series) & (df["date"] == date), "tokens_per_day"].iloc[0])


def _default_concurrency() -> int:
    """Requests in flight the default price assumes (one attention group: the library's constant)."""
    from tokenomics.chain import DEFAULT_BATCH_PER_ATTN_GROUP

    return int(DEFAULT_BATCH_PER_ATTN_GROUP)


#: The second and third sealed sets (docs/validation/sealed.md).
SEALED_B = "2026-12b"
SEALED_C = "2026-12c"
SEALED_D = "2026-12d"  # TPU
SEALED_E = "2026-12e"
SEALED_F = "2026-12f"
SEALED_G = "2026-12g"
SEALED_H = "2026-12h"
SEALED_I = "2026-12i"
SEALED_J = "2026-12j"
SEALED_K = "2026-12k"
SEALED_L = "2026-12l"


def _third_party_band() -> tuple[float, float]:
    """The third-party band as predicted/measured factors (datasets/third_party_band.csv)."""
    import numpy as np

    from tokenomics.errorband import load_third_party_band

    return tuple(float(x) for x in np.exp(load_third_party_band()))


def _pooled_inside() -> str:
    """Runs inside the band, runs, and the share [%], pooled over the sealed sets scored once after every
    band spanned third parties' runs (2026-12e to 2026-12l), from their recorded scores."""
    n = inside = 0
    for score in (SEALED_E, SEALED_F, SEALED_G, SEALED_H, SEALED_I, SEALED_J, SEALED_K, SEALED_L):
        s = _sealed(score=score)
        n += s["n"]
        inside += round(s["inside"] * s["n"])
    return f"{inside} {n} {100 * inside / n:.0f}"


#: The sealed sets scored on this release's serving model (no serving-model change since 2026-12h's score), and
#: their publications as docs/validation/sealed.md lists them (a publication may cite two commits in ``source``).
RELEASE_SEALED = {"2026-12h": 3, "2026-12i": 6, "2026-12j": 1, "2026-12k": 5, "2026-12l": 3}


def _release_sealed(keys: str) -> str:
    """Pooled recorded scores of :data:`RELEASE_SEALED`: ``n`` runs with an output rate, ``pubs`` publications
    (:data:`RELEASE_SEALED`), ``median`` |pred/meas - 1| [%], median ``ratio``, runs ``inside`` the band and
    ``inside_pct``."""
    import json

    import pandas as pd

    frames = []
    for score in RELEASE_SEALED:
        d = pd.DataFrame(json.loads((ROOT / "docs" / "validation" / f"sealed_score_{score}.json").read_text()))
        frames.append(d)
    d = pd.concat(frames, ignore_index=True)
    pubs = sum(RELEASE_SEALED.values())
    d = d[(d["status"] != "refused") & d["measured_output_tok_per_s_per_gpu"].notna()]
    ratio = d["predicted_output_tok_per_s_per_gpu"] / d["measured_output_tok_per_s_per_gpu"]
    inside = int(((d["measured_output_tok_per_s_per_gpu"] >= d["predicted_output_tok_per_s_per_gpu_lo"])
                  & (d["measured_output_tok_per_s_per_gpu"] <= d["predicted_output_tok_per_s_per_gpu_hi"])).sum())
    v = {"n": f"{len(d)}", "pubs": f"{pubs}", "median": f"{(ratio - 1).abs().median() * 100:.0f}",
         "ratio": f"{ratio.median():.2f}", "inside": f"{inside}", "inside_pct": f"{100 * inside / len(d):.0f}"}
    return " ".join(v[k] for k in keys.split())


def _inside_of(score: str) -> str:
    """``inside n``: a sealed set's runs inside the band and its runs with an output rate (recorded score)."""
    s = _sealed(score=score)
    return f"{round(s['inside'] * s['n'])} {s['n']}"


def _per_user_ratio(score: str, model: str) -> float:
    """Median predicted/measured per-user rate of a sealed set's rows of ``model`` (recorded score)."""
    import json

    import pandas as pd

    d = pd.DataFrame(json.loads((ROOT / "docs" / "validation" / f"sealed_score_{score}.json").read_text()))
    d = d[d["model"] == model]
    return float((d["predicted_tok_per_s_per_user"] / d["measured_tok_per_s_per_user"]).median())


def _sealed(phase: str | None = None, dense: bool | None = None, score: str = "2026-12",
            model: str | None = None, engine: str | None = None) -> dict[str, float]:
    """A sealed set's one recorded score (docs/validation/sealed_score_<score>.json, written when
    the set was first scored; never re-scored here, so no change is judged on it): rows, median
    |pred/meas - 1|, median pred/meas and the share inside the 80 % band, of a subset."""
    import json

    import pandas as pd

    d = pd.DataFrame(json.loads((ROOT / "docs" / "validation" / f"sealed_score_{score}.json").read_text()))
    n_all = len(d)
    d = d[d["status"] != "refused"]  # scored on the rows predicted; refused rows are counted apart
    d = d[d["measured_output_tok_per_s_per_gpu"].notna()]  # rows stating only a per-user rate
    if phase is not None:
        d = d[d["phase"] == phase]
    if dense is not None:
        d = d[(d["model"] == "llama-3.1-405b") == dense]
    if model is not None:
        d = d[d["model"] == model]
    if engine is not None:
        d = d[d["engine"] == engine]
    ratio = d["predicted_output_tok_per_s_per_gpu"] / d["measured_output_tok_per_s_per_gpu"]
    inside = ((d["measured_output_tok_per_s_per_gpu"] >= d["predicted_output_tok_per_s_per_gpu_lo"])
              & (d["measured_output_tok_per_s_per_gpu"] <= d["predicted_output_tok_per_s_per_gpu_hi"]))
    return {"n": len(d), "n_all": n_all, "median": float((ratio - 1).abs().median()), "ratio": float(ratio.median()),
            "p90": float((ratio - 1).abs().quantile(0.9)), "inside": float(inside.mean()), "max_ratio": float(ratio.max())}


#: (text as the README writes it, the value it must equal) - each value from a pinned figure
FIGURES = [
    ("USD 0.143 per million, served co-located at 32 requests in flight",
     f"{G('price.h200.llama-3.1-8b.colocated.c32.usd_per_m_output_tok'):.3f} {_default_concurrency()}", "0.143 32"),
    ("0.116 J per token", f"{G('price.h200.llama-3.1-8b.colocated.c32.energy_j_per_tok'):.3f}", "0.116"),
    ("USD 0.097 per million output tokens on a GB200 NVL72",
     f"{G('floor.gb200-nvl72.usd_per_1k_output_tok') * 1e3:.3f}", "0.097"),
    ("0.148 on a CloudMatrix 384", f"{G('floor.cloudmatrix-384.usd_per_1k_output_tok') * 1e3:.3f}", "0.148"),
    ("TPU v7 megakernel 673 vs 709 tok/s", f"{G('showdown.tpu-v7-16.tok_per_s_per_user.predicted'):.0f}", "673"),
    ("16 x GB200 454 vs 452", f"{G('showdown.gb200-16.tok_per_s_per_user.predicted'):.0f}", "454"),
    ("SD200 supernode 5.85 vs 5.85 ms/token", f"{G('showdown.sd200-ultra.step_time_s.predicted') * 1e3:.2f}", "5.85"),
    ("unoptimized supernode 10.0 vs 10 tok/s",
     f"{G('showdown.generic-supernode-128.tok_per_s_per_user.predicted'):.1f}", "10.0"),
    ("USD 1.87 per million on the TPU v7 megakernel",
     f"{G('showdown_costs.tpu-v7-16.b64.usd_per_m_output_tok'):.2f}", "1.87"),
    ("3.64 on 16 x GB200", f"{G('showdown_costs.gb200-16.b64.usd_per_m_output_tok'):.2f}", "3.64"),
    ("17.7 on the SD200 supernode", f"{G('showdown_costs.sd200-ultra.b64.usd_per_m_output_tok'):.1f}", "17.7"),
    ("148 list prices", f"{G('market.served.n_priced'):.0f}", "148"),
    ("(10 more at speeds no modelled H200 system reaches)", f"{G('market.served.n_unreachable'):.0f}", "10"),
    ("median implied gross margin 35 %", f"{G('market.served.median_implied_margin_frac') * 100:.0f}", "35"),
    ("(-5 % without speculative decoding)", f"{G('market.median_implied_margin_frac') * 100:.0f}", "-5"),
    ("0.90x a year (95 % interval 0.54-1.48, 194 prices",
     f"{G('watch.price_index.decline_factor_per_year'):.2f} {G('watch.price_index.decline_factor_lo'):.2f} "
     f"{G('watch.price_index.decline_factor_hi'):.2f} {G('watch.price_index.n_prices'):.0f}", "0.90 0.54 1.48 194"),
    ("falls 5.4x a year at 20 tok/s per user, 61x at 35 and 104x at 50",
     " ".join(f"{G(f'cost_trend.none.{v}'):.{d}f}" for v, d in ((20, 1), (35, 0), (50, 0))), "5.4 61 104"),
    ("with MTP 3.3x, 5.3x and 30x",
     " ".join(f"{G(f'cost_trend.mtp.{v}'):.{d}f}" for v, d in ((20, 1), (35, 1), (50, 0))), "3.3 5.3 30"),
    ("the same prices pooled fall 1.58x a year", f"{G('watch.price_index.pooled_decline_factor_per_year'):.2f}", "1.58"),
    ("median 2029 (90 % interval 2027-2041)",
     f"{int(G('watch.megakernel.level3_year'))} {int(G('watch.megakernel.level3_lo'))} "
     f"{int(G('watch.megakernel.level3_hi'))}", "2029 2027 2041"),
    ("USD 5.90 per million output tokens on an H200 server in 2024, 0.082 on the announced Vera Rubin NVL72 from 2026 "
     "(list price 0.125 at the 35 % median margin",
     f"{G('forecast.roadmap.world.2024.cost_usd_per_m_output_tok'):.2f} "
     f"{G('forecast.roadmap.world.2026.cost_usd_per_m_output_tok'):.3f} {G('forecast.roadmap.world.2026.usd_per_m_output_tok'):.3f} "
     f"{G('forecast.roadmap.world.margin_frac') * 100:.0f} {G('forecast.roadmap.world.2030.cost_usd_per_m_output_tok'):.3f}",
     "5.90 0.082 0.125 35 0.082"),
    ("Google's trend median for December 2030: 2.8 quadrillion", f"{G('forecast.google.2030-12.tokens_per_day') / 1e15:.1f}", "2.8"),
    ("the world's serves at most 15 quadrillion a day on GB200 NVL72 racks, its projected accelerators 125",
     f"{G('forecast.capacity.google.2030.power_tokens_per_day') / 1e15:.0f} "
     f"{G('forecast.capacity.google.2030.chips_tokens_per_day') / 1e15:.0f}", "15 125"),
    ("within the world's chips and power", f"{G('forecast.capacity.google.2030.power_bound') + G('forecast.capacity.google.2030.chips_bound'):.0f}", "0"),
    ("China's national trend median: 61 quadrillion, power-bound",
     f"{G('forecast.china.2030-12.tokens_per_day') / 1e15:.0f} {G('forecast.capacity.china.2030.power_bound'):.0f}", "61 1"),
    ("China's newest figure (500 trillion a day, June 2026)",
     f"{_demand_row('china', '2026-06') / 1e12:.0f}", "500"),
    ("fitted as a level shift of +0.25 decades (95 % 0.08-0.43)",
     " ".join(f"{G(f'forecast.measurement.china.{k}'):.2f}" for k in ("shift_dec", "shift_lo95_dec", "shift_hi95_dec")),
     "0.25 0.08 0.43"),
    ("30 % of China's projected data-centre electricity",
     f"{_dataset_value('demand_scenarios', 'inference_share_of_dc_electricity_frac') * 100:.0f}", "30"),
    ("serves 4.5 quadrillion", f"{G('forecast.capacity.china.2030.served_tokens_per_day') / 1e15:.1f}", "4.5"),
    ("Goldman Sachs projects 3.9 quadrillion a day", f"{_dataset_value('demand_scenarios', 'goldman_2030') / 1e15:.1f}", "3.9"),
    ("China's trend would need 54 million tokens a day for each of its 1.1 billion people online",
     f"{G('forecast.china.2030-12.tokens_per_day') / _dataset_value('demand_scenarios', 'adopter_ceiling_china') / 1e6:.0f} "
     f"{_dataset_value('demand_scenarios', 'adopter_ceiling_china') / 1e9:.1f}", "54 1.1"),
    ("gives 5.3 quadrillion, 4.2 million per user, and Google 2.0 quadrillion: 5.2 billion monthly users at 330,000",
     f"{G('forecast.structural.china.2030.tokens_per_day') / 1e15:.1f} "
     f"{G('forecast.structural.china.2030.tokens_per_adopter_per_day') / 1e6:.1f} "
     f"{G('forecast.structural.google.2030.tokens_per_day') / 1e15:.1f} "
     f"{G('forecast.structural.google.2030.adopters') / 1e9:.1f} "
     f"{G('forecast.structural.google.2030.tokens_per_adopter_per_day') / 1e4:.0f}", "5.3 4.2 2.0 5.2 33"),
    ("median error 0.15 decades, where drift (last year's growth, continued) errs 0.12 and a random walk 0.41",
     " ".join(f"{G(f'forecast.backtest.holdout.{k}_median_abs_err_dec'):.2f}" for k in ("model", "drift", "rw")),
     "0.15 0.12 0.41"),
    ("its 80 % intervals hold 64 %", f"{G('forecast.backtest.holdout.coverage_80') * 100:.0f}", "64"),
    ("The forecasts it would have printed at 16 month-ends, with only the data of the time: 79 % of the held-out "
     "series' later figures inside the 80 % intervals, 93 % inside the 95 % ones",
     f"{G('forecast.replay.holdout.coverage_80') * 100:.0f} {G('forecast.replay.holdout.coverage_95') * 100:.0f}", "79 93"),
    ("10 rolling-origin forecasts of China, Doubao and Google within a year",
     f"{G('forecast.structural.backtest.n_points'):.0f}", "10"),
    ("median error 0.11 decades, drift 0.12, random walk 0.47: a tie with drift; its 80 % interval holds 9 of 10",
     " ".join(f"{G(f'forecast.structural.backtest.{k}_median_abs_err_dec'):.2f}" for k in ("model", "drift", "rw"))
     + f" {G('forecast.structural.backtest.coverage_80') * G('forecast.structural.backtest.n_points'):.0f}",
     "0.11 0.12 0.47 9"),
    ("69 % median, predicted/measured 1.69; runs at a stated concurrency 15 % (19 runs: Llama 3.1 405B on MI300X 2 %, "
     "MoE models 1.48x optimistic); all-queued offline runs 2.5x optimistic (16 runs); 34 % inside",
     f"{_sealed()['median'] * 100:.0f} {_sealed()['ratio']:.2f} {_sealed('serve')['median'] * 100:.0f} "
     f"{_sealed('serve')['n']} {_sealed('serve', True)['median'] * 100:.0f} {_sealed('serve', False)['ratio']:.2f} "
     f"{_sealed('offline')['ratio']:.1f} {_sealed('offline')['n']} {_sealed()['inside'] * 100:.0f}",
     "69 1.69 15 19 2 1.48 2.5 16 34"),
    ("12 published runs from 2 more publications", f"{_sealed(score=SEALED_B)['n']}", "12"),
    ("65 % median, predicted/measured 1.65; 42 % inside",
     f"{_sealed(score=SEALED_B)['median'] * 100:.0f} {_sealed(score=SEALED_B)['ratio']:.2f} {_sealed(score=SEALED_B)['inside'] * 100:.0f}", "65 1.65 42"),
    ("14 published runs from 3 more publications", f"{_sealed(score=SEALED_C)['n']}", "14"),
    ("3 published TPU runs", f"{_sealed(score=SEALED_D)['n']}", "3"),
    ("Llama-3.1-8B 1.19x; Qwen3-32B 2.7x optimistic; 1 of 3 inside the band",
     f"{_sealed(score=SEALED_D, model='llama-3.1-8b')['ratio']:.2f} {_sealed(score=SEALED_D, model='qwen3-32b')['ratio']:.1f} "
     f"{_sealed(score=SEALED_D)['inside'] * 3:.0f}", "1.19 2.7 1"),
    ("100 % median, predicted/measured 2.00; 0 % inside their 80 % band",
     f"{_sealed(score=SEALED_C)['median'] * 100:.0f} {_sealed(score=SEALED_C)['ratio']:.2f} "
     f"{_sealed(score=SEALED_C)['inside'] * 100:.0f}", "100 2.00 0"),
    ("4,171 published runs", f"{G('serving.unfitted.n_cases'):,.0f}", "4,171"),
    ("on 57 runs from 18 publications sealed before this release's serving model first saw them (five sets, each "
     "scored once), 30 % median error, predicted/measured 1.16", _release_sealed("n pubs median ratio"), "57 18 30 1.16"),
    ("community MoE runs at a few users up to 2.4x optimistic", f"{_sealed(score=SEALED_K, engine='sglang')['max_ratio']:.1f}",
     "2.4"),
    ("it held 48 of those 57 runs (84 %), and 103 of the 133 sealed runs scored since every band spanned third parties' "
     "runs (77 %)", f"{_release_sealed('inside n inside_pct')} {_pooled_inside()}", "48 57 84 103 133 77"),
    ("11.2 % median error (p90 38 %)", f"{G('serving.unfitted.median_abs_error_frac') * 100:.1f} "
     f"{G('serving.unfitted.p90_abs_error_frac') * 100:.0f}", "11.2 38"),
    ("11.2 % median, p90 38 %, predicted/measured 0.98", f"{G('serving.unfitted.median_abs_error_frac') * 100:.1f} "
     f"{G('serving.unfitted.p90_abs_error_frac') * 100:.0f} {G('serving.unfitted.median_ratio'):.2f}", "11.2 38 0.98"),
    ("661 measurements from vendor publications it was not built on", f"{G('serving.bands.check_half_n_rows'):.0f}", "661"),
    ("86 % inside their band; 78 % of a left-out publication's runs on average",
     f"{G('serving.bands.check_half_coverage_with_third_party_frac') * 100:.0f} "
     f"{G('serving.bands.third_party_lopo_publication_mean_frac') * 100:.0f}", "86 78"),
    ("serve from 1.28x more to 2.4x fewer tokens\nper GPU", f"{1 / _third_party_band()[0]:.2f} {_third_party_band()[1]:.1f}",
     "1.28 2.4"),
    ("with the all-queued runs' request counts transcribed, 86 % inside",
     f"{_sealed(score=SEALED_E + '_fixed')['inside'] * 100:.0f}", "86"),
    ("(86 % once its all-queued runs' request counts", f"{_sealed(score=SEALED_E + '_fixed')['inside'] * 100:.0f}", "86"),
    ("22 published runs from 5 more publications", f"{_sealed(score=SEALED_E)['n']}", "22"),
    ("60 % median, predicted/measured 1.60; at a stated concurrency 30 % (16 runs), all-queued 3.3x optimistic "
     "(6 runs); 68 % inside their 80 % band (94 % of the runs at a stated concurrency)",
     f"{_sealed(score=SEALED_E)['median'] * 100:.0f} {_sealed(score=SEALED_E)['ratio']:.2f} "
     f"{_sealed('serve', score=SEALED_E)['median'] * 100:.0f} {_sealed('serve', score=SEALED_E)['n']} "
     f"{_sealed('offline', score=SEALED_E)['ratio']:.1f} {_sealed('offline', score=SEALED_E)['n']} "
     f"{_sealed(score=SEALED_E)['inside'] * 100:.0f} {_sealed('serve', score=SEALED_E)['inside'] * 100:.0f}",
     "60 1.60 30 16 3.3 6 68 94"),
    ("29 published runs from 9 contributions to SGLang's cookbook and 1 TensorRT-LLM issue",
     f"{_sealed(score=SEALED_F)['n_all']}", "29"),
    ("26 predicted (3 Llama-3.1-70B runs on 8 x A100 refused: no A100 system is catalogued); 64 % median, "
     "predicted/measured 1.64; 81 % inside their 80 % band",
     f"{_sealed(score=SEALED_F)['n']} {_sealed(score=SEALED_F)['n_all'] - _sealed(score=SEALED_F)['n']} "
     f"{_sealed(score=SEALED_F)['median'] * 100:.0f} {_sealed(score=SEALED_F)['ratio']:.2f} "
     f"{_sealed(score=SEALED_F)['inside'] * 100:.0f}", "26 3 64 1.64 81"),
    ("28 published runs from 7 publications", f"{_sealed(score=SEALED_G)['n_all']}", "28"),
    ("28 predicted; 14 % median (p90 48 %), predicted/measured 1.02; 68 % inside their 80 % band",
     f"{_sealed(score=SEALED_G)['n']} {_sealed(score=SEALED_G)['median'] * 100:.0f} {_sealed(score=SEALED_G)['p90'] * 100:.0f} "
     f"{_sealed(score=SEALED_G)['ratio']:.2f} {_sealed(score=SEALED_G)['inside'] * 100:.0f}", "28 14 48 1.02 68"),
    ("the seventh, vendors' own tuned runs of mostly dense models, 68 %, its point unbiased\n(1.02x)",
     f"{_sealed(score=SEALED_G)['inside'] * 100:.0f} {_sealed(score=SEALED_G)['ratio']:.2f}", "68 1.02"),
    ("19 published runs from 3 publications", f"{_sealed(score=SEALED_H)['n_all']}", "19"),
    ("15 with an output rate per GPU: 42 % median (p90 68 %), predicted/measured 0.87 (AMD's dense static batches 0.63, "
     "SGLang DeepSeek-R1 1.49); 60 % inside their 80 % band",
     f"{_sealed(score=SEALED_H)['n']} {_sealed(score=SEALED_H)['median'] * 100:.0f} {_sealed(score=SEALED_H)['p90'] * 100:.0f} "
     f"{_sealed(score=SEALED_H)['ratio']:.2f} {_sealed('offline', score=SEALED_H)['ratio']:.2f} "
     f"{_sealed('serve', score=SEALED_H, model='deepseek-r1')['ratio']:.2f} {_sealed(score=SEALED_H)['inside'] * 100:.0f}",
     "15 42 68 0.87 0.63 1.49 60"),
    ("the ninth 95 %; the tenth 4 of 5; the eleventh 8 of 8; the twelfth 9 of 10. Pooled over\nthese eight sets, "
     "103 of 133 runs (77 %)",
     f"{_sealed(score=SEALED_I)['inside'] * 100:.0f} {_inside_of(SEALED_J)} {_inside_of(SEALED_K)} {_inside_of(SEALED_L)} "
     f"{_pooled_inside()}", "95 4 5 8 8 9 10 103 133 77"),
    ("10 predicted; 10 % median (p90 134 %), predicted/measured 1.07 (InferenceX's SGLang runs 0.99, vLLM 0.6.6 2.4); "
     "9 of 10 inside their 80 % band",
     f"{_sealed(score=SEALED_L)['n']} {_sealed(score=SEALED_L)['median'] * 100:.0f} {_sealed(score=SEALED_L)['p90'] * 100:.0f} "
     f"{_sealed(score=SEALED_L)['ratio']:.2f} {_sealed(score=SEALED_L, engine='sglang')['ratio']:.2f} "
     f"{_sealed(score=SEALED_L, engine='vllm', model='llama-3.1-70b')['ratio']:.1f} {_inside_of(SEALED_L)}",
     "10 10 134 1.07 0.99 2.4 9 10"),
    ("8 predicted; 77 % median (p90 139 %), predicted/measured 1.77 (SGLang MoE runs at 8-16 users 1.84, vLLM on AMD "
     "1.34); 8 of 8 inside their 80 % band",
     f"{_sealed(score=SEALED_K)['n']} {_sealed(score=SEALED_K)['median'] * 100:.0f} {_sealed(score=SEALED_K)['p90'] * 100:.0f} "
     f"{_sealed(score=SEALED_K)['ratio']:.2f} {_sealed(score=SEALED_K, engine='sglang')['ratio']:.2f} "
     f"{_sealed(score=SEALED_K, engine='vllm')['ratio']:.2f} {_inside_of(SEALED_K)}", "8 77 139 1.77 1.84 1.34 8 8"),
    ("5 predicted; 18 % median, predicted/measured 0.86; 4 of 5 inside their 80 % band",
     f"{_sealed(score=SEALED_J)['n']} {_sealed(score=SEALED_J)['median'] * 100:.0f} {_sealed(score=SEALED_J)['ratio']:.2f} "
     f"{_sealed(score=SEALED_J)['inside'] * _sealed(score=SEALED_J)['n']:.0f} {_sealed(score=SEALED_J)['n_all']}", "5 18 0.86 4 5"),
    ("21 published runs from 6 publications", f"{_sealed(score=SEALED_I)['n_all']}", "21"),
    ("19 with an output rate per GPU: 18 % median (p90 111 %), predicted/measured 1.16 (vLLM builds of 2024 up to "
     "2.3x optimistic); 95 % inside their 80 % band; Kimi-K3's single-user rate on GB300 0.46x",
     f"{_sealed(score=SEALED_I)['n']} {_sealed(score=SEALED_I)['median'] * 100:.0f} {_sealed(score=SEALED_I)['p90'] * 100:.0f} "
     f"{_sealed(score=SEALED_I)['ratio']:.2f} {_sealed(score=SEALED_I, model='llama-3-8b')['ratio']:.1f} "
     f"{_sealed(score=SEALED_I)['inside'] * 100:.0f} {_per_user_ratio(SEALED_I, 'kimi-k3'):.2f}",
     "19 18 111 1.16 2.3 95 0.46"),
    ("(34 %,\n42 %, 0 % and 33 % of them fell inside", f"{_sealed()['inside'] * 100:.0f} "
     f"{_sealed(score=SEALED_B)['inside'] * 100:.0f} {_sealed(score=SEALED_C)['inside'] * 100:.0f} "
     f"{_sealed(score=SEALED_D)['inside'] * 100:.0f}", "34 42 0 33"),
]


@pytest.mark.parametrize("text, pinned, shown", FIGURES, ids=[f[0][:50] for f in FIGURES])
def test_readme_figure_is_the_pinned_one(text, pinned, shown):
    assert text in README, f"README no longer says {text!r}"
    assert pinned == shown, f"README says {shown} in {text!r}; the pinned figure is {pinned}"


def test_every_number_of_the_answers_table_is_listed():
    # the answers table's numbers all appear in FIGURES' texts (a number added to the table needs its figure)
    table = [l for l in README.splitlines() if l.startswith("| ") and "tokenomics " in l]
    listed = " ".join(f[0] for f in FIGURES)
    for line in table:
        answer = line.split("|")[2]
        for num in re.findall(r"(?<![A-Za-z0-9.,-])\d+(?:,\d{3})*(?:\.\d+)?(?![A-Za-z0-9])", answer):
            if num in ("3", "4", "8", "32", "35", "64", "16", "200", "671", "2030", "384", "72", "15", "1", "0", "80",
                       "20", "50", "2024", "2025"):
                continue  # the question's own settings (users, chips, sequences, speeds, years, level), not results
            assert num in listed, f"answers-table number {num} in {answer.strip()[:60]!r} is not pinned"

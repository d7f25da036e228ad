"""Weights that do not fit in HBM are refused naming host-memory offload (not modelled)."""

import pandas as pd
import pytest

from tokenomics.deployment import resolve
from tokenomics.errors import DoesNotFitError
from tokenomics.perf.parallel import ParallelPlan, check_fit, system
from tokenomics.validate.serving_cases import predict_case


def test_check_fit_names_offload_when_the_weights_alone_exceed_hbm():
    # Kimi K2 FP8 ~1.03 TB over 8 chips: ~129 GB per H100 (80 GB)
    with pytest.raises(DoesNotFitError, match="weights offloaded to host memory are not modelled"):
        check_fit("kimi-k2", system("dgx-h100"), ParallelPlan(tp=8, ep=8), batch=1, context_tok=2048)


def test_weights_that_fit_but_kv_that_does_not_is_the_plain_error():
    # Llama 3.1 8B BF16 (16 GB) on one H200 fits; 200 sequences of 128k tokens of KV do not
    with pytest.raises(DoesNotFitError) as e:
        check_fit("llama-3.1-8b", system("dgx-h200"), ParallelPlan(tp=1), batch=200, context_tok=131072)
    assert "host memory" not in str(e.value)


def test_resolver_names_offload_when_no_system_holds_the_weights():
    with pytest.raises(DoesNotFitError, match="weights offloaded to host memory are not modelled"):
        resolve("kimi-k3", hardware="mi300x")


def test_a_serving_row_with_offloaded_weights_is_refused_naming_it():
    row = dict(case_id="Z1", phase="serve", hardware="h100", model="kimi-k2", weight_precision="fp8",
               kv_precision="", engine="sglang", n_gpus=8, tp=8, ep=8, dp_attention=0, disaggregated=0,
               spec_decode="none", isl_tok=1000, osl_tok=1000, concurrency=16, note="")
    with pytest.raises(DoesNotFitError, match=r"serving case Z1: .*weights offloaded to host memory are not modelled"):
        predict_case(pd.Series(row))

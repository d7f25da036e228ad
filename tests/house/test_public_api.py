"""The public API is frozen: the names of ``tokenomics.__all__`` change only on purpose (edit
:data:`PUBLIC` with the changelog), each resolves, and ``import tokenomics`` stays light."""

import subprocess
import sys

import tokenomics as tk

#: The public names (a release changes this list deliberately and says so in CHANGELOG.md).
PUBLIC = sorted([
    "Accelerator", "DataError", "Deployment", "DoesNotFitError", "ExecutionPlan", "ModelSpec", "PLANS",
    "ParallelPlan", "Profile", "SpecDecode", "TokenomicsError", "TokenomicsWarning", "UnknownNameError",
    "OperatingPoint", "ValidationError", "__version__", "accelerator", "catalog", "chain", "decode_step", "econ",
    "forecast",
    "load", "max_batch", "model", "model_from_hf_config", "perf", "plot", "plotdata", "prefill", "price", "resolve", "showdown", "sweep",
    "system_step", "watch",
])


def test_all_is_frozen():
    assert sorted(tk.__all__) == PUBLIC


def test_every_public_name_resolves():
    for name in tk.__all__:
        assert getattr(tk, name) is not None, name


def test_import_is_lazy():
    # importing the package loads none of the heavy libraries; each loads on first use
    code = ("import sys, tokenomics; "
            "print(sorted(m for m in ('pandas', 'scipy', 'statsmodels', 'matplotlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"

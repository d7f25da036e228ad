"""Package-level API: lazy imports, python -m, start-up cost."""

import subprocess
import sys


def test_import_is_light():
    code = "import sys, tokenomics; print('pandas' in sys.modules, 'statsmodels' in sys.modules, 'matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False", "False"]


def test_cli_import_does_not_load_heavy_libraries():
    code = ("import sys, tokenomics.cli; "
            "print(sorted(m for m in ('pandas', 'statsmodels', 'matplotlib', 'scipy', 'dask') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_lazy_public_names():
    import tokenomics as tk

    r = tk.decode_step("h200", "llama-3.1-8b", "graph", batch=1)
    assert float(r.step_time_s) > 0
    assert callable(tk.price) and callable(tk.system_step)
    assert "decode_step" in dir(tk)


def test_python_dash_m_runs():
    out = subprocess.run([sys.executable, "-m", "tokenomics", "models", "--format", "csv"],
                         capture_output=True, text=True)
    assert out.returncode == 0 and "kimi-k3" in out.stdout
    bad = subprocess.run([sys.executable, "-m", "tokenomics", "throughput", "--model", "gpt5"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.startswith("Error: Unknown model 'gpt5'")


def test_written_files_follow_the_umask(tmp_path):
    """Files are written with the permissions open() would give (0644 under umask 022), not
    mkstemp's 0600."""
    import os

    from tokenomics.io import write_text

    old = os.umask(0o022)
    try:
        p = write_text(tmp_path / "a.txt", "x")
    finally:
        os.umask(old)
    assert (p.stat().st_mode & 0o777) == 0o644

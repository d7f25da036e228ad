"""Run the ``tokenomics`` command line in-process, as the tests call it."""

import pytest

from tokenomics.cli import main


def run_cli(args, capsys) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``tokenomics ARGS``."""
    with pytest.raises(SystemExit) as exc:
        main(args)
        raise SystemExit(0)
    out = capsys.readouterr()
    return exc.value.code or 0, out.out, out.err

"""One quantity, one function: each formula below is written once, in its owner, and every other
place calls the owner. Checked on the source (ast): the shape of the formula appearing anywhere else
fails, naming the owner to call instead. :func:`test_the_check_sees_an_inline_copy` shows the check
catching a deliberately inserted copy."""

import ast
import re
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "tokenomics"


def _ident(n) -> str:
    """The name an operand stands for: a variable, an attribute, or the first argument of a call
    such as ``np.asarray(x, float)``."""
    if isinstance(n, ast.Name):
        return n.id
    if isinstance(n, ast.Attribute):
        return n.attr
    if isinstance(n, ast.Call):
        fn = _ident(n.func)
        return _ident(n.args[0]) if n.args and fn in ("asarray", "array", "float", "broadcast_to") else fn
    return ""


def _facility_power(n) -> bool:  # (board + host) x PUE
    return isinstance(n.op, ast.Mult) and any("pue" in _ident(x).lower() for x in (n.left, n.right))


def _energy_per_token(n) -> bool:  # power / tokens per second
    return (isinstance(n.op, ast.Div) and re.search(r"power|p_dec|_w$", _ident(n.left)) is not None
            and re.search(r"tps|tok_per_s", _ident(n.right)) is not None)


def _gross_margin(n) -> bool:  # 1 - cost / price
    if not (isinstance(n.op, ast.Sub) and isinstance(n.left, ast.Constant) and n.left.value == 1
            and isinstance(n.right, ast.BinOp) and isinstance(n.right.op, ast.Div)):
        return False
    return re.search(r"cost|price|list", _ident(n.right.left) + " " + _ident(n.right.right)) is not None


def _capital_per_hour(n) -> bool:  # annual capital cost / hours in a year
    return (isinstance(n.op, ast.Div) and "HOURS_PER_YEAR" in _ident(n.right)
            and "annual_capital" in ast.unparse(n.left))


def _distinct_experts(n) -> bool:  # E x (1 - (1 - k/E) ** N)
    return isinstance(n.op, ast.Pow) and isinstance(n.left, ast.BinOp) and isinstance(n.left.op, ast.Sub) \
        and isinstance(n.left.left, ast.Constant) and n.left.left.value == 1 \
        and isinstance(n.left.right, ast.BinOp) and isinstance(n.left.right.op, ast.Div)


#: quantity: (owner file, owner function, shape of its formula)
ORACLES = {
    "facility power per chip": ("econ/tco.py", "facility_power_w", _facility_power),
    "energy per token": ("econ/pricing.py", "energy_j_per_tok", _energy_per_token),
    "gross margin": ("econ/pricing.py", "gross_margin_frac", _gross_margin),
    "capital cost per hour": ("econ/finance.py", "capital_cost_usd_per_h", _capital_per_hour),
    "expected distinct experts": ("perf/ops.py", "expected_distinct_experts", _distinct_experts),
}


def copies(source: str, rel: str) -> list[tuple[str, int, str]]:
    """(quantity, line, function) of every formula of :data:`ORACLES` in ``source`` outside its owner."""
    tree = ast.parse(source)
    owner_of = {}
    for f in ast.walk(tree):
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for n in ast.walk(f):
                owner_of[id(n)] = f.name
    out = []
    for n in ast.walk(tree):
        if not isinstance(n, ast.BinOp):
            continue
        for q, (file, fn, shape) in ORACLES.items():
            if shape(n) and not (rel == file and owner_of.get(id(n)) == fn):
                out.append((q, n.lineno, owner_of.get(id(n), "<module>")))
    return out


def test_each_owner_holds_its_formula():
    for q, (file, fn, _) in ORACLES.items():
        text = (PKG / file).read_text()
        assert f"def {fn}(" in text, f"{q}: owner {file}:{fn} is gone"
        assert any(c[0] == q for c in copies(text, "elsewhere")), f"{q}: the owner no longer holds the formula the check looks for"


@pytest.mark.parametrize("path", sorted(PKG.rglob("*.py")), ids=lambda p: str(p.relative_to(PKG)))
def test_no_inline_copy(path):
    rel = str(path.relative_to(PKG))
    found = copies(path.read_text(), rel)
    assert not found, "; ".join(f"{rel}:{line} ({fn}) computes the {q} again: call "
                                f"{ORACLES[q][0]}:{ORACLES[q][1]}" for q, line, fn in found)


def test_the_check_sees_an_inline_copy():
    # the contract works: an inserted copy of each formula is caught
    planted = ("def priced(p_dec, safe_tps, cost, price, host_w, pue):\n"
               "    e = np.asarray(p_dec, float) / safe_tps\n"
               "    m = 1.0 - cost / price\n"
               "    f = (p_dec + host_w) * pue\n"
               "    x = n * (1 - (1 - k / n) ** tokens)\n")
    assert {q for q, _, _ in copies(planted, "chain.py")} == {
        "energy per token", "gross margin", "facility power per chip", "expected distinct experts"}

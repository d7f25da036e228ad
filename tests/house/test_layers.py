"""The package's layers, checked on the source: a module imports only from its own layer or below
(function-level imports included), and no two modules import each other in a circle.

    units/errors/dates  <  specs/io/catalog/plot (draws what it is given)  <  perf, econ  <  deployment  <  chain
    <  market/watch/forecast/studies/sweep  <  plot/report  <  cli

A known exception is listed in :data:`KNOWN_UPWARD` with the reason it still stands; a new upward
import fails this test."""

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "tokenomics"

#: Layer of each module (by dotted name prefix; the longest prefix wins).
LAYERS = {
    "tokenomics.units": 0, "tokenomics.errors": 0, "tokenomics.dates": 0, "tokenomics._display": 0,
    "tokenomics._validate": 0,
    "tokenomics.specs": 1, "tokenomics.io": 1, "tokenomics.catalog": 1, "tokenomics.hf_config": 1,
    "tokenomics.distributed": 1, "tokenomics.plot": 1,
    "tokenomics.perf": 2, "tokenomics.econ": 2,
    "tokenomics.deployment": 3, "tokenomics.errorband": 3,
    "tokenomics.chain": 4,
    "tokenomics.market": 5, "tokenomics.watch": 5, "tokenomics.forecast": 5,
    "tokenomics.sweep": 5, "tokenomics.studies": 5, "tokenomics.validate": 5,
    "tokenomics.plotdata": 6, "tokenomics.report": 6,
    "tokenomics.cli": 7, "tokenomics.__main__": 7,
}

#: Upward imports that still stand, each with its reason (the list only shrinks).
KNOWN_UPWARD: set[tuple[str, str]] = set()


def _layer(mod: str) -> int | None:
    best = None
    for prefix, layer in LAYERS.items():
        if (mod == prefix or mod.startswith(prefix + ".")) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, layer)
    return None if best is None else best[1]


def _module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    mod = _module_name(path)
    pkg = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("tokenomics"):
                out.add(target)
                for alias in node.names:  # `from . import chain` imports the module tokenomics.chain
                    sub = f"{target}.{alias.name}"
                    if (PKG.parent / (sub.replace(".", "/") + ".py")).exists() or (PKG.parent / sub.replace(".", "/")).is_dir():
                        out.add(sub)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("tokenomics")}
    return out


def _graph() -> dict[str, set[str]]:
    return {_module_name(p): _imports(p) for p in PKG.rglob("*.py")}


def upward_imports() -> set[tuple[str, str]]:
    """(importer, imported) pairs that run up the layers, plus econ importing perf."""
    bad = set()
    for mod, targets in _graph().items():
        lm = _layer(mod)
        for t in targets:
            lt = _layer(t)
            if lm is not None and lt is not None and lt > lm:
                bad.add((mod, t))
            elif mod.startswith("tokenomics.econ") and t.startswith("tokenomics.perf"):
                bad.add((mod, t))
    return bad


def test_every_module_has_a_layer():
    assert [m for m in _graph() if _layer(m) is None and m != "tokenomics"] == []


def test_no_new_upward_import():
    new = upward_imports() - KNOWN_UPWARD
    assert not new, f"imports from a lower layer to a higher one: {sorted(new)}"


def test_known_exceptions_still_exist():
    # a debt paid is removed from the list, so the list only shrinks
    gone = KNOWN_UPWARD - upward_imports()
    assert not gone, f"no longer upward, remove from KNOWN_UPWARD: {sorted(gone)}"


def circles() -> list[frozenset[str]]:
    """Groups of modules that import each other in a loop (strongly connected, size > 1)."""
    g = _graph()
    # a package's __init__ handing on its submodules' names is not a loop of dependencies
    g = {m: {t for t in ts if t in g and t != m and not t.startswith(m + ".")} for m, ts in g.items()}
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):  # Tarjan's algorithm
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in g[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(frozenset(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


#: Import circles that still stand (the list only shrinks).
KNOWN_CIRCLES: set[frozenset[str]] = set()


def test_no_new_circle():
    new = [sorted(c) for c in circles() if c not in KNOWN_CIRCLES]
    assert not new, f"new import circles: {new}"


def test_known_circles_still_exist():
    gone = [sorted(c) for c in KNOWN_CIRCLES if c not in circles()]
    assert not gone, f"no longer a circle, remove from KNOWN_CIRCLES: {gone}"

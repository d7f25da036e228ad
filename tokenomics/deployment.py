"""What runs in production, as one frozen object every path shares.

A :class:`Deployment` names the model, the chips (a catalogued multi-chip system, or a bare
accelerator as a one-chip system), the parallel layout (tp, ep, attention data parallelism, pp),
the execution plan and engine, per-component precisions, speculative decoding, collective
implementations, overlap and the prefill policy. Decode and prefill of every price, frontier,
showdown, watch floor and sweep go through :meth:`Deployment.decode` and
:meth:`Deployment.prefill`, so identical deployments give identical numbers everywhere.

:func:`resolve` builds one from whatever the user gave and fills the rest the way a production
engine would (each choice is recorded in :attr:`Deployment.picked` and printed by the CLI):

* **chips**: ``system`` if given; else the smallest catalogued system of ``hardware`` whose
  chips hold the model (a bare one-chip system when the model fits one chip, or when no system
  of that accelerator is catalogued);
* **layout** (dense models): the smallest tensor-parallel size (1, 2, 4, 8, ... dividing the
  heads) whose weight shard leaves at least :data:`MIN_KV_FRAC` of usable memory for KV; the
  rest of the system's chips are replicas;
* **layout** (MoE models): expert parallelism over every chip of the system (wide EP, as
  DeepSeek and SGLang serve V3/R1; spare expert slots hold redundant experts when ``ep`` does
  not divide the expert count) with attention data parallelism, tensor parallelism 1 for
  attention; on a bare accelerator, the smallest power-of-two chip count that holds the model;
* **plan**: ``engine`` (a serving engine's fused kernels under CUDA graphs);
* **prefill**: chunked, the engine's default budget per step (:func:`~tokenomics.perf.engines.default_prefill_chunk_tok`:
  8192 tokens; SGLang 16384 on GPUs of 160 GiB and more, split among attention-DP ranks), i.e.
  ``max(1, chunk // prompt)`` prompts per prefill on each rank;
* **collectives**: ``auto`` (the faster of NCCL ring and the one-shot kernel at each message
  size, as vLLM/SGLang/TRT-LLM switch between them); **precisions**: the model's native weights,
  bf16 KV cache; **speculative decoding**: off;
* **expert balance**: ``eplb`` (redundant experts placed by load) from expert parallelism
  :data:`WIDE_EP_BALANCE_MIN` up, as the published wide-EP production deployments run; ``none``
  (the engines' default) below it.

Examples
--------
>>> from tokenomics.deployment import resolve
>>> d = resolve("llama-3.1-70b", hardware="h200")
>>> d.label()
'llama-3.1-70b on dgx-h200 tp2-ep1-pp1 (4 replicas), engine, bf16/bf16 KV'
>>> r = d.decode(batch=32, context_tok=2048)
>>> float(r.tok_per_s_per_chip) > 0
True
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from . import _validate as v
from .errors import DoesNotFitError, TargetSpeedError, ValidationError, unknown_name
from .perf.engines import DEFAULT_PREFILL_CHUNK_TOK, ENGINE_ALIASES, ENGINES, default_prefill_chunk_tok
from .specs import Accelerator, ExecutionPlan, ModelSpec, PRECISION_BYTES, component_precisions, plan as _plan

#: Expert-parallel size from which :func:`resolve` balances experts with EPLB when not told: the
#: published wide-EP production deployments all do (DeepSeek's EP32 / EP144 serving, "expert
#: parallelism load balancer" with redundant experts, github.com/deepseek-ai/open-infra-index day 6;
#: TensorRT-LLM's wide-EP DeepSeek-R1 at EP32 with EPLB and 32 redundant experts, the source of
#: ``datasets/expert_skew.csv``). Unbalanced routing at that width costs the busiest chip 2-7x the
#: mean tokens (:func:`tokenomics.perf.system.expert_skew_frac`). Below it the engines' default
#: (no balancing) stays.
WIDE_EP_BALANCE_MIN = 32


#: Largest prefill chunk accepted [tokens]: engines index a step's tokens with 32-bit integers.
MAX_PREFILL_CHUNK_TOK = 2**31 - 1


#: A dense layout must leave at least this share of usable memory for the KV cache
#: (ASSUMPTION: production engines size tp so that a useful batch fits).
MIN_KV_FRAC = 0.3

#: Collective implementations a deployment may name (``auto`` picks the faster per message).
COLLECTIVES = ("auto", "nccl", "custom_oneshot", "vllm_custom", "symm_mem", "deepep_rdma", "deepep_ll",
               "ici_xla", "pallas_ici")

#: Named speculative-decoding settings: (method, gamma, per-token acceptance, draft layers).
#: ``mtp``: DeepSeek-V3 multi-token prediction, one draft token accepted 85-90 % of the time
#: (https://arxiv.org/abs/2412.19437, section 5.4.3: midpoint 0.875).
SPEC_PRESETS: dict[str, tuple[str, int, float, int]] = {
    "mtp": ("mtp", 1, 0.875, 1),
}


#: Speculative-decoding methods ``--spec`` takes, each with how its draft is built: ``mtp`` and
#: ``eagle`` one draft layer of the target's own architecture (or the catalogued
#: ``<target>-<method>`` model), ``ngram`` no draft model (prompt lookup), ``dspark`` the block
#: draft, ``draft:MODEL`` a separate catalogued draft model.
SPEC_METHODS = ("mtp", "eagle", "ngram", "dspark", "draft")

SPEC_FORMS = ("none, mtp, dspark, METHOD:GAMMA:ALPHA with METHOD one of mtp, eagle, ngram, dspark "
              "(e.g. eagle:3:0.7), METHOD:GAMMA at the method's published acceptance by draft position "
              "(e.g. mtp:3), or draft:MODEL:GAMMA:ALPHA with a catalogued draft model "
              "(e.g. draft:llama-3.2-1b:4:0.7)")


def _spec(spec: Any):
    """None, a SpecDecode, a preset name (``mtp``, ``dspark``), ``METHOD:GAMMA:ALPHA`` (METHOD in
    :data:`SPEC_METHODS`), ``METHOD:GAMMA`` (acceptance by draft position as published,
    ``datasets/spec_acceptance.csv``) or ``draft:MODEL:GAMMA:ALPHA`` -> SpecDecode or None; anything else
    (an unknown method, an uncatalogued draft model) is one line with the closest name."""
    from .perf.speculative import SpecDecode

    if spec is None or isinstance(spec, SpecDecode):
        return spec
    text = str(spec).strip().lower()
    if text in ("", "none", "off"):
        return None
    if text == "dspark":
        from .catalog import load

        df = load("plan_params")
        c = dict(zip(df.loc[df["scenario"] == "common", "param"], df.loc[df["scenario"] == "common", "value"]))
        return SpecDecode("dspark", int(float(c["dspark_gamma"])), float(c["dspark_alpha"]),
                          int(float(c["dspark_draft_layers"])),
                          block=str(c.get("dspark_block", "false")).strip().lower() == "true")
    if text in SPEC_PRESETS:
        m, g, a, layers = SPEC_PRESETS[text]
        return SpecDecode(m, g, a, layers)
    parts = [p.strip() for p in text.split(":")]
    draft = None
    if parts[0] == "draft":
        if len(parts) != 4 or not parts[1]:
            raise ValidationError(f"speculative decoding {spec!r}: a separate draft model is "
                                  "draft:MODEL:GAMMA:ALPHA (e.g. draft:llama-3.2-1b:4:0.7)")
        from .catalog import model as _model

        draft = _model(parts[1]).name  # an uncatalogued model: one line with the closest names
        parts = ["draft", *parts[2:]]
    if len(parts) not in (2, 3) or (len(parts) == 2 and parts[0] == "draft"):
        raise ValidationError(f"unknown speculative decoding {spec!r}; use {SPEC_FORMS}")
    method, gamma, alpha = parts if len(parts) == 3 else (*parts, None)
    if not method:
        raise ValidationError(f"speculative decoding {spec!r} names no method; use {SPEC_FORMS}")
    if method not in SPEC_METHODS:
        import difflib

        from .catalog import model_names

        if method in model_names():
            hint = f" Did you mean draft:{text}? (a separate draft model)"
        else:
            close = difflib.get_close_matches(method, SPEC_METHODS, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ValidationError(f"unknown speculative decoding method {method!r} in {spec!r}.{hint} "
                              f"Use {SPEC_FORMS}")
    try:
        g = int(gamma)
    except ValueError:
        g = 0
    if g < 1:
        raise ValidationError(f"speculative decoding {spec!r}: GAMMA (draft tokens per step) must be an integer "
                              f">= 1, got {gamma!r} (use --spec none for no speculation)")
    if alpha is None:  # METHOD:GAMMA: the published acceptance of each draft position
        return SpecDecode.by_position(method, g, draft_layers=0 if method == "ngram" else 1,
                                      block=method == "dspark" and _spec("dspark").block)
    try:
        a = float(alpha)
    except ValueError:
        a = float("nan")
    if not 0.0 <= a <= 1.0:
        raise ValidationError(f"speculative decoding {spec!r}: ALPHA (per-token acceptance) must be a fraction "
                              f"in 0-1, got {alpha!r};{v.percent_hint(a)}".rstrip(";"))
    if method == "dspark":  # the block draft, as the preset: one forward proposes all GAMMA tokens
        base = _spec("dspark")
        return SpecDecode("dspark", g, a, base.draft_layers, block=base.block)
    return SpecDecode(method, g, a, 0 if method == "ngram" else 1, draft=draft)


@dataclass(frozen=True)
class Deployment:
    """One serving deployment (see the module docstring; build with :func:`resolve`).

    Parameters
    ----------
    model : ModelSpec
    system : System
        The chips and their fabric (a one-chip system for a bare accelerator).
    parallel : ParallelPlan
        ``tp``, ``ep``, ``pp`` and ``dp`` (replicas); attention data parallelism is
        ``max(tp, ep) / tp`` groups.
    execution : ExecutionPlan
        Kernel plan of each chip.
    engine : str
        Serving engine (``default``, ``vllm``, ``sglang``, ``trt``).
    engine_version : str
        The engine's release (``1.1.0rc2``) where it is older than the newest kernels measured:
        its GEMM and fused-MoE kernels are then timed as that release's
        (:mod:`tokenomics.perf.kernel_versions`); empty (default) = the newest.
    weight_precision, expert_precision, kv_precision : str
        Dense/attention weights, routed and shared experts, KV cache.
    spec : SpecDecode or None
        Speculative decoding.
    ar_impl, a2a_impl : str
        All-reduce / all-gather and expert all-to-all implementations (``auto``: the faster
        of NCCL and one-shot per message size).
    ar_algo : str
        All-reduce algorithm (``oneshot``, ``twoshot``, ``ring``, ..., or ``auto``: the faster of
        one-shot and two-shot per message size); empty (default) = the implementation's own
        (:data:`tokenomics.perf.comm.IMPL_ALLREDUCE_ALGO`).
    overlap : {"none", "prefetch", "tile", "two-batch"}
        Communication overlap rule (:func:`tokenomics.perf.system.system_step`); ``two-batch``
        also applies to prefill.
    expert_balance : {"none", "eplb"}
        Expert-parallel load balancing: ``none`` (the engines' default: the busiest chip gets the
        measured skew of real routing) or ``eplb`` (EPLB with redundant experts;
        :func:`tokenomics.perf.system.expert_skew_frac`).
    prefill_chunk_tok : int
        Prompt tokens per prefill step [tokens]: per attention rank, except on SGLang, whose
        ``--chunked-prefill-size`` is split among them (:attr:`prefill_chunk_per_rank_tok`).
    mem_frac : float or None
        Fraction of each chip's memory the engine may fill with weights and KV cache: the
        engine's own setting (vLLM ``gpu_memory_utilization``, SGLang ``--mem-fraction-static``);
        None (default) = the profile's ``usable_mem_frac`` (0.9) [fraction].
    picked : tuple of str
        What :func:`resolve` chose on the user's behalf, in words.
    """

    model: ModelSpec
    system: Any
    parallel: Any
    execution: ExecutionPlan
    engine: str = "default"
    engine_version: str = ""
    weight_precision: str = "bf16"
    expert_precision: str = "bf16"
    kv_precision: str = "bf16"
    spec: Any = None
    ar_impl: str = "auto"
    a2a_impl: str = "auto"
    ar_algo: str = ""
    overlap: str = "none"
    prefill_chunk_tok: int = DEFAULT_PREFILL_CHUNK_TOK
    expert_balance: str = "none"
    mem_frac: float | None = None
    picked: tuple[str, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        from .perf.parallel import check_plan
        from .perf.system import EXPERT_BALANCING, OVERLAP_MODES

        engine = str(self.engine).strip().lower()  # names are case-insensitive
        object.__setattr__(self, "engine", engine)
        if "@" in engine:  # sglang@0.4.3: the engine at one release
            from .perf.engines import split_engine

            e, ver = split_engine(engine, self.engine_version or None)
            object.__setattr__(self, "engine", e)
            object.__setattr__(self, "engine_version", ver or "")
        object.__setattr__(self, "engine", ENGINE_ALIASES.get(self.engine, self.engine))
        v.one_of(self.engine, "engine", ENGINES)
        if self.engine_version:
            from .perf.engines import version_key

            object.__setattr__(self, "engine_version", str(self.engine_version).strip())
            version_key(self.engine_version)  # a release number, or a one-line error
        for f in ("weight_precision", "expert_precision", "kv_precision"):
            if getattr(self, f) not in PRECISION_BYTES:
                raise unknown_name(f.replace("_", " "), getattr(self, f), PRECISION_BYTES)
        for f in ("ar_impl", "a2a_impl"):
            v.one_of(getattr(self, f), f, COLLECTIVES)
        if self.ar_algo:
            from .perf.comm import AR_ALGOS

            v.one_of(self.ar_algo, "ar_algo", AR_ALGOS)
        v.one_of(self.overlap, "overlap", OVERLAP_MODES)
        v.one_of(self.expert_balance, "expert_balance", EXPERT_BALANCING)
        v.count(self.prefill_chunk_tok, "prefill_chunk_tok", maximum=MAX_PREFILL_CHUNK_TOK)
        object.__setattr__(self, "prefill_chunk_tok", int(self.prefill_chunk_tok))
        if self.mem_frac is not None:
            object.__setattr__(self, "mem_frac", float(v.fraction(self.mem_frac, "mem_frac", allow_zero=False)))
        if self.spec is not None and self.spec.method == "mtp" and self.model.mtp_modules == 0:
            raise ValidationError(f"{self.model.name} ships no multi-token-prediction module (its checkpoint has no "
                                  "MTP heads, num_nextn_predict_layers 0); use a draft method, e.g. --spec "
                                  "eagle:3:0.7 (METHOD:GAMMA:ALPHA), or --spec none")
        check_plan(self.model, self.parallel, self.system)

    # ---- descriptions ---------------------------------------------------------------------
    @property
    def hardware(self) -> Accelerator:
        return self.system.accelerator

    @property
    def replica_chips(self) -> int:
        """Chips of one model replica [chips]."""
        return int(self.parallel.replica_chips)

    @property
    def replicas(self) -> int:
        """Model replicas the system holds (at least one) [replicas]."""
        return max(1, self.system.n_chips // self.replica_chips)

    def layout_label(self) -> str:
        """The chips and how the model is split over them, e.g. ``dgx-h200 tp2-ep1-pp1 (4 replicas)``."""
        p = self.parallel
        rep = f" ({self.replicas} replicas)" if self.replicas > 1 else ""
        moe = f"x{p.moe_tp}" if p.moe_tp is not None else ""  # experts split inside too
        return f"{self.system.name} tp{p.tp}-ep{p.ep}{moe}-pp{p.pp}{rep}"

    def label(self) -> str:
        """One line: model, system, layout, plan, precisions."""
        prec = self.weight_precision if self.expert_precision == self.weight_precision or not self.model.is_moe \
            else f"{self.weight_precision}+{self.expert_precision} experts"
        spec = f", spec {self._spec_name()}" if self.spec else ""
        eng = f" ({self.engine}{' ' + self.engine_version if self.engine_version else ''})" \
            if self.engine != "default" else ""
        return (f"{self.model.name} on {self.layout_label()}, "
                f"{self.execution.name}{eng}, {prec}/{self.kv_precision} KV{spec}")

    def to_dict(self) -> dict[str, Any]:
        """Flat description (the columns every priced row carries)."""
        p = self.parallel
        return {
            "model": self.model.name, "system": self.system.name, "hardware": self.hardware.name,
            "replica_chips": self.replica_chips, "tp": p.tp, "ep": p.ep, "pp": p.pp,
            "attn_dp": int(p.attn_dp), "execution": self.execution.name, "engine": self.engine,
            "engine_version": self.engine_version,
            "weight_precision": self.weight_precision, "expert_precision": self.expert_precision,
            "kv_precision": self.kv_precision, "spec": self._spec_name() if self.spec else "none",
            "ar_impl": self.ar_impl, "a2a_impl": self.a2a_impl, "overlap": self.overlap,
            "prefill_chunk_tok": int(self.prefill_chunk_tok), "expert_balance": self.expert_balance,
        }

    def _spec_name(self) -> str:
        """The speculative decoding method, with its draft model where it has its own
        (``draft:llama-3.2-1b``)."""
        draft = getattr(self.spec, "draft", None)
        return f"{self.spec.method}:{draft}" if draft and self.spec.method == "draft" else self.spec.method

    def replace(self, **changes: Any) -> "Deployment":
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)

    # ---- physics ---------------------------------------------------------------------------
    @property
    def runs_engine(self) -> bool:
        """Whether the steps run inside a serving engine: a serving engine's plans (fusion
        ``engine``: the ``engine`` and ``eager-engine`` plans) with an engine other than ``none``.
        Plain PyTorch plans (the calibration runs), super operators and megakernels do not."""
        return self.engine != "none" and self.execution.fusion == "engine"

    @property
    def engine_step_s(self) -> float:
        """The engine's own cost per iteration [s] (``datasets/engines.csv``).

        Only steps inside an engine (:attr:`runs_engine`) carry it.
        """
        if not self.runs_engine:
            return 0.0
        from .perf.engines import engine_step_s

        return engine_step_s(self.engine, self.hardware.vendor, self.engine_kernels)

    @functools.cached_property
    def engine_kernels(self) -> float:
        """Kernels one decode iteration of this deployment launches per chip (the core's count
        for the execution plan; it sets the engine's per-iteration cost) [kernels]. Cached across
        equal deployments (a validation set holds many rows of one deployment)."""
        return _engine_kernels(self)

    def _kw(self) -> dict[str, Any]:
        return dict(weight_precision=self.weight_precision, expert_precision=self.expert_precision,
                    kv_precision=self.kv_precision, ar_impl=self.ar_impl, a2a_impl=self.a2a_impl,
                    ar_algo=self.ar_algo or None, expert_balance=self.expert_balance,
                    kernel_release=self.kernel_release)

    @property
    def kernel_release(self) -> tuple[str, str] | None:
        """``(engine, release)`` whose GEMM and fused-MoE kernels the steps are timed with: only
        steps inside the engine (:attr:`runs_engine`) run its kernels, and only a stated release
        differs from the newest (:mod:`tokenomics.perf.kernel_versions`)."""
        if not (self.engine_version and self.runs_engine):
            return None
        return (self.engine, self.engine_version)

    def decode(self, batch: Any = 1, context_tok: Any = 2048, *, check_memory: bool = True,
               profile: Any = None, engine_step_s: float | None = None):
        """One decode step of ``batch`` sequences per replica (communication included).

        ``engine_step_s`` overrides the engine's fitted iteration cost (fitting only) [s].

        Returns
        -------
        tokenomics.perf.system.SystemStepResult
        """
        from .perf.system import system_step

        return system_step(self.system, self.model, self.execution, self.parallel, batch=batch,
                           context_tok=context_tok, spec=self.spec, overlap=self.overlap,
                           check_memory=check_memory, profile=profile,
                           engine_step_s=self.engine_step_s if engine_step_s is None else engine_step_s,
                           mem_frac=self.mem_frac, **self._kw())

    @property
    def prefill_chunk_per_rank_tok(self) -> int:
        """Prompt tokens one attention data-parallel rank prefills per step [tokens]: SGLang divides
        its ``--chunked-prefill-size`` among the ranks ("DP attention is enabled. The chunked
        prefill size is adjusted", ``ServerArgs._handle_data_parallelism``); vLLM and TensorRT-LLM
        give each rank the whole budget."""
        dp = int(self.parallel.attn_dp)
        if self.engine == "sglang" and dp > 1:
            return max(1, self.prefill_chunk_tok // dp)
        return self.prefill_chunk_tok

    def prefill_batch(self, prompt_tok: Any) -> np.ndarray:
        """Prompts prefilled together per replica: ``max(1, chunk // prompt_tok)`` on each attention
        data-parallel rank, ``chunk`` the rank's budget (:attr:`prefill_chunk_per_rank_tok`) [prompts]."""
        per_rank = np.maximum(1, self.prefill_chunk_per_rank_tok // np.asarray(prompt_tok, dtype=int))
        return per_rank * int(self.parallel.attn_dp)

    def prefill(self, prompt_tok: Any = 1024, *, batch: Any = None, profile: Any = None):
        """Prefill of a chunk of prompts (``batch`` defaults to :meth:`prefill_batch`).

        Returns
        -------
        types.SimpleNamespace
            As :func:`tokenomics.perf.system.system_prefill`.
        """
        from .perf.system import system_prefill

        b = self.prefill_batch(prompt_tok) if batch is None else batch
        return system_prefill(self.system, self.model, self.execution, self.parallel,
                              prompt_tok=prompt_tok, batch=b, profile=profile, overlap=self.overlap, spec=self.spec,
                              **self._kw())

    def max_batch(self, context_tok: Any = 2048) -> Any:
        """Largest batch per replica whose weights and KV fit every chip [sequences]."""
        from .perf.parallel import max_batch_per_replica

        return max_batch_per_replica(self.model, self.system, self.parallel, context_tok=context_tok,
                                     weight_precision=self.weight_precision,
                                     expert_precision=self.expert_precision,
                                     kv_precision=self.kv_precision, mem_frac=self.mem_frac)

    def batch_grid(self, context_tok: Any = 2048, n_max: int | None = None) -> np.ndarray:
        """Batches 1, 2, 4, ... (and midpoints) up to the largest that fits, at most ``n_max``
        (default 512 sequences per chip of the replica) [sequences]."""
        n_max = 512 * self.replica_chips if n_max is None else int(n_max)
        top = min(int(np.min(self.max_batch(context_tok))), n_max)
        if top < 1:
            raise DoesNotFitError(f"{self.label()}: not even one sequence of {int(np.max(context_tok))} "
                                  f"tokens fits next to the weights; use more chips or a smaller precision")
        grid = 2 ** np.arange(0, int(math.log2(top)) + 1)
        mid = np.unique(np.round(np.sqrt(grid[:-1] * grid[1:])).astype(int)) if len(grid) > 1 else grid
        return np.unique(np.concatenate([grid, mid, [top]])).astype(int)

    def batch_for_target(self, tok_per_s_per_user: float, context_tok: Any = 2048) -> int:
        """The cheapest batch (most tokens/s per chip) that still gives each user the target speed.

        Raises
        ------
        TargetSpeedError
            When even batch 1 is slower than the target (the message gives the fastest speed).
        """
        v.positive(tok_per_s_per_user, "target tok/s per user")
        b = self.batch_grid(context_tok)
        r = self.decode(b, context_tok, check_memory=False)
        user = np.asarray(r.tok_per_s_per_user, float) * np.ones(b.shape)
        chip = np.asarray(r.tok_per_s_per_chip, float) * np.ones(b.shape)
        ok = user >= tok_per_s_per_user
        if not ok.any():
            raise TargetSpeedError(
                f"no batch reaches {tok_per_s_per_user:g} tok/s per user with {self.label()}; the "
                f"fastest is {float(user.max()):.1f} tok/s per user at batch {int(b[int(np.argmax(user))])}")
        best = int(b[ok][int(np.argmax(chip[ok]))])
        above = b[b > best]
        if len(above):  # refine between the best grid point and the next one, every integer
            fine = np.arange(best, int(above[0]) + 1)
            r = self.decode(fine, context_tok, check_memory=False)
            u = np.asarray(r.tok_per_s_per_user, float) * np.ones(fine.shape)
            c = np.asarray(r.tok_per_s_per_chip, float) * np.ones(fine.shape)
            good = u >= tok_per_s_per_user
            best = int(fine[good][int(np.argmax(c[good]))])
        return best


# ---- resolver -----------------------------------------------------------------------------


def layout_candidates(dep: Deployment) -> list[Deployment]:
    """Other layouts of a deployment on the same system (weights fit), for a target speed.

    A production planner picks the layout with the target speed in mind: for a dense model a
    wider ``tp`` serves each user faster and leaves more memory for KV; for an MoE model resolved
    to wide EP (attention data-parallel over the expert group), attention tensor-parallel in
    groups of ``t`` chips inside that group (``tp = t``, ``ep`` unchanged, attention data-parallel
    over ``ep / t`` groups: SGLang's ``--tp`` with ``--dp``, TensorRT-LLM's attention TP inside
    EP) for every ``t`` the heads divide that divides the group, up to ``t = ep`` (no expert
    all-to-all and no rank waiting for another's prompt), within one scale-up domain: each chip
    reads ``1 / t`` of the attention weights instead of all of them, at the cost of the
    all-reduces and, for MLA, of every rank of a group holding the group's whole latent KV.
    Every other expert group too, smaller or larger than the resolver's: ``ep = g`` for every
    ``g`` that divides the system's chips (no chip left idle), fits one scale-up domain and holds
    the weights, each with the same attention tensor-parallel choices inside it (``n_chips / g``
    replicas; e.g. DeepSeek-V3 at tp8-ep8 on a GB200 NVL72, the layout that serves one user
    fastest, 112 against 95 tok/s for the best 72-chip group; Qwen3-235B on an MI355X-8 at
    tp8-ep8 where the resolver picked tp4-ep4): a smaller group pays shorter all-to-alls and less
    waiting on the busiest rank, each chip holding more experts; a larger one spreads the
    experts' weight reads over more chips. Each is resolved as the user's deployment with that layout
    (:func:`_user_settings`; expert balancing re-derived for its ``ep``).
    A layout that sets ``moe_tp`` is kept as given.
    """
    from .perf.parallel import ParallelPlan

    m, s = dep.model, dep.system
    if dep.parallel.pp != 1:
        return [dep]
    if m.is_moe:
        n = int(dep.parallel.ep)
        if dep.parallel.moe_tp is not None:
            return [dep]
        from .errors import TokenomicsError

        kw = _user_settings(dep)
        if not any(p.startswith("expert balance") for p in dep.picked):
            kw["expert_balance"] = dep.expert_balance  # the user's, not the resolver's
        out = [dep]
        # the resolver's expert group n first, then every other one, largest first (n_chips / g replicas)
        limit = min(s.n_chips, s.domain_chips or s.n_chips)
        groups = [n] + [g for g in range(limit, 1, -1) if g != n and s.n_chips % g == 0]
        for g in groups:
            # attention tensor-parallel in groups of t chips inside the expert group (attention
            # data-parallel over g / t groups; SGLang --tp with --dp, TensorRT-LLM attention TP
            # with EP), up to t = g: no expert all-to-all and no rank waiting for another's prompt
            for t in _tp_candidates(m, min(g, s.domain_chips)):
                if g % t or (g == n and t == dep.parallel.tp) or not _weights_fit(
                        m, dep.hardware, t, g, dep.weight_precision, dep.expert_precision, 0.02, dep.mem_frac):
                    continue
                if g == n:  # the user's deployment, attention split inside its expert group
                    c = dep.replace(parallel=ParallelPlan(tp=t, ep=n, dp=max(1, s.n_chips // n)))
                    what = ("attention tensor-parallel over the expert group" if t == n else
                            f"attention tensor-parallel in groups of {t}, data-parallel over {n // t}")
                    note = f"layout tp{t}-ep{n}, {what}"
                else:  # resolved as the user's deployment with that layout
                    try:
                        c = resolve(m, system=s, tp=t, ep=g, **kw)
                    except TokenomicsError:
                        continue
                    what = ("attention data-parallel" if t == 1 else "attention tensor-parallel" if t == g else
                            f"attention tensor-parallel in groups of {t}")
                    note = f"layout tp{t}-ep{g} ({s.n_chips // g} replicas), {what}"
                out.append(c.replace(picked=tuple(p for p in c.picked if not p.startswith("layout"))
                                     + (f"{note} (cheapest layout meeting the target speed)",)))
        return out
    out = []
    for t in _tp_candidates(m, min(s.domain_chips, s.n_chips)):
        if not _weights_fit(m, dep.hardware, t, 1, dep.weight_precision, dep.expert_precision, 0.02, dep.mem_frac):
            continue
        par = ParallelPlan(tp=t, ep=1, dp=max(1, s.n_chips // t))
        out.append(dep if t == dep.parallel.tp else dep.replace(
            parallel=par, picked=tuple(p for p in dep.picked if not p.startswith("layout"))
            + (f"layout tp{t}-ep1 (cheapest layout meeting the target speed)",)))
    return out or [dep]


def on_larger_systems(dep: Deployment) -> list[Deployment]:
    """The same deployment resolved on each larger catalogued system of its chip, for a target
    speed its own system cannot reach; empty when the user named the system.

    The resolver picks the smallest system that holds the model (one H200 for Llama 3.1 8B),
    whose layouts may all be too slow for a fast target (tp1: 184 tok/s per user at most); a
    DGX H200 allows tp2-tp8. The user's settings travel (plan, engine, precisions, speculative
    decoding, chunk, memory fraction, and collectives or overlap they changed from the
    defaults); the layout is re-resolved for each system.

    Returns
    -------
    list of Deployment
        One per larger system of the chip that holds the model, smallest first; each says in
        ``picked`` which system it is.
    """
    from .errors import TokenomicsError

    if not (getattr(dep.system, "kind", "") == "chip" or any(p.startswith("system ") for p in dep.picked)):
        return []
    kw = _user_settings(dep)
    out = []
    for s in _systems_of(dep.hardware.name):
        if s.n_chips <= dep.system.n_chips:
            continue
        try:
            base = resolve(dep.model, system=s, **kw)
        except TokenomicsError:
            continue
        out.append(base.replace(picked=tuple(p for p in base.picked if not p.startswith("system "))
                                + (f"system {s.name} (the smallest {dep.hardware.name} system whose layouts "
                                   "meet the target speed)",)))
    return out


def _user_settings(dep: Deployment) -> dict[str, Any]:
    """What of ``dep`` travels when its layout or system is re-resolved (:func:`resolve`
    keywords): plan, engine, precisions, speculative decoding, chunk, memory fraction, and the
    collectives (implementations, all-reduce algorithm) or overlap the user changed from the defaults."""
    kw: dict[str, Any] = dict(execution=dep.execution, engine=dep.engine, engine_version=dep.engine_version or None,
                              weight_precision=dep.weight_precision,
                              expert_precision=dep.expert_precision if dep.model.is_moe else None,
                              kv_precision=dep.kv_precision, spec=dep.spec, prefill_chunk_tok=dep.prefill_chunk_tok,
                              mem_frac=dep.mem_frac)
    for f, default in (("ar_impl", "auto"), ("a2a_impl", "auto"), ("ar_algo", ""), ("overlap", "none")):
        if getattr(dep, f) != default:
            kw[f] = getattr(dep, f)
    return kw


def _one_chip_system(hw: Accelerator):
    from .perf.parallel import System

    link = hw.scaleup_bytes_per_s if np.isfinite(hw.scaleup_bytes_per_s) else 1e11
    return System(name=hw.name, accelerator=hw, n_chips=1, topology="switch", link_bytes_per_s=link,
                  display_name=f"one {hw.name}", kind="chip",
                  source="bare accelerator (datasets/accelerators.csv)", as_of=hw.as_of)


@functools.lru_cache(maxsize=512)
def _engine_kernels(dep: "Deployment") -> float:
    """:attr:`Deployment.engine_kernels` of one deployment (a frozen, hashable value)."""
    from .perf.system import system_kernels

    return system_kernels(dep.system, dep.model, dep.execution, dep.parallel, batch=1, context_tok=1024, spec=dep.spec,
                          weight_precision=dep.weight_precision, kv_precision=dep.kv_precision,
                          expert_precision=dep.expert_precision)


def _systems_of(hw_name: str) -> list:
    """Catalogued systems of one accelerator, fewest chips first (cached per data directory)."""
    from .catalog import data_dir

    return list(_systems_of_cached(hw_name, str(data_dir())))


@functools.lru_cache(maxsize=64)
def _systems_of_cached(hw_name: str, _dir: str) -> tuple:
    from .perf.parallel import system, systems_table

    df = systems_table()
    rows = df[df["accelerator"].astype(str) == hw_name].sort_values("n_chips")
    return tuple(system(n) for n in rows.index)


def _systems_that_hold(m: ModelSpec, wprec: str, eprec: str, mem_frac: Any = None, n_max: int = 3) -> list[str]:
    """The ``n_max`` smallest catalogued systems (fewest chips, then name) whose chips hold the
    model's weights at their widest layout (every chip a tensor or expert shard), for an error
    that says where the model does fit."""
    from .perf.parallel import system, systems_table

    found = []
    for name, row in systems_table().iterrows():
        try:
            s = system(name)
        except Exception:  # noqa: BLE001 -- a catalogue row the performance model cannot take
            continue
        if _weights_fit(m, s.accelerator, *_widest_layout(m, s.n_chips), wprec, eprec, 0.0, mem_frac):
            found.append((s.n_chips, str(name)))
    return [name for _, name in sorted(found)[:n_max]]


def _widest_layout(m: ModelSpec, n_chips: int) -> tuple[int, int]:
    """``(tp, ep)`` that splits the model over the most of ``n_chips`` chips: the widest tp the
    heads allow and, for an MoE model, the largest divisor of the chip count up to one chip per
    expert (the resolver's wide-EP rule)."""
    ep = max(c for c in range(1, min(n_chips, m.n_experts) + 1) if n_chips % c == 0) if m.is_moe else 1
    return _tp_candidates(m, n_chips)[-1], ep


def _tp_candidates(m: ModelSpec, limit: int) -> list[int]:
    out = []
    tp = 1
    while tp <= limit:
        ok = m.n_q_heads % tp == 0
        if ok and m.attention == "gqa" and tp > 1:
            kv = m.n_kv_heads
            ok = (tp <= kv and kv % tp == 0) or (tp > kv and tp % kv == 0)
        if ok:
            out.append(tp)
        tp *= 2
    return out


def _weights_fit(m, hw, tp, ep, wprec, eprec, frac, mem_frac=None):
    from .perf.memory import usable_hbm_bytes, weight_bytes_per_chip

    w = weight_bytes_per_chip(m, tp=tp, ep=ep, weight_precision=wprec, expert_precision=eprec)
    return w <= (1 - frac) * usable_hbm_bytes(hw, mem_frac=mem_frac)


def resolve(model: Any, *, hardware: Any = None, system: Any = None, tp: int | None = None,
            ep: int | None = None, pp: int = 1, dp_attention: bool | None = None,
            execution: Any = None, engine: str | None = None, weight_precision: str | None = None,
            expert_precision: str | None = None, kv_precision: str | None = None, spec: Any = None,
            ar_impl: str | None = None, a2a_impl: str | None = None, overlap: str | None = None,
            prefill_chunk_tok: int | None = None, expert_balance: str | None = None,
            engine_version: str | None = None, ar_algo: str | None = None,
            mem_frac: float | None = None, moe_tp: int | None = None) -> Deployment:
    """Build a :class:`Deployment`, filling what was not given as a production engine would.

    Parameters
    ----------
    model : str or ModelSpec
    hardware : str or Accelerator, optional
        The accelerator (with ``system`` it must be the system's).
    system : str or System, optional
        A catalogued system (``tokenomics systems``).
    tp, ep, pp : int, optional
        Layout; ``ep`` alone on an MoE model keeps attention data-parallel (tp 1);
        ``tp`` alone keeps experts TP-sharded (ep 1), the vLLM/SGLang default.
    dp_attention : bool, optional
        With ``tp`` and ``ep`` both unset on an MoE model: True (default) = wide EP with
        attention data parallelism; False = one TP group over the chips with TP-sharded experts.
    moe_tp : int, optional
        With ``tp`` / ``ep``: tensor-parallel ways inside each routed expert where the stage does
        not imply them (:class:`~tokenomics.perf.parallel.ParallelPlan` ``moe_tp``: attention
        data-parallel groups over ``ep * moe_tp`` chips, experts split both ways).
    execution, engine, weight_precision, expert_precision, kv_precision, spec, ar_impl,
    a2a_impl, ar_algo, overlap, prefill_chunk_tok, expert_balance, engine_version, mem_frac
        As :class:`Deployment` (defaults in the module docstring).

    Raises
    ------
    ValidationError, DoesNotFitError, UnknownNameError
        One line naming what was wrong and what would work.
    """
    # in steps, each choice made for the user recorded in ``picked`` in this order: settings, chips,
    # precisions, layout (given or searched), replicas on the system, the engine's own choices
    m, engine, engine_version, dp_attention = _resolve_settings(
        model, engine=engine, engine_version=engine_version, mem_frac=mem_frac, dp_attention=dp_attention, ep=ep,
        expert_precision=expert_precision, overlap=overlap, expert_balance=expert_balance, moe_tp=moe_tp)
    hw, sys_ = _resolve_chips(hardware, system)
    picked: list[str] = []
    wprec, eprec, kvprec = _resolve_precisions(m, hw, weight_precision, expert_precision, kv_precision, picked)
    _check_layout_numbers(m, tp=tp, ep=ep, pp=pp, moe_tp=moe_tp)
    if tp is not None or ep is not None:
        sys_, layout = _given_layout(hw, sys_, tp=tp, ep=ep, pp=pp, moe_tp=moe_tp, picked=picked)
    else:
        sys_, layout = _search_layout(m, hw, sys_, wprec=wprec, eprec=eprec, mem_frac=mem_frac,
                                      dp_attention=dp_attention, picked=picked)
    par = _parallel_plan(sys_, layout, pp=pp, moe_tp=moe_tp, picked=picked)
    exe, overlap, expert_balance = _engine_choices(m, engine, execution=execution, overlap=overlap,
                                                   expert_balance=expert_balance, ep=layout[1], picked=picked)
    dep = Deployment(
        model=m, system=sys_, parallel=par, execution=exe, engine=engine or "default",
        engine_version=engine_version or "",
        weight_precision=wprec, expert_precision=eprec, kv_precision=kvprec, spec=_spec(spec),
        ar_impl=ar_impl or "auto", a2a_impl=a2a_impl or "auto", ar_algo=ar_algo or "", overlap=overlap or "none",
        prefill_chunk_tok=(default_prefill_chunk_tok(engine or "default", hw) if prefill_chunk_tok is None
                           else prefill_chunk_tok),
        expert_balance=expert_balance or "none", mem_frac=mem_frac, picked=tuple(picked))
    if dep.engine_version:  # what the release changes, read off the validated deployment
        from .perf.kernel_versions import release_note

        note = release_note(hw.name, dep.engine, dep.engine_version, runs_engine=dep.runs_engine,
                            is_moe=bool(dep.model.is_moe))
        dep = dep.replace(picked=dep.picked + (note,))
    return dep


def _resolve_settings(model: Any, *, engine: str | None, engine_version: str | None, mem_frac: float | None,
                      dp_attention: bool | None, ep: int | None, expert_precision: str | None,
                      overlap: str | None, expert_balance: str | None,
                      moe_tp: int | None) -> tuple[ModelSpec, str | None, str | None, bool | None]:
    """:func:`resolve`'s first step: the model, and the settings that need no chips checked.

    Parameters
    ----------
    model : str or ModelSpec
    engine, engine_version : str, optional
        ``engine`` may carry its release (``sglang@0.4.3``), split off here.
    mem_frac : float, optional
        Share of device memory the engine may use (0, 1].
    dp_attention : bool, optional
    ep, expert_precision, overlap, expert_balance, moe_tp : optional
        As :func:`resolve`; refused where they change nothing for the model (:func:`_check_effect`).

    Returns
    -------
    (ModelSpec, str or None, str or None, bool or None)
        The model, the engine and its release, ``dp_attention`` as a flag.

    Raises
    ------
    ValidationError, UnknownNameError
        One line naming the setting and what was expected.
    """
    from .catalog import model as _model

    m = model if isinstance(model, ModelSpec) else _model(str(model))
    if engine is not None and "@" in str(engine):  # sglang@0.4.3: the engine at one release
        from .perf.engines import split_engine

        engine, engine_version = split_engine(engine, engine_version)
    if mem_frac is not None:
        v.fraction(mem_frac, "mem_frac", allow_zero=False)
    dp_attention = v.flag(dp_attention, "dp_attention", optional=True)
    _check_effect(m, ep=ep, dp_attention=dp_attention, expert_precision=expert_precision, overlap=overlap,
                  expert_balance=expert_balance, moe_tp=moe_tp)
    if engine_version is not None:
        _check_engine_version(engine, engine_version)
    return m, engine, engine_version, dp_attention


def _resolve_chips(hardware: Any, system: Any) -> tuple[Accelerator, Any]:
    """:func:`resolve`'s accelerator and named system (None where none was named).

    Parameters
    ----------
    hardware : str or Accelerator, optional
    system : str or System, optional
        At least one of the two; with both, the system must be of that accelerator.

    Returns
    -------
    (Accelerator, System or None)

    Raises
    ------
    ValidationError, UnknownNameError
        Neither given, an unknown name, or a system of another accelerator.
    """
    from .catalog import accelerator as _acc
    from .perf.parallel import System, system as _system

    if system is None and hardware is None:
        raise ValidationError("give the hardware (e.g. h200) or a system (e.g. dgx-h200) to deploy on")
    hw = None
    if hardware is not None:
        hw = hardware if isinstance(hardware, Accelerator) else _acc(str(hardware))
    sys_ = None
    if system is not None:
        sys_ = system if isinstance(system, System) else _system(str(system))
        if hw is not None and hw.name != sys_.accelerator.name:
            raise ValidationError(
                f"--hardware {hw.name} conflicts with --system {sys_.name} (a system of "
                f"{sys_.accelerator.name}); give one of them, or the matching pair")
        hw = sys_.accelerator
    return hw, sys_


def _resolve_precisions(m: ModelSpec, hw: Accelerator, weight_precision: str | None, expert_precision: str | None,
                        kv_precision: str | None, picked: list[str]) -> tuple[str, str, str]:
    """Weight, expert and KV precisions of :func:`resolve`: the given ones, else the model's native
    weights and a bf16 KV cache; an FP8 checkpoint on a chip whose INT8 path outruns its FP8 one
    is served W8A8 INT8 (noted in ``picked``).

    Returns
    -------
    (str, str, str)
        Weight, expert and KV precision.

    Raises
    ------
    UnknownNameError
        A precision not in :data:`tokenomics.specs.PRECISION_BYTES`.
    """
    kvprec = kv_precision or "bf16"
    for name, val in (("weight precision", weight_precision), ("expert precision", expert_precision),
                      ("KV precision", kvprec)):
        if val is not None and val not in PRECISION_BYTES:
            raise unknown_name(name, val, PRECISION_BYTES)
    wprec, eprec = component_precisions(m, weight_precision, expert_precision)
    if hw.peak_flop_per_s("int8") > hw.peak_flop_per_s("fp8"):
        # an FP8 checkpoint on a chip whose INT8 path outruns its FP8 one (Ascend: no FP8 path) is
        # served W8A8 INT8, as CloudMatrix-Infer, SGLang and vLLM-Ascend serve DeepSeek
        # (datasets/serving_ascend.csv); a precision the user gave is kept
        w8 = "int8" if wprec == "fp8" and weight_precision is None else wprec
        e8 = "int8" if eprec == "fp8" and expert_precision is None and weight_precision is None else eprec
        if (w8, e8) != (wprec, eprec):
            wprec, eprec = w8, e8
            picked.append(f"weights int8 (W8A8: {hw.name} has no FP8 tensor path; its engines serve FP8 "
                          "checkpoints quantized to INT8)")
    return wprec, eprec, kvprec


def _check_layout_numbers(m: ModelSpec, *, tp: int | None, ep: int | None, pp: int, moe_tp: int | None) -> None:
    """Refuse layout numbers that are not counts, expert parallelism on a dense model, and a
    ``moe_tp`` without the layout it splits (one line each)."""
    v.count(pp, "pp")
    for name, val in (("tp", tp), ("ep", ep)):
        if val is not None:
            v.count(val, name)
    if ep is not None and ep > 1 and not m.is_moe:
        raise ValidationError(f"ep={ep} needs a mixture-of-experts model; {m.name} is dense (use ep 1)")
    if moe_tp is not None and tp is None and ep is None:
        raise ValidationError("moe_tp splits the experts of a given layout; give tp and ep with it")


def _layout_chips(tp: int, ep: int, pp: int, moe_tp: int | None) -> int:
    """Chips one replica of a ``tp``-``ep``-``pp`` layout takes (its stage's chips times ``pp``)."""
    from .perf.parallel import ParallelPlan

    return ParallelPlan(tp=tp, ep=ep, moe_tp=moe_tp).stage_chips * pp


def _given_layout(hw: Accelerator, sys_: Any, *, tp: int | None, ep: int | None, pp: int, moe_tp: int | None,
                  picked: list[str]) -> tuple[Any, tuple[int, int]]:
    """The system and ``(tp, ep)`` of a layout the user gave (an unset one of the two is 1).

    Without a named system: one chip where the layout needs one, else the smallest catalogued
    system of ``hw`` with enough chips, preferring one whose chip count the layout divides
    (noted in ``picked``).

    Raises
    ------
    ValidationError
        No catalogued system of ``hw`` has enough chips (the catalogued ones listed).
    """
    tp_ = tp if tp is not None else 1
    ep_ = ep if ep is not None else 1
    chips = _layout_chips(tp_, ep_, pp, moe_tp)
    if sys_ is None:
        cands = sorted([s for s in _systems_of(hw.name) if s.n_chips >= chips],
                       key=lambda s: (s.n_chips % chips != 0, s.n_chips))
        if chips == 1:
            sys_ = _one_chip_system(hw)
        elif cands:
            sys_ = cands[0]
            picked.append(f"system {sys_.name} (smallest catalogued {hw.name} system for {chips} chips)")
        else:
            have = [f"{s.name} ({s.n_chips})" for s in _systems_of(hw.name)] or ["none"]
            raise ValidationError(
                f"a {chips}-chip layout needs a system of {hw.name}; catalogued: {', '.join(have)}")
    return sys_, (tp_, ep_)


def _layout_options(m: ModelSpec, s: Any, *, wide_ep: bool, attn_tp: bool, named: bool) -> list[tuple[int, int]]:
    """Candidate ``(tp, ep)`` layouts of :func:`_search_layout` on system ``s``, preferred first.

    Parameters
    ----------
    m : ModelSpec
    s : System
    wide_ep : bool
        Expert parallelism over the system with attention data parallelism (MoE models); else
        tensor parallelism inside one scale-up domain.
    attn_tp : bool
        Wide EP with tensor-parallel attention inside the expert group.
    named : bool
        The user named the system: wide EP spans all of it (else every power of two up to it).
    """
    n = s.n_chips if wide_ep else min(s.domain_chips, s.n_chips)
    if wide_ep and n > m.n_experts:
        n = _widest_layout(m, s.n_chips)[1]  # at most one chip per expert
    if not wide_ep:
        return [(t, 1) for t in _tp_candidates(m, n) if s.n_chips % t == 0]
    if attn_tp:
        # attention too large to replicate on every chip (Kimi K3: ~110 GB of BF16
        # attention and shared experts): tensor-parallel attention inside the expert
        # group, the smallest tp that fits, data-parallel over the rest
        return [(t, n) for t in _tp_candidates(m, n) if t > 1 and n % t == 0 and s.n_chips % n == 0]
    # wide EP, attention data-parallel (tp 1); on a named system, over n chips
    sizes = [n] if named else sorted({c for c in (1, 2, 4, 8, 16, 32, 64, n) if c <= n})
    return [(1, c) for c in sizes if s.n_chips % c == 0]


def _search_layout(m: ModelSpec, hw: Accelerator, sys_: Any, *, wprec: str, eprec: str, mem_frac: float | None,
                   dp_attention: bool | None, picked: list[str]) -> tuple[Any, tuple[int, int]]:
    """The system and ``(tp, ep)`` :func:`resolve` picks when the user gave no layout (module
    docstring: **chips**, **layout**); the system and layout it picked are noted in ``picked``.

    First a layout that leaves :data:`MIN_KV_FRAC` of memory for KV, else one where the weights
    fit; wide EP tries attention tensor parallelism only when no data-parallel layout fits.
    Systems within one scale-up domain come first: a cluster of nodes joined by NICs only when no
    single domain holds the weights (operators serve a model on one node where it fits).

    Raises
    ------
    DoesNotFitError
        No layout holds the weights (the weights per chip at the widest layout, the usable memory
        and the smallest catalogued systems that would hold them).
    """
    systems = [sys_] if sys_ is not None else [_one_chip_system(hw)] + _systems_of(hw.name)
    wide_ep = m.is_moe and dp_attention is not False
    tiers = [t for t in ([s for s in systems if s.n_chips <= s.domain_chips],
                         [s for s in systems if s.n_chips > s.domain_chips]) if t]
    for attn_tp in ((False, True) if wide_ep else (False,)):
        for tier in tiers:
            for kv_frac in (MIN_KV_FRAC, 0.02):
                for s in tier:
                    layout = next((lt for lt in _layout_options(m, s, wide_ep=wide_ep, attn_tp=attn_tp,
                                                                named=sys_ is not None)
                                   if _weights_fit(m, hw, lt[0], lt[1], wprec, eprec, kv_frac, mem_frac)), None)
                    if layout is None:
                        continue
                    if sys_ is None and s.n_chips > 1:
                        picked.append(f"system {s.name} (smallest catalogued {hw.name} system that holds the model)")
                    picked.append(f"layout tp{layout[0]}-ep{layout[1]}"
                                  + (" with attention data parallelism" if layout[1] > layout[0] else "")
                                  + (" (smallest tp that fits, leaving KV room)" if not wide_ep else
                                     " (wide expert parallelism)"))
                    return s, layout
    raise _does_not_fit(m, hw, systems[-1], wprec, eprec, mem_frac)


def _does_not_fit(m: ModelSpec, hw: Accelerator, s: Any, wprec: str, eprec: str,
                  mem_frac: float | None) -> DoesNotFitError:
    """The error of a model whose weights no layout on ``s`` holds: the weights per chip at the
    widest layout against the usable memory, and the catalogued systems that would hold them."""
    from .perf.memory import usable_hbm_bytes, weight_bytes_per_chip
    from .perf.parallel import WEIGHT_OFFLOAD
    from .units import fmt_bytes

    tp_w, ep_w = _widest_layout(m, s.n_chips)
    w = weight_bytes_per_chip(m, tp=tp_w, ep=ep_w, weight_precision=wprec, expert_precision=eprec)
    hold = _systems_that_hold(m, wprec, eprec, mem_frac)
    return DoesNotFitError(
        f"{m.name} at {wprec}{'' if eprec == wprec or not m.is_moe else f' (experts {eprec})'} "
        f"does not fit on {s.name}: {fmt_bytes(w)} of weights per chip "
        f"at the widest layout vs {fmt_bytes(usable_hbm_bytes(hw, mem_frac=mem_frac))} usable "
        f"({WEIGHT_OFFLOAD}); use a larger "
        + (f"system (catalogued ones that hold it: {', '.join(hold)})" if hold else
           "system (tokenomics systems)") + " or a smaller precision")


def _parallel_plan(sys_: Any, layout: tuple[int, int], *, pp: int, moe_tp: int | None,
                   picked: list[str]) -> Any:
    """The :class:`~tokenomics.perf.parallel.ParallelPlan` of ``layout`` on ``sys_``: replicas
    over the system's chips (chips left over noted in ``picked``).

    Raises
    ------
    ValidationError
        The layout needs more chips than the system has, or ``tp`` and ``ep`` do not nest.
    """
    from .perf.parallel import ParallelPlan

    tp_, ep_ = layout
    chips = _layout_chips(tp_, ep_, pp, moe_tp)
    if chips > sys_.n_chips:
        raise ValidationError(
            f"layout tp{tp_}-ep{ep_}-pp{pp} uses {chips} chips, more than {sys_.name}'s {sys_.n_chips}; "
            f"use a layout of at most {sys_.n_chips} chips (or a larger system)")
    if sys_.n_chips % chips:
        picked.append(f"{sys_.n_chips // chips} replicas of {chips} chips; {sys_.n_chips % chips} chips of "
                      f"{sys_.name} left out of the price (per-chip figures count serving chips)")
    if moe_tp is None and max(tp_, ep_) % min(tp_, ep_):
        raise ValidationError(
            f"tp={tp_} and ep={ep_} must nest (one a multiple of the other); e.g. tp {tp_} with ep "
            f"{tp_ * max(1, ep_ // tp_)}")
    return ParallelPlan(tp=tp_, ep=ep_, pp=pp, dp=sys_.n_chips // chips, moe_tp=moe_tp)


def _engine_choices(m: ModelSpec, engine: str | None, *, execution: Any, overlap: str | None,
                    expert_balance: str | None, ep: int, picked: list[str]) -> tuple[ExecutionPlan, Any, Any]:
    """The execution plan, overlap and expert balance of :func:`resolve`: the given ones, else
    the engine's plan, what the engine does unasked (``datasets/engine_defaults.csv``) and EPLB
    from expert parallelism :data:`WIDE_EP_BALANCE_MIN` up (each choice noted in ``picked``).

    Returns
    -------
    (ExecutionPlan, str or None, str or None)
        The plan, the overlap and the expert balance (None: the :class:`Deployment` default).
    """
    from .perf.engines import engine_default

    if execution is None:
        execution = "engine"
        picked.append("plan engine (serving-engine kernels, CUDA graphs)")
    exe = _plan(execution)
    for setting, given in (("overlap", overlap), ("expert_balance", expert_balance)):
        dflt = engine_default(engine or "default", setting, m.is_moe, ep) if given is None else None
        if dflt is not None and dflt[0] != "none":  # what the engine does unasked (engine_defaults.csv)
            if setting == "overlap":
                overlap = dflt[0]
            else:
                expert_balance = dflt[0]
            picked.append(f"{setting.replace('_', ' ')} {dflt[0]} ({engine}'s default: {dflt[1]})")
    if expert_balance is None and m.is_moe and ep >= WIDE_EP_BALANCE_MIN:
        expert_balance = "eplb"
        picked.append(f"expert balance eplb (EP{ep} >= {WIDE_EP_BALANCE_MIN}: wide-EP production "
                      f"deployments place redundant experts by load)")
    return exe, overlap, expert_balance


def _divisors_text(n: int) -> str:
    d = [k for k in range(1, n + 1) if n % k == 0]
    return ", ".join(map(str, d)) if len(d) <= 12 else ", ".join(map(str, d[:6])) + ", ..., " + str(n)


def _check_effect(m: ModelSpec, *, ep: int | None, dp_attention: bool | None, expert_precision: str | None,
                  overlap: str | None, expert_balance: str | None, moe_tp: int | None) -> None:
    """Refuse settings that change nothing for ``m``: the expert settings of a dense model, a
    ``moe_tp`` that does not split its experts' hidden size (one line naming the setting and why)."""
    if not m.is_moe:
        why = f"has no effect on {m.name}: a dense model has no routed experts"
        given = [("expert_precision", expert_precision is not None, f"--expert-precision {expert_precision}"),
                 ("expert_balance", expert_balance not in (None, "none"), f"--expert-balance {expert_balance}"),
                 ("overlap", overlap == "two-batch",
                  "--overlap two-batch (it hides the expert all-to-all)"),
                 ("dp_attention", dp_attention is not None,
                  f"--{'' if dp_attention else 'no-'}dp-attention (it chooses how attention spreads over an expert group)"),
                 ("moe_tp", moe_tp is not None, f"--moe-tp {moe_tp}")]
        for _, hit, text in given:
            if hit:
                raise ValidationError(f"{text} {why}; drop it")
        return
    if moe_tp is not None and int(moe_tp) > 0 and m.expert_ffn_hidden % int(moe_tp):
        raise ValidationError(
            f"--moe-tp {moe_tp} does not divide {m.name}'s expert hidden size {m.expert_ffn_hidden}; expected "
            f"a divisor of it ({_divisors_text(m.expert_ffn_hidden)})")


def check_expert_groups(dep: Deployment, *, ep_given: bool, balance_given: bool) -> None:
    """Refuse a stated ``ep`` that does not divide the model's expert count when nothing says
    what the spare expert slots hold (no expert balance stated or picked).

    The layout search itself weighs such groups (nine or eighteen chips of a 72-chip rack, each
    chip holding ``ceil(n_experts / ep)`` slots,
    :func:`tokenomics.perf.memory.expert_slots_per_chip`), so
    :func:`resolve` takes them; a command line that names ``--ep 7`` is asked to say so.
    """
    ep, m = dep.parallel.ep, dep.model
    if not ep_given or not m.is_moe or m.n_experts % ep == 0 or balance_given or dep.expert_balance != "none":
        return
    spare = -(-m.n_experts // ep) * ep - m.n_experts
    raise ValidationError(
        f"--ep {ep} does not divide {m.name}'s {m.n_experts} experts, leaving {spare} spare expert slots; expected "
        f"a divisor of {m.n_experts} ({_divisors_text(m.n_experts)}), or say what the spare slots hold: "
        "--expert-balance eplb (redundant copies of the busiest experts) or none (plain copies)")


def _check_engine_version(engine: str | None, engine_version: str) -> None:
    """Refuse a release that cannot change the deployment: no engine named, or a release outside
    the engine-release table's range (``datasets/engine_releases.csv``; one line listing the known
    releases). A release between two known ones (a container build) is placed by
    :mod:`tokenomics.perf.kernel_versions`."""
    from .perf.engines import engines_with_releases, known_releases, version_key

    key = version_key(engine_version)  # not a release number: said first
    name = ENGINE_ALIASES.get(str(engine or "default").strip().lower(), str(engine or "default").strip().lower())
    with_releases = engines_with_releases()
    if name not in with_releases:
        raise ValidationError(
            f"--engine-version {engine_version} has no effect with engine {name} (no release table); give an "
            f"engine whose releases are tabulated with it: {', '.join(with_releases)} (e.g. --engine trt)")
    known = known_releases(name)
    if known and not version_key(known[0]) <= key <= version_key(known[-1]):
        raise ValidationError(f"--engine-version {engine_version}: {name} release not known; known {name} releases: "
                              f"{', '.join(known)}")


#: Keys a deployment TOML file may hold (``[deployment]`` table or top level) and their types
#: (:func:`tokenomics.io.check_table`).
FILE_SCHEMA: dict[str, Any] = {
    "model": str, "hardware": str, "system": str, "tp": int, "ep": int, "pp": int, "dp_attention": bool,
    "execution": str, "engine": str, "weight_precision": str, "expert_precision": str, "kv_precision": str,
    "spec": str, "ar_impl": str, "a2a_impl": str, "ar_algo": str, "overlap": str, "prefill_chunk_tok": int,
    "expert_balance": str, "engine_version": str, "mem_frac": float, "moe_tp": int}
FILE_KEYS = tuple(FILE_SCHEMA)


def from_file(path: str | Path, **overrides: Any) -> Deployment:
    """Read a deployment from a TOML file (keys and types: :data:`FILE_SCHEMA`); ``overrides``
    win over it.

    Examples
    --------
    A file ``k3.toml``::

        model = "deepseek-v3"
        system = "gb200-nvl72"
        tp = 8
        ep = 72

    Raises
    ------
    DataError
        One line: the file unreadable or not TOML, nested too deeply, an unknown key (with the
        closest known ones), a value of the wrong type (``engine = ["vllm"]``, ``tp = "8"``,
        ``dp_attention = "no"``), no model.
    """
    from .errors import DataError
    from .io import check_table, load_document

    p = Path(path)
    label = f"deployment file {str(p)!r}"
    doc = load_document(p, "deployment file", "toml")
    if "deployment" in doc:  # the keys under [deployment], or at the top level
        extra = [k for k in doc if k != "deployment"]
        if extra:
            raise DataError(f"{label}: key {extra[0]!r} sits outside [deployment]; expected every key in that table")
        if not isinstance(doc["deployment"], dict):
            raise DataError(f"{label}: deployment must be a table ([deployment]), got {type(doc['deployment']).__name__}")
        doc = doc["deployment"]
    data = check_table(doc, FILE_SCHEMA, label)
    merged = {**data, **{k: val for k, val in overrides.items() if val is not None}}
    if "model" not in merged:
        raise DataError(f"{label} names no model; expected model = \"NAME\" (tokenomics models)")
    model = merged.pop("model")
    dep = resolve(model, **merged)
    check_expert_groups(dep, ep_given="ep" in merged, balance_given="expert_balance" in merged)
    return dep

"""Measure decode and prefill steps on one GPU in the calibration harness's style (held-out set).

    python tools/h200_steps.py --out DIR [--hardware NAME] [--groups A,B,...] [--quick]

Runs on a machine with a CUDA GPU and PyTorch (nothing else from this repository). It rebuilds the
synthetic Llama-style decoder that ``../shared/calibration/README.md`` describes for
``h200_cases.csv`` (plain PyTorch, random bf16 weights: RMSNorm, q/k/v projections, rotary
omitted, scaled-dot-product attention over a static KV cache of ``context_tok`` positions (GQA),
o projection, SwiGLU MLP, untied embedding and lm head, greedy argmax; MoE layers with a router,
softmax top-k and either a loop over the touched experts or every expert for every token) and
times it in regimes the calibration set does not hold: other model sizes, long contexts, large
batches, multi-token verify steps, MoE, longer prefills. It writes

- ``DIR/steps.csv``: one row per step in the schema of ``h200_cases.csv`` (decode: median
  host wall time of a synchronized step; prefill: median CUDA-event time of one forward, batch 1,
  no embedding or lm head; ``kernels_per_step`` counted with the CUDA profiler on one eager step);
- ``DIR/power.csv``: board power (nvidia-smi, 50 ms samples) during ~2.5 s of back-to-back
  steps (graph decode steps of a few groups; the ``power`` group adds eager decode and prefill);
- ``DIR/env.txt``: GPU, driver, PyTorch and clocks.

Rows are appended as they are measured, so a run stopped early still leaves its rows. On another
GPU, ``--hardware`` names its catalog entry (``tokenomics hardware``) and ``tokenomics calibrate
DIR/steps.csv --out mine.json`` fits a profile on the run (``--groups controls,sizes,long,batch,verify``
gives graph and eager steps of several shapes in about a minute). The bundled
``h200_heldout.csv`` is this tool's 2026-12-04 run on the H200 (docs/validation/serving.md).
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import subprocess
import threading
import time

import torch
import torch.nn.functional as F

DT = torch.bfloat16
ATTN = "gqa"  # --attn: SDPA with enable_gqa, or "expand" (repeat the KV heads first)
RMS = "fp32"  # --rms: RMSNorm computed in fp32 (upcast) or in bf16
MOE = "einsum"  # --moe: the batched einsum, or "bmm" (expand the tokens over experts)
DEV = "cuda"

COLUMNS = ["case_id", "phase", "hardware", "n_chips", "model", "n_layers", "hidden", "ffn_hidden", "n_q_heads",
           "n_kv_heads", "head_dim", "vocab", "n_experts", "experts_per_token", "expert_ffn_hidden",
           "weight_bytes_per_param", "kv_bytes_per_elem", "total_params", "batch", "context_tok",
           "tokens_per_step", "execution", "fusion", "expert_compute", "kernels_per_step", "measured_step_s",
           "source"]

#: name: (n_layers, hidden, ffn_hidden, n_q_heads, n_kv_heads, head_dim, vocab, n_experts, top_k, expert_ffn)
ARCH = {
    "dense-1b": (16, 2048, 8192, 32, 8, 64, 128256, 0, 0, 0),
    "dense-3b": (28, 3072, 8192, 24, 8, 128, 128256, 0, 0, 0),
    "dense-8b": (32, 4096, 14336, 32, 8, 128, 128256, 0, 0, 0),
    "dense-14b": (40, 5120, 13824, 40, 8, 128, 152064, 0, 0, 0),
    "moe-64x8": (16, 2048, 0, 16, 16, 128, 50304, 64, 8, 1024),
    "moe-8x2": (16, 4096, 0, 32, 8, 128, 32000, 8, 2, 14336),
}


def rand(*shape, scale=0.02):
    return (torch.randn(*shape, device=DEV, dtype=torch.float32) * scale).to(DT)


class Decoder:
    """The synthetic decoder; ``fused`` selects one qkv and one gate_up GEMM per layer."""

    def __init__(self, name: str, fused: bool, vocab: bool = True):
        (self.L, self.h, self.f, self.nq, self.nkv, self.hd, self.V, self.E, self.k, self.ef) = ARCH[name]
        if not vocab:
            self.V = 0
        self.name, self.fused = name, fused
        h, f, nq, nkv, hd = self.h, self.f, self.nq, self.nkv, self.hd
        self.layers = []
        n = 0
        for _ in range(self.L):
            p = {"ln1": torch.ones(h, device=DEV, dtype=DT), "ln2": torch.ones(h, device=DEV, dtype=DT)}
            if fused:
                p["wqkv"] = rand(h, (nq + 2 * nkv) * hd)
            else:
                p["wq"], p["wk"], p["wv"] = rand(h, nq * hd), rand(h, nkv * hd), rand(h, nkv * hd)
            p["wo"] = rand(nq * hd, h)
            if self.E:
                p["router"] = rand(h, self.E)
                if fused:
                    p["w13"] = rand(self.E, h, 2 * self.ef)
                else:
                    p["w1"], p["w3"] = rand(self.E, h, self.ef), rand(self.E, h, self.ef)
                p["w2"] = rand(self.E, self.ef, h)
            else:
                if fused:
                    p["w13"] = rand(h, 2 * f)
                else:
                    p["w1"], p["w3"] = rand(h, f), rand(h, f)
                p["w2"] = rand(f, h)
            n += sum(t.numel() for t in p.values())  # as h200_cases.csv: layer norms in, final norm out
            self.layers.append(p)
        self.norm = torch.ones(h, device=DEV, dtype=DT)
        if self.V:
            self.emb, self.head = rand(self.V, h), rand(h, self.V)
            n += 2 * self.V * h
        self.total_params = n
        self.expert_compute = "touched"

    # -- blocks ------------------------------------------------------------------------------
    @staticmethod
    def rms(x, w):
        if RMS == "bf16":  # no fp32 upcast
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(DT) * w

    def attn(self, p, x, kc, vc, pos, causal):
        B, T, _ = x.shape
        nq, nkv, hd = self.nq, self.nkv, self.hd
        if self.fused:
            q, k, v = (x @ p["wqkv"]).split([nq * hd, nkv * hd, nkv * hd], dim=-1)
        else:
            q, k, v = x @ p["wq"], x @ p["wk"], x @ p["wv"]
        q = q.view(B, T, nq, hd).transpose(1, 2)
        k = k.view(B, T, nkv, hd).transpose(1, 2)
        v = v.view(B, T, nkv, hd).transpose(1, 2)
        if kc is not None:
            kc[:, :, pos:pos + T] = k
            vc[:, :, pos:pos + T] = v
            k, v = kc, vc
        if ATTN == "expand":  # GQA by repeating the KV heads (a copy per layer)
            k, v = k.repeat_interleave(nq // nkv, dim=1), v.repeat_interleave(nq // nkv, dim=1)
            o = F.scaled_dot_product_attention(q, k, v, is_causal=causal and kc is None)
        else:
            o = F.scaled_dot_product_attention(q, k, v, is_causal=causal and kc is None, enable_gqa=True)
        return o.transpose(1, 2).reshape(B, T, nq * hd) @ p["wo"]

    def mlp(self, p, x):
        if self.fused:
            g, u = (x @ p["w13"]).chunk(2, dim=-1)
        else:
            g, u = x @ p["w1"], x @ p["w3"]
        return (F.silu(g) * u) @ p["w2"]

    def moe(self, p, x):
        B, T, h = x.shape
        t = x.reshape(B * T, h)
        probs = torch.softmax((t @ p["router"]).float(), dim=-1)
        w, idx = torch.topk(probs, self.k, dim=-1)
        w = (w / w.sum(-1, keepdim=True)).to(DT)
        if self.expert_compute == "all" and MOE == "bmm":  # batched over experts, no weight copies
            dense = torch.zeros(B * T, self.E, device=DEV, dtype=DT).scatter_(1, idx, w)
            te = t.unsqueeze(0).expand(self.E, -1, -1)
            g, u = torch.bmm(te, p["w13"]).chunk(2, dim=-1)
            y = torch.bmm(F.silu(g) * u, p["w2"])
            return (dense.t().unsqueeze(-1) * y).sum(0).view(B, T, h)
        if self.expert_compute == "all":
            dense = torch.zeros(B * T, self.E, device=DEV, dtype=DT).scatter_(1, idx, w)
            if self.fused:
                g, u = torch.einsum("th,ehf->etf", t, p["w13"]).chunk(2, dim=-1)
            else:
                g, u = torch.einsum("th,ehf->etf", t, p["w1"]), torch.einsum("th,ehf->etf", t, p["w3"])
            y = torch.einsum("etf,efh->eth", F.silu(g) * u, p["w2"])
            return torch.einsum("te,eth->th", dense, y).view(B, T, h)
        out = torch.zeros_like(t)
        for e in torch.unique(idx).tolist():
            tok, slot = (idx == e).nonzero(as_tuple=True)
            xe = t[tok]
            if self.fused:
                g, u = (xe @ p["w13"][e]).chunk(2, dim=-1)
            else:
                g, u = xe @ p["w1"][e], xe @ p["w3"][e]
            ye = (F.silu(g) * u) @ p["w2"][e]
            out.index_add_(0, tok, ye * w[tok, slot].unsqueeze(-1))
        return out.view(B, T, h)

    def forward(self, x, cache, pos, causal=False):
        for i, p in enumerate(self.layers):
            kc, vc = (cache[0][i], cache[1][i]) if cache is not None else (None, None)
            x = x + self.attn(p, self.rms(x, p["ln1"]), kc, vc, pos, causal)
            hn = self.rms(x, p["ln2"])
            x = x + (self.moe(p, hn) if self.E else self.mlp(p, hn))
        return x

    def decode(self, tokens, cache, pos):
        x = self.emb[tokens]
        x = self.forward(x, cache, pos)
        return torch.argmax(self.rms(x, self.norm) @ self.head, dim=-1)

    def make_cache(self, batch, ctx):
        shape = (batch, self.nkv, ctx, self.hd)
        return ([torch.zeros(shape, device=DEV, dtype=DT) for _ in range(self.L)],
                [torch.zeros(shape, device=DEV, dtype=DT) for _ in range(self.L)])


def count_kernels(fn) -> int:
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)


def wall_median(fn, n: int, warm: int = 3) -> float:
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def event_median(fn, n: int, warm: int = 2) -> float:
    for _ in range(warm):
        fn()
    ts = []
    for _ in range(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b) / 1e3)
    return statistics.median(ts)


class Power:
    """Board power sampled by nvidia-smi every 50 ms while the block runs."""

    def __enter__(self):
        self.p = subprocess.Popen(["nvidia-smi", "--query-gpu=power.draw", "--format=csv,noheader,nounits",
                                   "-lms", "50"], stdout=subprocess.PIPE, text=True)
        self.samples: list[float] = []
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()
        return self

    def _read(self):
        for line in self.p.stdout:
            try:
                self.samples.append(float(line.strip()))
            except ValueError:
                pass

    def __exit__(self, *a):
        self.p.terminate()
        self.t.join(timeout=2)


class Writer:
    def __init__(self, path):
        self.path, self.n = path, 0
        with open(path, "w", newline="") as f:
            csv.writer(f, lineterminator="\n").writerow(COLUMNS)

    def row(self, **kw):
        kw.setdefault("case_id", f"{HARDWARE}-run-{self.n:03d}")
        self.n += 1
        with open(self.path, "a", newline="") as f:
            csv.writer(f, lineterminator="\n").writerow([kw.get(c, "") for c in COLUMNS])
        print(f"{kw['case_id']} {kw['model']} {kw['phase']} b{kw['batch']} ctx{kw['context_tok']} "
              f"T{kw['tokens_per_step']} {kw['execution']} {kw.get('expert_compute', '')} "
              f"k={kw.get('kernels_per_step', '')} {kw['measured_step_s'] * 1e3:.3f} ms", flush=True)


def base_row(m: Decoder, **kw):
    r = dict(hardware=HARDWARE, n_chips=1, model=m.name, n_layers=m.L, hidden=m.h, ffn_hidden=m.f, n_q_heads=m.nq,
             n_kv_heads=m.nkv, head_dim=m.hd, vocab=m.V, n_experts=m.E, experts_per_token=m.k,
             expert_ffn_hidden=m.ef, weight_bytes_per_param=2, kv_bytes_per_elem=2,
             total_params=m.total_params, fusion="fused_qkv_gateup" if m.fused else "unfused",
             expert_compute=m.expert_compute if m.E else "", source=SOURCE)
    r.update(kw)
    return r


HARDWARE = "h200"  # --hardware
SOURCE = ""  # set in main: the tool, the GPU and the date
CONTROL = ""


@torch.inference_mode()
def power_row(power, fn, t: float, m: "Decoder", phase: str, batch: int, ctx: int, T: int, mode: str, tokens: float):
    """Run ``fn`` (one step of ``t`` seconds) back to back for ~2.5 s and write its board power."""
    reps = min(max(1, int(2.5 / t)), 20000)
    with Power() as pw:
        time.sleep(0.2)
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    s_ = pw.samples[4:] or pw.samples
    watts = statistics.mean(s_) if s_ else float("nan")
    tok_s = tokens / t
    power.writerow([m.name, batch, ctx, T, mode, t, watts, max(s_) if s_ else "", tok_s, watts / tok_s, phase])


def skip_if_oom(fn):
    """Run a measurement; on a GPU too small for its KV cache or activations, say so and go on."""
    def run(w, m, *args, **kw):
        try:
            return fn(w, m, *args, **kw)
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()
            print(f"skipped {m.name} {args[:3]}: out of GPU memory", flush=True)
    return run


@skip_if_oom
@torch.inference_mode()
def decode_cases(w: Writer, m: Decoder, batch: int, ctx: int, T: int, modes, n: int, power=None,
                 control: bool = False, power_modes=("graph",)):
    cache = m.make_cache(batch, ctx)
    tokens = torch.randint(0, m.V, (batch, T), device=DEV)
    pos = ctx - T
    step = lambda: m.decode(tokens, cache, pos)  # noqa: E731
    kern = count_kernels(step)
    for mode in modes:
        if mode == "eager":
            t = wall_median(step, n)
            run = step
        else:
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(2):
                    step()
            torch.cuda.current_stream().wait_stream(s)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                step()
            t = wall_median(g.replay, n)
            run = g.replay
        if power is not None and mode in power_modes:
            power_row(power, run, t, m, "decode", batch, ctx, T, mode, batch * T)
        del run
        w.row(**base_row(m, phase="decode", batch=batch, context_tok=ctx, tokens_per_step=T, execution=mode,
                         kernels_per_step=kern, measured_step_s=t, source=CONTROL if control else SOURCE))
    del cache
    torch.cuda.empty_cache()


@skip_if_oom
@torch.inference_mode()
def prefill_case(w: Writer, m: Decoder, ctx: int, n: int, control: bool = False, power=None):
    x = rand(1, ctx, m.h, scale=1.0)
    fn = lambda: m.forward(x, None, 0, causal=True)  # noqa: E731
    t = event_median(fn, n)
    if power is not None:
        power_row(power, fn, t, m, "prefill", 1, ctx, ctx, "eager", ctx)
    w.row(**base_row(m, model=m.name + "-layers", phase="prefill", batch=1, context_tok=ctx, tokens_per_step=ctx,
                     execution="eager", measured_step_s=t, source=CONTROL if control else SOURCE))


@torch.inference_mode()
def diag(path: str):
    """Top CUDA kernels of a few steps (which attention kernel SDPA picks, where MoE time goes)."""
    from torch.profiler import ProfilerActivity, profile
    with open(path, "w") as f:
        for name, b, ctx, T, ec, vocab in (("dense-8b", 32, 1024, 1, "", True), ("dense-8b", 32, 1024, 4, "", True),
                                           ("dense-8b", 1, 2048, 0, "", False), ("moe-8x2", 1, 1024, 1, "all", True)):
            m = Decoder(name, fused=True, vocab=vocab)
            m.expert_compute = ec or "touched"
            if T:
                cache = m.make_cache(b, ctx)
                tok = torch.randint(0, m.V, (b, T), device=DEV)
                fn = lambda: m.decode(tok, cache, ctx - T)  # noqa: E731
            else:
                x = rand(1, ctx, m.h, scale=1.0)
                fn = lambda: m.forward(x, None, 0, causal=True)  # noqa: E731
            fn()
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                fn()
                torch.cuda.synchronize()
            f.write(f"== {name} b{b} ctx{ctx} T{T} {ec} attn={ATTN} moe={MOE}\n")
            f.write(prof.key_averages().table(sort_by="cuda_time_total", row_limit=12, max_name_column_width=90))
            f.write("\n")
            del m
            torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--hardware", default="h200", help="catalog name of the GPU (the rows' hardware column)")
    ap.add_argument("--quick", action="store_true", help="3 timed repetitions a step instead of 20 (smoke test)")
    ap.add_argument("--attn", choices=("gqa", "expand"), default="gqa")
    ap.add_argument("--moe", choices=("einsum", "bmm"), default="einsum")
    ap.add_argument("--rms", choices=("fp32", "bf16"), default="fp32")
    ap.add_argument("--groups", default="controls,sizes,long,batch,verify,1b,moe,prefill")
    a = ap.parse_args()
    global ATTN, MOE, RMS, HARDWARE, SOURCE, CONTROL
    ATTN, MOE, RMS, HARDWARE = a.attn, a.moe, a.rms, a.hardware
    SOURCE = (f"tokenomics tools/h200_steps.py on one {torch.cuda.get_device_name()} "
              f"({time.strftime('%Y-%m-%d')}, PyTorch {torch.__version__})")
    CONTROL = SOURCE + "; control: a configuration of h200_cases.csv"
    groups = set(a.groups.split(","))
    os.makedirs(a.out, exist_ok=True)
    torch.manual_seed(0)
    with open(os.path.join(a.out, "env.txt"), "w") as f:
        f.write(f"torch {torch.__version__} cuda {torch.version.cuda} gpu {torch.cuda.get_device_name()}\n")
        f.write(subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit",
                                "--format=csv"], capture_output=True, text=True).stdout)
    w = Writer(os.path.join(a.out, "steps.csv"))
    pf = open(os.path.join(a.out, "power.csv"), "w", newline="")
    power = csv.writer(pf, lineterminator="\n")
    power.writerow(["model", "batch", "context_tok", "tokens_per_step", "execution", "step_s", "power_w",
                    "max_power_w", "tok_per_s", "j_per_tok", "phase"])
    n = 3 if a.quick else 20
    t0 = time.time()

    def stamp(msg):
        pf.flush()
        print(f"[{time.time() - t0:6.1f} s] {msg}", flush=True)

    GE = ("graph", "eager")
    if "power" in groups:  # board power in host-bound (eager) and compute-bound (prefill) steps
        for name, b in (("dense-8b", 1), ("dense-1b", 32)):
            m = Decoder(name, fused=True)
            decode_cases(w, m, b, 1024, 1, ("eager",), n, power, power_modes=("eager",))
            del m
        m = Decoder("dense-14b", fused=True)
        decode_cases(w, m, 1, 1024, 1, ("graph",), n, power)
        del m
        for name, c in (("dense-8b", 8192), ("dense-1b", 2048)):
            m = Decoder(name, fused=True, vocab=False)
            prefill_case(w, m, c, max(3, n // 4), power=power)
            del m
        torch.cuda.empty_cache()
        stamp("power")
    if "diag" in groups:
        diag(os.path.join(a.out, f"diag_{ATTN}_{MOE}.txt"))
        stamp("diag")
    if "controls" in groups:  # configurations of h200_cases.csv measured again: same harness, same machine?
        for name, fused, b, modes in (("dense-1b", True, 1, GE), ("dense-8b", True, 32, GE),
                                      ("dense-8b", False, 128, ("eager",))):
            m = Decoder(name, fused=fused)
            decode_cases(w, m, b, 1024, 1, modes, n, control=True)
            del m
            torch.cuda.empty_cache()
        m = Decoder("dense-8b", fused=True, vocab=False)
        prefill_case(w, m, 2048, max(3, n // 4), control=True)
        del m
        torch.cuda.empty_cache()
        stamp("controls")
    if "sizes" in groups:  # other model sizes, context 1024
        for name in ("dense-3b", "dense-14b"):
            m = Decoder(name, fused=True)
            for b in (1, 32, 128):
                decode_cases(w, m, b, 1024, 1, GE, n, power if b == 128 else None)
            del m
            if name == "dense-3b":
                m = Decoder(name, fused=False)
                decode_cases(w, m, 32, 1024, 1, ("eager",), n)
                del m
            torch.cuda.empty_cache()
            stamp(name)
    m = Decoder("dense-8b", fused=True) if groups & {"long", "batch", "verify"} else None
    if "long" in groups:
        for ctx, b in ((8192, 1), (8192, 8), (8192, 32), (32768, 1), (32768, 8), (131072, 1)):
            decode_cases(w, m, b, ctx, 1, GE if b == 1 else ("graph",), n, power if (ctx, b) == (32768, 8) else None)
        stamp("8b long context")
    if "batch" in groups:
        for b in (256, 512):
            decode_cases(w, m, b, 1024, 1, GE, n, power if b == 512 else None)
        stamp("8b large batch")
    if "verify" in groups:
        for b, T in ((1, 2), (1, 4), (1, 8), (32, 2), (32, 4), (32, 8), (128, 4)):
            decode_cases(w, m, b, 1024, T, ("graph",) if b > 1 else GE, n)
        stamp("8b verify")
    del m
    torch.cuda.empty_cache()
    if "1b" in groups:
        m = Decoder("dense-1b", fused=True)
        for b, T in ((512, 1), (256, 1), (32, 4)):
            decode_cases(w, m, b, 1024, T, GE, n)
        del m
        torch.cuda.empty_cache()
        stamp("1b")
    if "moe" in groups or "moe-all" in groups:  # touched-expert loop (eager: it syncs) and every expert
        for name, batches in (("moe-64x8", (1, 8, 64, 256)), ("moe-8x2", (1, 16, 128))):
            m = Decoder(name, fused=True)
            for b in batches:
                if "moe" in groups:
                    m.expert_compute = "touched"
                    decode_cases(w, m, b, 1024, 1, ("eager",), n)
                m.expert_compute = "all"
                decode_cases(w, m, b, 1024, 1, GE if b <= 16 else ("graph",), n, power if b == 64 else None)
            del m
            torch.cuda.empty_cache()
            stamp(name)
    if "prefill" in groups:  # other sizes and longer prompts (batch 1, no embedding or lm head)
        for name, ctxs in (("dense-1b", (2048, 8192)), ("dense-8b", (16384, 32768)), ("dense-14b", (4096,))):
            m = Decoder(name, fused=True, vocab=False)
            for c in ctxs:
                prefill_case(w, m, c, max(3, n // 4))
            del m
            torch.cuda.empty_cache()
        stamp("prefill")
    pf.close()


if __name__ == "__main__":
    main()

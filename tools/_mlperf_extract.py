#!/usr/bin/env python3
"""Read MLPerf Inference closed-division datacenter LLM results out of a results repository.

Used by ``tools/curate_mlperf.py``. :class:`GitSrc` reads a bare git mirror at one commit
(``git show <commit>:<path>``), :class:`DirSrc` a plain directory (:func:`source` picks one);
:func:`extract` returns one dict per ``closed/<submitter>/results/<system>/<benchmark>/<scenario>/performance/run_1/mlperf_log_summary.txt``:
the logged result, the system's accelerator and count (``systems/<system>.json``), the weight
precision (``measurements.json``), the engine (``framework``) and, where an engine configuration
file states it unambiguously, the tensor / pipeline / expert parallelism (:func:`find_configs`).
"""
import json, re, subprocess, sys, os, collections

LLM_BENCH = {
    'llama2-70b-99': 'llama2-70b-99', 'llama2-70b-99.9': 'llama2-70b-99.9',
    'llama2-70b-interactive-99': 'llama2-70b-99', 'llama2-70b-interactive-99.9': 'llama2-70b-99.9',
    'llama3.1-405b': 'llama3.1-405b', 'llama3_1-405b': 'llama3.1-405b',
    'llama3.1-405b-interactive': 'llama3.1-405b',
    'llama3.1-8b': 'llama3.1-8b', 'llama3_1-8b': 'llama3.1-8b',
    'mixtral-8x7b': 'mixtral-8x7b', 'deepseek-r1': 'deepseek-r1',
    'deepseek-r1-interactive': 'deepseek-r1',
    'gpt-oss-120b': 'gpt-oss-120b', 'qwen3-vl-235b-a22b': 'qwen3-vl-235b-a22b',
}
# NVIDIA-style config file stems
NV_CFG = {'llama2-70b-99': 'llama2-70b', 'llama2-70b-99.9': 'llama2-70b',
          'llama3.1-405b': 'llama3_1-405b', 'llama3.1-8b': 'llama3_1-8b',
          'mixtral-8x7b': 'mixtral-8x7b', 'deepseek-r1': 'deepseek-r1',
          'gpt-oss-120b': 'gpt-oss-120b', 'qwen3-vl-235b-a22b': 'qwen3_vl_235b_a22b'}

RES_RE = re.compile(r'^closed/([^/]+)/results/([^/]+)/([^/]+)/([^/]+)/performance/run_1/mlperf_log_summary\.txt$')


class DirSrc:
    """A results tree as a plain directory: a checkout, or an excerpt of one holding the files
    :func:`extract` reads (``git show`` output saved under the same relative paths)."""
    def __init__(self, root):
        from pathlib import Path
        self.root = Path(root)
        self.files = sorted(p.relative_to(self.root).as_posix() for p in self.root.rglob('*') if p.is_file())
        self.fileset = set(self.files)

    def read(self, path):
        if path not in self.fileset:
            return None
        return (self.root / path).read_text(errors='replace')


def source(path, commit):
    """:class:`GitSrc` at ``commit`` for a git directory (bare or with a work tree), else :class:`DirSrc`."""
    from pathlib import Path
    p = Path(path)
    if (p / 'HEAD').exists() or (p / '.git').exists():
        return GitSrc(str(p), commit)
    return DirSrc(p)


class GitSrc:
    def __init__(self, gitdir, commit):
        self.gitdir, self.commit = gitdir, commit
        self.files = subprocess.check_output(['git', '-C', gitdir, 'ls-tree', '-r', '--name-only', commit], text=True).splitlines()
        self.fileset = set(self.files)

    def read(self, path):
        if path not in self.fileset:
            return None
        return subprocess.run(['git', '-C', self.gitdir, 'show', f'{self.commit}:{path}'], capture_output=True, text=True, errors='replace').stdout


def parse_summary(txt):
    d = {}
    m = re.search(r'^Scenario\s*:\s*(\S+)', txt, re.M); d['logged_scenario'] = m.group(1) if m else ''
    for pat, key in [(r'^Tokens per second\s*:\s*([0-9.eE+]+)', 'tok'),
                     (r'^Completed tokens per second\s*:\s*([0-9.eE+]+)', 'ctok'),
                     (r'^Samples per second\s*:\s*([0-9.eE+]+)', 'sps'),
                     (r'^Completed samples per second\s*:\s*([0-9.eE+]+)', 'csps'),
                     (r'^ttft_latency \(ns\)\s*:\s*(\d+)', 'ttft'),
                     (r'^tpot_latency \(ns\)\s*:\s*(\d+)', 'tpot'),
                     (r'^target_qps\s*:\s*([0-9.eE+]+)', 'target_qps'),
                     (r'^samples_per_query\s*:\s*(\d+)', 'samples_per_query'),
                     (r'^Mean First Token latency \(ns\)\s*:\s*(\d+)', 'mean_ttft'),
                     (r'^Mean latency \(ns\)\s*:\s*(\d+)', 'mean_latency'),
                     (r'^Mean Time (?:to|per) Output Token \(ns\)\s*:\s*(\d+)', 'mean_tpot'),
                     (r'^99\.00 percentile first token latency \(ns\)\s*:\s*(\d+)', 'p99_ttft'),
                     (r'^99\.00 percentile time to output token \(ns\)\s*:\s*(\d+)', 'p99_tpot')]:
        m = re.search(pat, txt, re.M)
        d[key] = m.group(1) if m else None
    m = re.search(r'^Result is\s*:\s*(\S+)', txt, re.M)
    d['valid'] = m.group(1) if m else ''
    return d


def regex_vals(txt, pats):
    vals = set()
    for p in pats:
        for m in re.finditer(p, txt, re.M):
            vals.add(int(m.group(1)))
    return vals


def find_configs(src, sub, system, bench, scen, n_nodes):
    """Return (tp, pp, ep, [paths], note) from engine config files, only when unambiguous."""
    out_paths, notes = [], []
    tp = pp = ep = ''
    base = f'closed/{sub}/'
    cand = []
    stem = NV_CFG.get(bench)
    sysvars = [system, re.sub(r'_(TRT|Triton|TRTLLM|vLLM|VLLM|SGLang)$', '', system)]
    # NVIDIA style (v5.x, v6.0): configs/<sys>/<Scenario>/<stem>.py
    for sv in sysvars:
        p = f'{base}configs/{sv}/{scen}/{stem}.py'
        if p in src.fileset:
            cand.append(p); break
    # NVIDIA v6.1 style: configs/<stem_us>/<sys>/<BACKEND>/<Scenario>/...
    if not cand and stem:
        stem_us = stem.replace('-', '_')
        for sv in sysvars:
            pre = f'{base}configs/{stem_us}/{sv}/'
            hits = [f for f in src.files if f.startswith(pre) and f'/{scen}/' in f and re.search(r'\.(py|ya?ml|json)$', f) and 'accuracy' not in f]
            if hits:
                cand.extend(sorted(hits)); break
    # NVIDIA v6.0 disaggregated yml
    for sv in sysvars:
        pre = f'{base}configs/{sv}/{scen}/'
        for f in src.files:
            if f.startswith(pre) and f.endswith('.yml') and stem and stem in f and 'accuracy' not in f:
                cand.append(f)
    # AMD style
    if sub == 'AMD':
        acc = re.search(r'MI3\d\dX', system, re.I)
        acc = acc.group(0).lower() if acc else ''
        sl = scen.lower()
        mn = '_mn' if n_nodes and n_nodes > 1 else ''
        for f in src.files:
            if not f.startswith('closed/AMD/') or '/results/' in f or '/compliance/' in f:
                continue
            fn = f.rsplit('/', 1)[-1]
            if fn == f'{sl}_{acc}{mn}.yaml' and (f'/{bench}/' in f or (bench.startswith('llama2') and '/llama2-70b' in f)):
                # prefer the dir for this accuracy target
                cand.append(f)
        if len(cand) > 1:
            exact = [c for c in cand if f'/{bench}/' in c]
            cand = exact[:1] or cand[:1]
    tps, pps, eps = set(), set(), set()
    for p in cand:
        t = src.read(p) or ''
        tps |= regex_vals(t, [r'tensor_parallelism\s*[:=]\s*(\d+)', r'^\s*tensor_parallel_size\s*:\s*(\d+)', r'["\']?tensor_parallel_size["\']?\s*[:=]\s*(\d+)'])
        pps |= regex_vals(t, [r'pipeline_parallelism\s*[:=]\s*(\d+)', r'pipeline_parallel_size["\']?\s*[:=]\s*(\d+)'])
        eps |= regex_vals(t, [r'moe_expert_parallelism\s*[:=]\s*(\d+)', r'moe_expert_parallel_size["\']?\s*[:=]\s*(\d+)', r'expert_parallel_size["\']?\s*[:=]\s*(\d+)'])
        out_paths.append(p)
    def one(s, name):
        if len(s) == 1:
            return str(next(iter(s)))
        if len(s) > 1:
            notes.append(f'{name} ambiguous in config files {sorted(s)}')
        return ''
    tp, pp, ep = one(tps, 'tp'), one(pps, 'pp'), one(eps, 'ep')
    return tp, pp, ep, out_paths, notes


def split_framework(fw):
    if not fw or fw.strip().upper() in ('TODO', 'N/A', 'NA', 'NONE'):
        return '', ''
    for pat in [r'(TensorRT-LLM|TRT-LLM|TRTLLM)[ :-]*(v?\d[\w\.\+\-]*|feat/[\w\.\-]+|rubin)?', r'(vLLM)[ :-]*(v?\d[\w\.\+\-]*)?', r'(SGLang)[ :-]*(v?\d[\w\.\+\-]*)?']:
        m = re.search(pat, fw, re.I)
        if m:
            return m.group(1), (m.group(2) or '')
    fw = fw.strip()
    first = re.split(r'[,;]', fw)[0].strip()
    m = re.match(r'^([A-Za-z][A-Za-z0-9_\-\. ]*?)\s*(v?\d[\w\.\+\-]*)?$', first)
    if m:
        return m.group(1).strip(), (m.group(2) or '')
    return first, ''


def extract(round_, src, repo, commit, as_of):
    rows = []
    for f in src.files:
        m = RES_RE.match(f)
        if not m:
            continue
        sub, system, bdir, scen = m.groups()
        if bdir not in LLM_BENCH:
            continue
        bench = LLM_BENCH[bdir]
        dir_scen = scen
        scen = {'offline': 'Offline', 'server': 'Server', 'interactive': 'Interactive'}.get(scen.lower(), scen)
        if 'interactive' in bdir and scen == 'Server':
            scen = 'Interactive'
        txt = src.read(f)
        if not txt:
            continue
        s = parse_summary(txt)
        sysp = f'closed/{sub}/systems/{system}.json'
        sj = {}
        t = src.read(sysp)
        notes = []
        if t:
            try:
                sj = json.loads(t)
            except Exception as e:
                notes.append(f'systems json parse error {e}')
        else:
            notes.append('systems json not found')
            sysp = ''
        stype = str(sj.get('system_type', ''))
        if sj and 'datacenter' not in stype:
            continue
        try:
            apn = int(str(sj.get('accelerators_per_node', '0')).strip() or 0)
        except Exception:
            apn = 0
        try:
            nn = int(str(sj.get('number_of_nodes', '1')).strip() or 1)
        except Exception:
            nn = 1
        acc = str(sj.get('accelerator_model_name', '')).strip()
        if sj and (apn == 0 or acc in ('', 'N/A', 'None')):
            continue  # CPU-only
        # result
        if s['tok'] is not None:
            val, metric = s['tok'], 'Tokens per second'
        elif s['ctok'] is not None:
            val, metric = s['ctok'], 'Completed tokens per second'
        elif s['sps'] is not None:
            val, metric = s['sps'], 'Samples per second (no tokens/s logged)'
        elif s['csps'] is not None:
            val, metric = s['csps'], 'Completed samples per second (no tokens/s logged)'
        else:
            val, metric = '', ''
        if 'interactive' in bdir:
            notes.append(f'v5.0-style layout: benchmark dir {bdir}/{dir_scen} (interactive = Server scenario with tighter TTFT/TPOT)')
        elif scen == 'Interactive':
            notes.append('Interactive dir; LoadGen runs it as Server scenario with tighter TTFT/TPOT')
        if dir_scen != scen and dir_scen.lower() == scen.lower():
            notes.append(f'scenario dir spelled {dir_scen}')
        if bdir != bench and 'interactive' not in bdir:
            notes.append(f'benchmark dir name {bdir}')
        # precision from measurements json
        prec_path = ''
        prec = ''
        for mp in [f'closed/{sub}/results/{system}/{bdir}/{dir_scen}/measurements.json']:
            if mp in src.fileset:
                prec_path = mp
        if not prec_path:
            pre = f'closed/{sub}/measurements/{system}/{bdir}/{dir_scen}/'
            js = [x for x in src.files if x.startswith(pre) and x.endswith('.json') and x.count('/') == pre.count('/')]
            if js:
                prec_path = sorted(js)[0]
        if prec_path:
            try:
                mj = json.loads(src.read(prec_path))
                prec = str(mj.get('weight_data_types', '')).strip()
            except Exception:
                pass
        if sj.get('sw_notes') and not prec and re.search(r'fp4|fp8|int8|int4|mxfp|nvfp|bf16|fp16', str(sj.get('sw_notes')), re.I):
            notes.append('systems json sw_notes: ' + str(sj.get('sw_notes'))[:120])
        tp, pp, ep, cfgs, cnotes = find_configs(src, sub, system, bench, dir_scen if 'interactive' not in bdir else scen, nn)
        notes += cnotes
        cfg_paths = []
        if prec_path and prec:
            cfg_paths.append(f'precision(weight_data_types)<-{prec_path}')
        if cfgs and (tp or pp or ep):
            cfg_paths.append('tp/pp/ep<-' + '|'.join(cfgs))
        elif cfgs:
            cfg_paths.append('engine cfg (no tp/pp/ep found)<-' + '|'.join(cfgs))
        fw = str(sj.get('framework', '')).strip()
        eng, ever = split_framework(fw)
        if fw:
            cfg_paths.append('engine<-systems_json.framework')
        status = str(sj.get('status', '')).strip().lower()
        n_acc_val = apn * nn if apn else ''
        n_nodes_val = nn
        row = dict(round=round_, submitter=sub, division='closed', category=status, system=system,
                   accelerator=acc, n_accelerators=n_acc_val, n_nodes=n_nodes_val,
                   benchmark=bench, scenario=scen, result_tok_per_s=val, result_metric=metric,
                   valid=s['valid'], precision=prec, tp=tp, pp=pp, ep=ep, engine=eng, engine_version=ever,
                   ttft_constraint_s=(int(s['ttft']) / 1e9 if s['ttft'] and scen != 'Offline' else ''),
                   tpot_constraint_s=(int(s['tpot']) / 1e9 if s['tpot'] and scen != 'Offline' else ''),
                   log_path=f, systems_json_path=sysp, config_path='; '.join(cfg_paths),
                   repo=repo, commit=commit, as_of=as_of, note='; '.join(notes),
                   _framework=fw, _apn=apn, _sysname=sj.get('system_name', ''), _mean_ttft=s['mean_ttft'],
                   _mean_tpot=s['mean_tpot'], _p99_ttft=s['p99_ttft'], _p99_tpot=s['p99_tpot'],
                   _sps=s['sps'] or s['csps'], _target_qps=s['target_qps'], _bdir=bdir,
                   _samples_per_query=s['samples_per_query'], _mean_latency=s['mean_latency'],
                   _ctok=s['ctok'], _csps=s['csps'])
        rows.append(row)
    return rows



"""Multi-chip TPU slices and multi-node NVIDIA clusters in the systems catalog."""

import pytest

from tokenomics.deployment import resolve
from tokenomics.perf.comm import collective_time_s
from tokenomics.perf.parallel import system


@pytest.mark.parametrize("name,chips,dims", [
    ("tpu-v6e-8", 8, (2, 4)),       # Google's v6e page: v6e-8 is a 2x4 slice on one host
    ("tpu-v6e-256", 256, (16, 16)),  # the full v6e pod, 16x16 2D torus
    ("tpu-v7-4", 4, (2, 2, 1)),      # one TPU7x VM: 4 chips
])
def test_tpu_slices_have_the_documented_shapes(name, chips, dims):
    s = system(name)
    assert (s.n_chips, s.dims) == (chips, dims)


def test_v6e_link_is_half_the_bidirectional_ici():
    # Google's v6e page: 800 GB/s bidirectional ICI per chip -> 400 GB/s one direction
    assert system("tpu-v6e-8").link_bytes_per_s == pytest.approx(400e9)


def test_full_v6e_pod_wraps_around_and_a_slice_does_not():
    # 16x16 torus: 8 + 8 hops across; a 4x4 slice without wraparound: 3 + 3
    assert system("tpu-v6e-256").diameter_hops(256) == 16
    assert system("tpu-v6e-16").diameter_hops(16) == 6


@pytest.mark.parametrize("hw,want", [("h200", "h200-ib-16"), ("h800", "h800-ib-16"), ("h100-sxm", "h100-ib-16")])
def test_a_16_gpu_layout_resolves_to_two_nodes(hw, want):
    dep = resolve("deepseek-r1", hardware=hw, tp=1, ep=16)
    assert dep.system.name == want


def test_trillion_parameter_moe_on_multi_node_h200_is_priced():
    # Kimi K2 at FP8 (~1 TB of weights) needs more than one 8 x 141 GB node
    dep = resolve("kimi-k2", hardware="h200", tp=1, ep=16)
    assert dep.system.n_chips == 16 and dep.parallel.ep == 16


def test_a_group_spanning_nodes_runs_at_the_nic_bandwidth():
    s = system("h200-ib-16")
    inside = float(collective_time_s("all_to_all", 8e6, 8, s, "nccl"))
    across = float(collective_time_s("all_to_all", 8e6, 16, s, "nccl"))
    # NVLink 450 GB/s against 50 GB/s of 400 Gb/s NICs: the wire term is 9x; 16 ranks move 15/16
    # of the buffer against 7/8 over 8, so the cross-node call is at least ~5x slower
    assert across > 5 * inside
    assert s.scaleout_bytes_per_s == pytest.approx(50e9)  # 400 Gb/s ConnectX-7 per GPU


def test_a_model_that_fits_one_node_stays_on_one_node():
    # DeepSeek-R1 FP8 (~690 GB) fits one 8 x H200 node (1.13 TB), the usual deployment, even
    # though a two-node cluster would leave more KV room: clusters only when no node holds it
    assert resolve("deepseek-r1", hardware="h200").system.name == "dgx-h200"

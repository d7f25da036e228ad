"""Performance core: operators -> roofline -> plans -> step time, throughput, bound."""

from .profile import Profile, load_profile
from .step import StepResult, decode_step, max_batch, prefill

__all__ = ["Profile", "StepResult", "decode_step", "load_profile", "max_batch", "prefill"]

"""Studies: one question each, answered with the library (the Kimi K3 showdown of four systems)."""

import os

import matplotlib

matplotlib.use("Agg")
os.environ.setdefault("COLUMNS", "160")

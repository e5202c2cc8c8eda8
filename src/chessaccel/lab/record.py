"""A benchmark's record: its JSON and its chart beside it."""

import json
import os

__all__ = ["write_record"]


def write_record(obj, out, plot, default, draw, indent):
    """Write ``obj`` as JSON to ``out`` (None: ``default``) and ``draw(obj, path)`` to ``plot``
    (None: the JSON's name with .png); returns (the JSON's path, the chart's)."""
    out = out or default
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out, "w") as f:
        json.dump(obj, f, indent=indent)
    plot = plot or os.path.splitext(out)[0] + ".png"
    draw(obj, plot)
    return out, plot

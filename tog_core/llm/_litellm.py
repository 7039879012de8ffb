"""The one place LiteLLM is imported. Importing any tog_core module neither imports LiteLLM (slow: ~1 s)
nor writes os.environ; the first call that needs a model calls :func:`load_litellm`.

LiteLLM fetches its model cost map from the internet at import unless ``LITELLM_LOCAL_MODEL_COST_MAP``
is set; it is set here (``setdefault``: a person's own value wins) just before the import.
"""
from __future__ import annotations

import os
from types import ModuleType

__all__ = ["load_litellm", "COST_MAP_ENV"]

COST_MAP_ENV = "LITELLM_LOCAL_MODEL_COST_MAP"


def load_litellm() -> ModuleType:
    """The litellm module, imported on first use with the offline cost map; quiet (no feedback banners)."""
    os.environ.setdefault(COST_MAP_ENV, "True")  # never fetch the cost map online
    import litellm

    litellm.suppress_debug_info = True  # no "Give Feedback" banners on stdout
    return litellm

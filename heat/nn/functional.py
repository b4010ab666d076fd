"""
``torch.nn.functional`` under heat's name, as HeAT's ``heat.nn.functional``: every function of
torch's module (``relu``, ``softmax``, ``cross_entropy``, ...) is available here, so ported
scripts that ``import heat.nn.functional as F`` run unchanged. They act on torch tensors (a
process's block, ``x.larray``), exactly as torch's.

Examples
--------
>>> import heat.nn.functional as F
>>> F.relu(torch.tensor([-1.0, 2.0]))
tensor([0., 2.])
"""

import torch.nn.functional as _torch_functional

__all__ = []


def __getattr__(name: str):
    try:
        return getattr(_torch_functional, name)
    except AttributeError:
        raise AttributeError(f"module 'heat.nn.functional' has no attribute {name!r}") from None


def __dir__():
    return sorted(set(globals()) | set(dir(_torch_functional)))

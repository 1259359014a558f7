"""rankaug: keyed, rank-aware data augmentation for distributed PyTorch training."""

__version__ = "0.1.0"
__all__ = ["__version__"]

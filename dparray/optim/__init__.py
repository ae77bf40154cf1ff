"""Optimizers, gradient clipping and learning-rate schedules. ``step`` takes the
``dparray.Gradients`` that ``backward()`` returns."""

from dparray.optim.adam import Adam as Adam
from dparray.optim.adam import AdamW as AdamW
from dparray.optim.clip import clip_grad_norm as clip_grad_norm
from dparray.optim.clip import grad_norm as grad_norm
from dparray.optim.lr_scheduler import CosineAnnealingLR as CosineAnnealingLR
from dparray.optim.lr_scheduler import LRScheduler as LRScheduler
from dparray.optim.lr_scheduler import StepLR as StepLR
from dparray.optim.optimizer import Optimizer as Optimizer
from dparray.optim.sgd import SGD as SGD

__all__ = ["SGD", "Adam", "AdamW", "CosineAnnealingLR", "LRScheduler", "Optimizer", "StepLR",
           "clip_grad_norm", "grad_norm"]

"""Optimizers, gradient clipping and learning-rate schedules. ``step`` takes the
``dparray.Gradients`` that ``backward()`` returns."""

from dparray.optim.adadelta import Adadelta as Adadelta
from dparray.optim.adagrad import Adagrad as Adagrad
from dparray.optim.adam import Adam as Adam
from dparray.optim.adam import AdamW as AdamW
from dparray.optim.adamax import Adamax as Adamax
from dparray.optim.asgd import ASGD as ASGD
from dparray.optim.clip import clip_grad_norm as clip_grad_norm
from dparray.optim.clip import clip_grad_value as clip_grad_value
from dparray.optim.clip import grad_norm as grad_norm
from dparray.optim.lbfgs import LBFGS as LBFGS
from dparray.optim.lr_scheduler import CosineAnnealingLR as CosineAnnealingLR
from dparray.optim.lr_scheduler import ExponentialLR as ExponentialLR
from dparray.optim.lr_scheduler import LambdaLR as LambdaLR
from dparray.optim.lr_scheduler import LinearLR as LinearLR
from dparray.optim.lr_scheduler import LRScheduler as LRScheduler
from dparray.optim.lr_scheduler import MultiStepLR as MultiStepLR
from dparray.optim.lr_scheduler import SequentialLR as SequentialLR
from dparray.optim.lr_scheduler import StepLR as StepLR
from dparray.optim.nadam import NAdam as NAdam
from dparray.optim.one_cycle import OneCycleLR as OneCycleLR
from dparray.optim.optimizer import Optimizer as Optimizer
from dparray.optim.plateau import ReduceLROnPlateau as ReduceLROnPlateau
from dparray.optim.rmsprop import RMSprop as RMSprop
from dparray.optim.rprop import Rprop as Rprop
from dparray.optim.sgd import SGD as SGD

__all__ = ["SGD", "Adagrad", "Adam", "AdamW", "Adamax", "CosineAnnealingLR", "ExponentialLR",
           "LRScheduler", "LambdaLR", "LinearLR", "MultiStepLR", "NAdam", "OneCycleLR",
           "Optimizer", "RMSprop", "ReduceLROnPlateau", "SequentialLR", "StepLR",
           "clip_grad_norm", "clip_grad_value", "grad_norm",
           "ASGD", "Adadelta", "LBFGS", "Rprop"]

"""Fine-tune with frozen layers: learn digits 0-4, then reuse the features for digits 5-9
training only a new head.

    python examples/finetune_frozen.py

Needs the demo extra (scikit-learn): pip install "dparray[demo]".
"""

from sklearn.datasets import load_digits

import dparray as dp
from dparray import nn, optim
from dparray.nn import functional as F


def accuracy(model, x, y):
    with dp.no_grad():
        return (model(x).argmax(axis=1) == y).astype("float32").mean().item()


def train(model, x, y, steps, lr):
    trainable = [p for p in model.parameters() if p.is_variable]
    opt = optim.Adam(trainable, lr=lr)
    for _ in range(steps):
        opt.step(F.cross_entropy(model(x), y).backward())


def main() -> None:
    dp.manual_seed(0)
    digits = load_digits()
    x = dp.tensor(digits.data, dtype="float32") / 16.0
    y = dp.tensor(digits.target, dtype="int64")
    low, high = y < 5, y >= 5
    x_low, y_low = dp.take(x, _where(low)), dp.take(y, _where(low))
    x_high, y_high = dp.take(x, _where(high)), dp.take(y, _where(high)) - 5

    features = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU())
    model = nn.Sequential(features, nn.Linear(64, 5))
    train(model, x_low[:700], y_low[:700], steps=150, lr=5e-3)
    print(f"digits 0-4, held out: {accuracy(model, x_low[700:], y_low[700:]):.1%}")

    features.requires_grad_(False)  # frozen: still parameters, no longer trained
    new_model = nn.Sequential(features, nn.Linear(64, 5))
    print(f"trainable scalars: {new_model.trainable_params_count()} of "
          f"{new_model.num_parameters()}")
    before = [p.numpy().copy() for p in features.parameters()]
    train(new_model, x_high[:700], y_high[:700], steps=150, lr=5e-3)
    unchanged = all((p.numpy() == b).all() for p, b in zip(features.parameters(), before,
                                                           strict=True))
    print(f"digits 5-9 with frozen features, held out: "
          f"{accuracy(new_model, x_high[700:], y_high[700:]):.1%}")
    print(f"frozen layers unchanged: {unchanged}")


def _where(mask):
    """Positions where ``mask`` holds, as an index tensor."""
    flags = mask.tolist()
    return dp.tensor([i for i, flag in enumerate(flags) if flag])


if __name__ == "__main__":
    main()

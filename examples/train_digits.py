"""Train a digit classifier with DataParallel and a DataLoader, and save it.

    python examples/train_digits.py [--epochs 10] [--workers 2] [--out digits.safetensors]

Needs the demo extra (scikit-learn, for the digits): pip install "dparray[demo]".
"""

import argparse

import dparray as dp
from dparray import nn, optim
from dparray.data import DataLoader, TensorDataset, load_digits
from dparray.nn import functional as F


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", default="digits.safetensors")
    args = parser.parse_args()

    dp.manual_seed(0)
    train_x, train_y = load_digits("train")
    test_x, test_y = load_digits("test")
    loader = DataLoader(TensorDataset(train_x, train_y), batch_size=100, shuffle=True)

    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    wrapped = dp.DataParallel(model, args.workers)
    opt = optim.Adam(wrapped.parameters(), lr=2e-3)
    for epoch in range(args.epochs):
        for images, labels in loader:
            loss = F.cross_entropy(wrapped(images), labels)
            opt.step(loss.backward())
        print(f"epoch {epoch + 1}: last batch loss {loss.item():.4f}")

    with dp.no_grad():
        predictions = wrapped.eval()(test_x).argmax(axis=1)
    accuracy = (predictions == test_y).astype("float32").mean().item()
    print(f"held-out accuracy: {accuracy:.1%}")
    dp.save(model.state_dict(), args.out)
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()

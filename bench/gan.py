"""A DCGAN training step (the generative family: transposed convolutions, batch norm, leaky
ReLU, tanh, binary cross-entropy, two Adam optimizers), dparray against PyTorch.

    python -m bench.gan        # medians (ms) of alternated processes, one library each

The networks are DCGAN's, written here from its description: a generator of five transposed
4 x 4 convolutions from 100 noise channels to a 3 x 64 x 64 image (32 feature maps at the last
hidden layer), a discriminator of five 4 x 4 convolutions back to one logit per image, batch
32. A step is the discriminator's update on real and generated images, then the generator's
on the discriminator's verdict. PyTorch's generator step computes the discriminator's weight
gradients too (as the usual training loop does, zeroing them before its next step); dparray's
asks for the generator's alone (``backward(inputs=...)``), so its walk skips them.
"""

from __future__ import annotations

from typing import Any

from .alternated import compare, median_ms

PROCESSES = 3
NOISE, FEATURES, CHANNELS, BATCH = 100, 32, 3, 32


def networks(nn: Any) -> tuple[Any, Any]:
    """The generator and the discriminator, from either library's ``nn``."""
    f = FEATURES
    generator = nn.Sequential(
        nn.ConvTranspose2d(NOISE, f * 8, 4, 1, 0, bias=False), nn.BatchNorm2d(f * 8), nn.ReLU(),
        nn.ConvTranspose2d(f * 8, f * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(f * 4), nn.ReLU(),
        nn.ConvTranspose2d(f * 4, f * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(f * 2), nn.ReLU(),
        nn.ConvTranspose2d(f * 2, f, 4, 2, 1, bias=False), nn.BatchNorm2d(f), nn.ReLU(),
        nn.ConvTranspose2d(f, CHANNELS, 4, 2, 1, bias=False), nn.Tanh())
    discriminator = nn.Sequential(
        nn.Conv2d(CHANNELS, f, 4, 2, 1, bias=False), nn.LeakyReLU(0.2),
        nn.Conv2d(f, f * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(f * 2), nn.LeakyReLU(0.2),
        nn.Conv2d(f * 2, f * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(f * 4), nn.LeakyReLU(0.2),
        nn.Conv2d(f * 4, f * 8, 4, 2, 1, bias=False), nn.BatchNorm2d(f * 8), nn.LeakyReLU(0.2),
        nn.Conv2d(f * 8, 1, 4, 1, 0, bias=False), nn.Sigmoid())
    return generator, discriminator


def measure(library: str) -> dict[str, float]:
    """Median milliseconds of a training step here."""
    import numpy as np

    lib: Any
    if library == "torch":
        import torch as lib

        lib.set_num_threads(2)
    else:
        import dparray as lib
    generator, discriminator = networks(lib.nn)
    loss = lib.nn.BCELoss()
    adam = {"lr": 2e-4, "betas": (0.5, 0.999)}
    g_opt = lib.optim.Adam(generator.parameters(), **adam)
    d_opt = lib.optim.Adam(discriminator.parameters(), **adam)
    rng = np.random.default_rng(0)
    real = lib.tensor(rng.uniform(-1, 1, (BATCH, CHANNELS, 64, 64)).astype(np.float32))
    noise = lib.tensor(rng.standard_normal((BATCH, NOISE, 1, 1)).astype(np.float32))
    ones, zeros = lib.ones(BATCH), lib.zeros(BATCH)

    def losses() -> tuple[Any, Any]:
        fake = generator(noise)
        d_loss = loss(discriminator(real).view(-1), ones) + \
            loss(discriminator(fake.detach()).view(-1), zeros)
        return d_loss, fake

    def torch_step() -> None:
        d_opt.zero_grad()
        d_loss, fake = losses()
        d_loss.backward()
        d_opt.step()
        g_opt.zero_grad()
        loss(discriminator(fake).view(-1), ones).backward()
        g_opt.step()

    def dparray_step() -> None:
        d_loss, fake = losses()
        d_opt.step(d_loss.backward())
        g_loss = loss(discriminator(fake).view(-1), ones)
        g_opt.step(g_loss.backward(inputs=generator.parameters()))

    step = torch_step if library == "torch" else dparray_step
    return {"DCGAN step, batch 32 x 3 x 64 x 64": median_ms(step, steps=10)}


def main() -> None:
    compare(__spec__.name, measure, PROCESSES, "float32 training step")


if __name__ == "__main__":
    main()

"""PyTorch references for the fused class losses: ``losses.safetensors``.

    ../torch-venv/bin/python tests/data/make_loss_fixtures.py   # any environment with torch

Made with PyTorch 2.13.0 (CPU), float64.
"""

import torch
from torch_fixture_writer import TorchCase, write

nn = torch.nn


def cases() -> list[TorchCase]:
    torch.manual_seed(0)
    logits = torch.randn(6, 4) * 2
    target = torch.tensor([0, 3, 1, 1, 2, 3])
    ignored = torch.tensor([0, -100, 1, 1, -100, 3])
    weight = torch.rand(4) + 0.2
    masked = logits.clone()
    masked[:, 1] = float("-inf")
    masked_target = torch.tensor([0, 3, 2, 2, 0, 3])
    images = torch.randn(2, 3, 4, 5)
    pixels = torch.randint(0, 3, (2, 4, 5))
    probs = torch.softmax(torch.randn(6, 4), dim=1)
    cases = []
    for reduction in ("mean", "sum", "none"):
        cases += [
            TorchCase(f"ce_{reduction}", "CrossEntropyLoss", {"reduction": reduction},
                      nn.CrossEntropyLoss(reduction=reduction), [logits, target]),
            TorchCase(f"ce_weight_{reduction}", "CrossEntropyLoss",
                      {"weight": weight, "reduction": reduction},
                      nn.CrossEntropyLoss(weight=weight, reduction=reduction), [logits, target]),
            TorchCase(f"ce_weight_ignore_smooth_{reduction}", "CrossEntropyLoss",
                      {"weight": weight, "reduction": reduction, "label_smoothing": 0.2},
                      nn.CrossEntropyLoss(weight=weight, reduction=reduction,
                                          label_smoothing=0.2), [logits, ignored]),
            TorchCase(f"ce_soft_weight_smooth_{reduction}", "CrossEntropyLoss",
                      {"weight": weight, "reduction": reduction, "label_smoothing": 0.1},
                      nn.CrossEntropyLoss(weight=weight, reduction=reduction,
                                          label_smoothing=0.1), [logits, probs]),
            TorchCase(f"nll_weight_ignore_{reduction}", "NLLLoss",
                      {"weight": weight, "reduction": reduction, "ignore_index": 1},
                      nn.NLLLoss(weight=weight, reduction=reduction, ignore_index=1),
                      [torch.log_softmax(logits, 1), target]),
        ]
    cases += [
        TorchCase("ce_ignore_smooth", "CrossEntropyLoss",
                  {"ignore_index": 3, "label_smoothing": 0.3},
                  nn.CrossEntropyLoss(ignore_index=3, label_smoothing=0.3), [logits, target]),
        TorchCase("ce_masked_logits", "CrossEntropyLoss", {}, nn.CrossEntropyLoss(),
                  [masked, masked_target]),
        TorchCase("ce_images", "CrossEntropyLoss", {"weight": weight[:3]},
                  nn.CrossEntropyLoss(weight=weight[:3]), [images, pixels]),
        TorchCase("ce_unbatched", "CrossEntropyLoss", {"label_smoothing": 0.1},
                  nn.CrossEntropyLoss(label_smoothing=0.1), [logits[0], target[0]]),
        TorchCase("ce_soft", "CrossEntropyLoss", {}, nn.CrossEntropyLoss(), [logits, probs]),
    ]
    return cases


if __name__ == "__main__":
    write("losses", cases())

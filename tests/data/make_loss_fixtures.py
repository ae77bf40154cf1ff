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
    return cases + elementwise_cases()


def elementwise_cases() -> list[TorchCase]:
    """The other losses: binary cross-entropy (on probabilities and on logits, with weights),
    Huber, smooth L1, KL divergence, cosine embedding and margin ranking. Drawn after the
    class losses' tensors, so adding them left those cases as they were."""
    torch.manual_seed(1)
    probabilities = torch.rand(4, 3) * 0.9 + 0.05
    edges = torch.tensor([0.0, 1.0, 0.0, 1.0, 1e-20, 0.5])  # log clamped to -100 at 0 and 1
    edge_targets = torch.tensor([0.3, 0.6, 0.0, 1.0, 0.5, 0.5])
    targets = torch.rand(4, 3)
    element_weight = torch.rand(4, 3) + 0.5
    class_weight = torch.rand(3) + 0.5
    logits = torch.cat([torch.randn(3, 3) * 3, torch.tensor([[60.0, -60.0, 0.0]])])
    regression = torch.randn(3, 5) * 2
    regression_target = torch.randn(3, 5)
    ties = torch.tensor([0.0, 0.5, -0.5, 1.0, -1.0, 2.0, 0.25])  # |d| == delta, beta, 0
    log_q = torch.log_softmax(torch.randn(4, 5), dim=1)
    p = torch.softmax(torch.randn(4, 5), dim=1)
    log_p = torch.log_softmax(torch.randn(4, 5), dim=1)
    x1, x2 = torch.randn(5, 4), torch.randn(5, 4)
    x2[2] = -x1[2]  # a cosine of exactly -1
    x1[4] = 0.0  # a zero vector: cosine 0 through the epsilon
    pairs = torch.tensor([1.0, -1.0, 1.0, -1.0, -1.0])
    r1, r2 = torch.randn(6), torch.randn(6)
    r2[0] = r1[0] - 0.5  # the hinge's kink: -1 * (r1 - r2) + 0.5 == 0
    ranks = torch.tensor([1.0, 1.0, -1.0, 1.0, -1.0, -1.0])
    cases = []
    for reduction in ("mean", "sum", "none"):
        cases += [
            TorchCase(f"bce_{reduction}", "BCELoss", {"reduction": reduction},
                      nn.BCELoss(reduction=reduction), [probabilities, targets]),
            TorchCase(f"bce_weight_{reduction}", "BCELoss",
                      {"weight": class_weight, "reduction": reduction},
                      nn.BCELoss(weight=class_weight, reduction=reduction),
                      [probabilities, targets]),
            TorchCase(f"bce_logits_weights_{reduction}", "BCEWithLogitsLoss",
                      {"weight": element_weight, "pos_weight": class_weight,
                       "reduction": reduction},
                      nn.BCEWithLogitsLoss(weight=element_weight, pos_weight=class_weight,
                                           reduction=reduction), [logits, targets]),
            TorchCase(f"huber_{reduction}", "HuberLoss", {"reduction": reduction, "delta": 0.7},
                      nn.HuberLoss(reduction=reduction, delta=0.7),
                      [regression, regression_target]),
            TorchCase(f"smooth_l1_{reduction}", "SmoothL1Loss",
                      {"reduction": reduction, "beta": 0.6},
                      nn.SmoothL1Loss(reduction=reduction, beta=0.6),
                      [regression, regression_target]),
            TorchCase(f"cosine_embedding_{reduction}", "CosineEmbeddingLoss",
                      {"margin": 0.2, "reduction": reduction},
                      nn.CosineEmbeddingLoss(margin=0.2, reduction=reduction), [x1, x2, pairs]),
            TorchCase(f"margin_ranking_{reduction}", "MarginRankingLoss",
                      {"margin": 0.5, "reduction": reduction},
                      nn.MarginRankingLoss(margin=0.5, reduction=reduction), [r1, r2, ranks]),
        ]
    for reduction in ("mean", "batchmean", "sum", "none"):
        cases += [
            TorchCase(f"kl_div_{reduction}", "KLDivLoss", {"reduction": reduction},
                      nn.KLDivLoss(reduction=reduction), [log_q, p]),
            TorchCase(f"kl_div_log_target_{reduction}", "KLDivLoss",
                      {"reduction": reduction, "log_target": True},
                      nn.KLDivLoss(reduction=reduction, log_target=True), [log_q, log_p]),
        ]
    cases += [
        TorchCase("bce_edges", "BCELoss", {"reduction": "none"}, nn.BCELoss(reduction="none"),
                  [edges, edge_targets]),
        TorchCase("bce_logits", "BCEWithLogitsLoss", {}, nn.BCEWithLogitsLoss(),
                  [logits, targets]),
        TorchCase("bce_logits_pos_weight_column", "BCEWithLogitsLoss",
                  {"pos_weight": class_weight[:1].reshape(1, 1) + 1, "reduction": "none"},
                  nn.BCEWithLogitsLoss(pos_weight=class_weight[:1].reshape(1, 1) + 1,
                                       reduction="none"), [logits, targets]),
        TorchCase("bce_logits_pos_weight_rows", "BCEWithLogitsLoss",
                  {"pos_weight": element_weight[:, :1], "reduction": "sum"},
                  nn.BCEWithLogitsLoss(pos_weight=element_weight[:, :1], reduction="sum"),
                  [logits, targets]),
        TorchCase("huber_ties", "HuberLoss", {"delta": 0.5, "reduction": "none"},
                  nn.HuberLoss(delta=0.5, reduction="none"), [ties, torch.zeros(7)]),
        TorchCase("smooth_l1_ties", "SmoothL1Loss", {"beta": 0.5, "reduction": "none"},
                  nn.SmoothL1Loss(beta=0.5, reduction="none"), [ties, torch.zeros(7)]),
        TorchCase("smooth_l1_beta_zero", "SmoothL1Loss", {"beta": 0.0},
                  nn.SmoothL1Loss(beta=0.0), [regression, regression_target]),
        TorchCase("kl_div_unbatched", "KLDivLoss", {"reduction": "batchmean"},
                  nn.KLDivLoss(reduction="batchmean"), [log_q[0], p[0]]),
        TorchCase("cosine_embedding_unbatched", "CosineEmbeddingLoss", {"margin": -0.5},
                  nn.CosineEmbeddingLoss(margin=-0.5), [x1[0], x2[0], torch.tensor(-1.0)]),
        TorchCase("margin_ranking_broadcast", "MarginRankingLoss", {"reduction": "none"},
                  nn.MarginRankingLoss(reduction="none"),
                  [r1.reshape(2, 3), r2[:3].reshape(1, 3), ranks[:2].reshape(2, 1)]),
    ]
    return cases


if __name__ == "__main__":
    write("losses", cases())

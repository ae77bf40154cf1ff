"""Python state a module writes to ``self`` in ``forward`` is shared by DataParallel's chunks
(issue 21, item 8): the common case -- an attribute assigned while the chunks run -- is warned
about, with what to do instead; the layers' own state (buffers) and whole calls are not."""

from __future__ import annotations

import warnings

import pytest

import dparray as dp
from dparray import nn
from dparray.parallel import ChunkStateWarning


class Remembering(nn.Module):
    """Writes the chunk it saw to ``self``, then reads it back: what the probe found."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.calls = 0

    def forward(self, x):
        self.last_rows = x.shape[0]
        self.calls += 1
        return self.fc(x)


def _warnings(model, x):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model(x).sum().backward()
    return [w for w in caught if issubclass(w.category, ChunkStateWarning)]


@pytest.mark.parametrize("execution", ["threads", "inline"])
def test_an_attribute_assigned_in_a_chunked_forward_is_warned_about(execution):
    inner = Remembering()
    if execution == "inline":  # inline runs in chunks only when rows are coupled
        inner = nn.Sequential(inner, nn.Dropout(0.1))
    model = dp.DataParallel(inner, num_workers=3, execution=execution)
    found = _warnings(model, dp.ones(7, 3))
    assert model.last_execution == execution
    assert sorted(str(w.message).split()[1] for w in found) == [
        "Remembering.forward", "Remembering.forward"]
    text = str(found[0].message)
    assert "while the batch ran in 3 chunks, which share one module" in text
    assert "Return the value from forward" in text
    assert {w.filename for w in found} == {__file__}  # points at the model's call
    assert any("self.last_rows" in str(w.message) for w in found)
    assert any("self.calls" in str(w.message) for w in found)


def test_the_shared_attribute_is_what_the_warning_says():
    """After the call it holds one chunk's value, not the batch's: the documented hazard."""
    inner = Remembering()
    model = dp.DataParallel(inner, num_workers=2, execution="threads")
    with pytest.warns(ChunkStateWarning):
        model(dp.ones(5, 3))
    assert inner.last_rows in (2, 3) and inner.calls == 2  # a chunk's rows; one per chunk


def test_whole_calls_and_the_unwrapped_module_do_not_warn():
    inner = Remembering()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ChunkStateWarning)
        dp.DataParallel(inner, num_workers=1)(dp.ones(4, 3))  # one worker: whole
        dp.DataParallel(inner, num_workers=2, execution="inline")(dp.ones(4, 3))  # whole
        dp.DataParallel(inner, num_workers=4)(dp.ones(1, 3))  # a batch of one: whole
        inner(dp.ones(4, 3))
    assert inner.calls == 4


def test_the_layers_own_state_is_not_warned_about():
    """Buffers (batch norm's statistics, moved by chunk 0), parameters, dropout, recurrent and
    attention layers, nested DataParallel: none assigns Python state in a chunk."""

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Linear(3, 8)
            self.norm = nn.BatchNorm1d(5)
            self.rnn = nn.LSTM(8, 8, batch_first=True)
            self.attention = nn.MultiheadAttention(8, 2, batch_first=True)
            self.inner = dp.DataParallel(nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.2)),
                                         num_workers=2)
            self.head = nn.Sequential(nn.LayerNorm(8), nn.GELU(), nn.Linear(8, 1))

        def forward(self, x):
            h = self.norm(self.embed(x))
            h, _ = self.rnn(h)
            h, _ = self.attention(h, h, h)
            return self.head(self.inner(h))

    dp.manual_seed(0)
    model = dp.DataParallel(Net(), num_workers=3, execution="threads")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ChunkStateWarning)
        for _ in range(2):
            model(dp.randn(6, 5, 3)).sum().backward()
        model.eval()
        model(dp.randn(6, 5, 3))

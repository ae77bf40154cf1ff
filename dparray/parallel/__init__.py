"""DataParallel: one module run on chunks of each batch at once, forward and backward.

One file per step, as PyTorch keeps ``torch.nn.parallel``: ``data_parallel`` (the class, which
reads as its steps), ``scatter`` (the batch split into chunks), ``parallel_apply`` (the module
run on each chunk), ``gather`` (the outputs joined by one graph node), with ``chunk_graph``
(the chunks' sub-graphs and their backward), ``pool`` (the worker threads), ``auto``
(``execution="auto"``'s timing) and ``module_state`` (attributes a module assigns to itself
while its chunks run, warned about). Layers see the chunks through ``dparray.nn.chunks``, which
this package sets and ``nn`` never imports from here.
"""

from dparray.parallel.data_parallel import EXECUTIONS as EXECUTIONS
from dparray.parallel.data_parallel import DataParallel as DataParallel
from dparray.parallel.module_state import ChunkStateWarning as ChunkStateWarning
from dparray.parallel.parallel_apply import ChunkError as ChunkError

__all__ = ["ChunkError", "ChunkStateWarning", "DataParallel", "EXECUTIONS"]

"""The CuPy backend's CUDA kernels compile, without a GPU: NVRTC (NVIDIA's runtime compiler, the
one CuPy calls) builds each kernel's source for float and double, and the optimizer updates'
code has no fused multiply-add and only correctly rounded division and square root, which their
bit-for-bit equality with the references needs.

What a kernel computes is tested on a CUDA device (the CuPy runs of the other tests, and
``bench/gpu_check.py``); this catches, on every machine with the test extra, a kernel that would
not build. ``cupy.RawKernel`` sources compile as they are; an ``ElementwiseKernel``'s loop body
is wrapped here the way CuPy wraps it: an array argument becomes a reference to the element at
the loop's index, a scalar argument a value.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.metadata
import re

import pytest
from dparray.backends import _cupy_kernels, _cupy_updates

ARCH = b"-arch=compute_80"  # any architecture CUDA 12 supports: the source is what is checked


@functools.cache
def _nvrtc() -> ctypes.CDLL | None:
    try:
        files = importlib.metadata.files("nvidia-cuda-nvrtc-cu12") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in files:
        if re.fullmatch(r"libnvrtc\.so\.\d+", file.name):
            return ctypes.CDLL(str(file.locate()))
    return None


needs_nvrtc = pytest.mark.skipif(_nvrtc() is None,
                                 reason="needs NVRTC (the nvidia-cuda-nvrtc-cu12 wheel, Linux)")


def compile_to_ptx(source: str, options: tuple[str, ...] = ()) -> str:
    """``source`` compiled by NVRTC to PTX; an AssertionError with NVRTC's log if it fails."""
    nvrtc = _nvrtc()
    assert nvrtc is not None
    program = ctypes.c_void_p()
    assert nvrtc.nvrtcCreateProgram(ctypes.byref(program), source.encode(), b"kernel.cu", 0,
                                    None, None) == 0
    try:
        flags = [o.encode() for o in options] + [ARCH]
        result = nvrtc.nvrtcCompileProgram(program, len(flags),
                                           (ctypes.c_char_p * len(flags))(*flags))
        size = ctypes.c_size_t()
        nvrtc.nvrtcGetProgramLogSize(program, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        nvrtc.nvrtcGetProgramLog(program, log)
        assert result == 0, f"NVRTC failed:\n{log.value.decode()}\n--- source ---\n{source}"
        nvrtc.nvrtcGetPTXSize(program, ctypes.byref(size))
        ptx = ctypes.create_string_buffer(size.value)
        nvrtc.nvrtcGetPTX(program, ptx)
        return ptx.value.decode()
    finally:
        nvrtc.nvrtcDestroyProgram(ctypes.byref(program))


def elementwise_source(in_params: str, out_params: str, body: str, c_type: str,
                       arrays: tuple[str, ...]) -> str:
    """An ``ElementwiseKernel``'s body in a kernel as CuPy builds one: ``T`` is ``c_type``; the
    inputs named in ``arrays`` and every output are arrays, the other inputs scalars."""
    parameters, bindings = [], []
    for declaration in in_params.split(","):
        kind, name = declaration.split()
        kind = c_type if kind == "T" else kind
        if name in arrays:
            parameters.append(f"const {kind}* _raw_{name}")
            bindings.append(f"const {kind} &{name} = _raw_{name}[i];")
        else:
            parameters.append(f"const {kind} {name}")
    for declaration in out_params.split(","):
        kind, name = declaration.split()
        kind = c_type if kind == "T" else kind
        parameters.append(f"{kind}* _raw_{name}")
        bindings.append(f"{kind} &{name} = _raw_{name}[i];")
    return (f"typedef {c_type} T;\n"
            f"extern \"C\" __global__ void kernel({', '.join(parameters)}, long long size) {{\n"
            "    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < size;"
            " i += (long long)blockDim.x * gridDim.x) {\n"
            + "".join(f"        {b}\n" for b in bindings) + body + "\n    }\n}\n")


C_TYPES = ("float", "double")


@needs_nvrtc
@pytest.mark.parametrize("c_type", C_TYPES)
@pytest.mark.parametrize("name", sorted(_cupy_kernels._ROW_SOURCES))
def test_row_kernels_compile(name, c_type):
    ptx = compile_to_ptx(_cupy_kernels.row_source(name, c_type))
    assert f".entry {name}(" in ptx


@needs_nvrtc
@pytest.mark.parametrize("c_type", C_TYPES)
@pytest.mark.parametrize("approximate", sorted(_cupy_kernels._GELU))
def test_gelu_kernels_compile(approximate, c_type):
    forward_in, forward_out, forward, backward_in, backward_out, backward = \
        _cupy_kernels._GELU[approximate]
    for in_params, out_params, body in ((forward_in, forward_out, forward),
                                        (backward_in, backward_out, backward)):
        arrays = tuple(d.split()[1] for d in in_params.split(","))
        compile_to_ptx(elementwise_source(in_params, out_params, body, c_type, arrays))


UPDATES = {"adam": (_cupy_updates._ADAM, ("param", "grad", "m", "v")),
           "sgd": (_cupy_updates._SGD, ("param", "grad", "buffer")),
           "adadelta": (_cupy_updates._ADADELTA, ("param", "grad", "square", "accumulated"))}


@needs_nvrtc
@pytest.mark.parametrize("c_type", C_TYPES)
@pytest.mark.parametrize("name", sorted(UPDATES))
def test_update_kernels_compile_without_contractions(name, c_type):
    (in_params, out_params, body), arrays = UPDATES[name]
    ptx = compile_to_ptx(elementwise_source(in_params, out_params, body, c_type, arrays),
                         _cupy_updates._NO_CONTRACTION)
    instructions = {line.split()[0] for line in ptx.splitlines()
                    if line.strip() and not line.lstrip().startswith(("//", "."))}
    bits = "f32" if c_type == "float" else "f64"
    assert not {i for i in instructions if i.startswith("fma.")}
    assert {i for i in instructions if i.startswith(("div.", "sqrt.")) and i.endswith(bits)} \
        <= {f"div.rn.{bits}", f"sqrt.rn.{bits}"}
    if name in ("adam", "adadelta"):
        assert {f"div.rn.{bits}", f"sqrt.rn.{bits}"} <= instructions


@needs_nvrtc
def test_without_the_option_the_compiler_contracts():
    """The check above can fail: NVRTC's default fuses this body's multiply-adds."""
    (in_params, out_params, body), arrays = UPDATES["adam"]
    ptx = compile_to_ptx(elementwise_source(in_params, out_params, body, "float", arrays))
    assert "fma.rn.f32" in ptx

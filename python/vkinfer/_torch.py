"""from_torch: a PyTorch module exported to ONNX and run by vkinfer, torch tensors in and out.

torch is imported only when from_torch is called, so the package works without it.
"""
import os
import shutil
import tempfile

import numpy as np

from ._session import Session


def _to_numpy(t):
    import torch

    t = t.detach().cpu().contiguous()
    # NumPy has no bfloat16: float32 holds every bfloat16 exactly and the session rounds it back
    return (t.float() if t.dtype == torch.bfloat16 else t).numpy()


def _to_torch(a, like_bf16):
    import torch

    if like_bf16 or a.dtype.name == "bfloat16":  # float32 or ml_dtypes.bfloat16 arrays
        return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32)).to(torch.bfloat16)
    if a.dtype == np.uint16:  # torch before 2.3 has no uint16
        a = a.astype(np.int32)
    return torch.from_numpy(a)


class TorchSession:
    """A callable running an exported module: ts(*tensors) returns a tensor, or a tuple when the
    model has several outputs (in the order of output_names). .session is the vkinfer.Session,
    .onnx_path the exported file (in a temporary folder removed by close())."""

    def __init__(self, session, folder):
        self.session = session
        self._folder = folder
        self.onnx_path = session.path

    @property
    def inputs(self):
        return self.session.inputs

    @property
    def outputs(self):
        return self.session.outputs

    def __call__(self, *tensors):
        specs = self.session.inputs
        if len(tensors) != len(specs):
            raise TypeError(f"the exported model takes {len(specs)} input(s) "
                            f"({', '.join(s.name for s in specs)}), {len(tensors)} given")
        out = self.session.run({s.name: _to_numpy(t) for s, t in zip(specs, tensors)})
        result = tuple(_to_torch(out[s.name], s.dtype == "bfloat16") for s in self.session.outputs)
        return result[0] if len(result) == 1 else result

    def close(self):
        self.session.close()
        if self._folder:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


def from_torch(module, example_inputs, device=None, precision="fp32", cpu_threads=None, options=None, **export_kwargs):
    """Exports `module` with torch.onnx.export(module, example_inputs, path, **export_kwargs) to a
    temporary file and returns a TorchSession. example_inputs: a tensor or a tuple of tensors.
    device, precision, cpu_threads, options: as for Session.
    input_names default to input_0, input_1...; every other keyword (output_names, opset_version,
    dynamic_axes, dynamo...) goes to torch.onnx.export unchanged, so both exporters work: the
    TorchScript one (dynamo=False, the only one before torch 2.5) and the dynamo one (the default
    since torch 2.9; it may write weights to a .onnx.data file beside the model, which is kept)."""
    import torch

    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    example_inputs = tuple(example_inputs)
    export_kwargs.setdefault("input_names", [f"input_{i}" for i in range(len(example_inputs))])
    folder = tempfile.mkdtemp(prefix="vkinfer-torch-")
    try:
        path = os.path.join(folder, "model.onnx")
        was_training = module.training
        module.eval()
        try:
            with torch.no_grad():
                torch.onnx.export(module, example_inputs, path, **export_kwargs)
        finally:
            module.train(was_training)
        session = Session(path, device=device, precision=precision, cpu_threads=cpu_threads, options=options)
        return TorchSession(session, folder)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise

"""ctypes binding of kiln's C runtime (include/kiln/runtime.h), for the
benchmark: load a model.so, create a context, and run it on preallocated
numpy arrays with as little per-call overhead as the C API itself.

    model = KilnModel(runtime_library_path, "./model.so")
    run = model.bind(model.create_context(threads=1), inputs, outputs)
    run()   # one kiln_run on the arrays' memory
"""

import ctypes
import os

import numpy as np

# kiln_dtype codes (runtime.h) for the numpy dtypes the benchmark uses.
KILN_DTYPES = {np.dtype(np.float32): 1, np.dtype(np.float16): 2, np.dtype(np.float64): 4,
               np.dtype(np.int8): 5, np.dtype(np.uint8): 6, np.dtype(np.int16): 7,
               np.dtype(np.uint16): 8, np.dtype(np.int32): 9, np.dtype(np.uint32): 10,
               np.dtype(np.int64): 11, np.dtype(np.uint64): 12, np.dtype(np.bool_): 13}


class KilnTensorInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int32),
                ("rank", ctypes.c_int32), ("dims", ctypes.POINTER(ctypes.c_int64))]


class KilnTensor(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("dims", ctypes.POINTER(ctypes.c_int64)), ("data", ctypes.c_void_p)]


class KilnModelInfo(ctypes.Structure):
    """What model.so's kiln_model_get_info returns (the arena size is only
    there: the runtime API does not expose it)."""
    _fields_ = [("abi_version", ctypes.c_uint32), ("num_inputs", ctypes.c_int32),
                ("num_outputs", ctypes.c_int32), ("reserved", ctypes.c_int32),
                ("inputs", ctypes.POINTER(KilnTensorInfo)),
                ("outputs", ctypes.POINTER(KilnTensorInfo)),
                ("arena_bytes", ctypes.c_uint64), ("signature_json", ctypes.c_char_p)]


class KilnError(RuntimeError):
    pass


def _load_runtime(path: str) -> ctypes.CDLL:
    lib = ctypes.CDLL(path)
    handle = ctypes.POINTER(ctypes.c_void_p)
    lib.kiln_last_error.restype = ctypes.c_char_p
    lib.kiln_model_load.argtypes = [ctypes.c_char_p, handle]
    lib.kiln_model_unload.argtypes = [ctypes.c_void_p]
    lib.kiln_model_signature_json.argtypes = [ctypes.c_void_p]
    lib.kiln_model_signature_json.restype = ctypes.c_char_p
    lib.kiln_context_create.argtypes = [ctypes.c_void_p, handle]
    lib.kiln_context_destroy.argtypes = [ctypes.c_void_p]
    lib.kiln_run.argtypes = [ctypes.c_void_p, ctypes.POINTER(KilnTensor), ctypes.c_size_t,
                             ctypes.POINTER(KilnTensor), ctypes.c_size_t]
    if hasattr(lib, "kiln_context_create_with_threads"):
        lib.kiln_context_create_with_threads.argtypes = [ctypes.c_void_p, ctypes.c_int32,
                                                         handle]
    return lib


class KilnModel:
    def __init__(self, runtime_path: str, model_path: str):
        self.lib = _load_runtime(runtime_path)
        # dlopen needs a '/' to look in the current directory.
        self.path = os.path.abspath(model_path)
        self.handle = ctypes.c_void_p()
        self._check(self.lib.kiln_model_load(self.path.encode(), ctypes.byref(self.handle)),
                    "kiln_model_load")
        self.contexts = []

    @property
    def supports_threads(self) -> bool:
        """Whether this runtime has a thread pool (kiln_context_create_with_threads)."""
        return hasattr(self.lib, "kiln_context_create_with_threads")

    def _check(self, status: int, call: str) -> None:
        if status != 0:
            raise KilnError(f"{call}: status {status}: "
                            f"{self.lib.kiln_last_error().decode(errors='replace')}")

    def signature_json(self) -> str:
        return self.lib.kiln_model_signature_json(self.handle).decode()

    def arena_bytes(self) -> int:
        """The scratch arena the model asks each context for."""
        get_info = ctypes.CDLL(self.path).kiln_model_get_info
        get_info.restype = ctypes.POINTER(KilnModelInfo)
        return int(get_info().contents.arena_bytes)

    def create_context(self, threads: int = 1) -> ctypes.c_void_p:
        context = ctypes.c_void_p()
        if self.supports_threads:
            self._check(self.lib.kiln_context_create_with_threads(
                self.handle, threads, ctypes.byref(context)), "kiln_context_create_with_threads")
        else:
            self._check(self.lib.kiln_context_create(self.handle, ctypes.byref(context)),
                        "kiln_context_create")
        self.contexts.append(context)
        return context

    def bind(self, context: ctypes.c_void_p, inputs: list, outputs: list):
        """A zero-argument function that runs the model on these arrays
        (C-contiguous, in signature order). The kiln_tensor arrays are built
        once here, so each call is one ctypes call into kiln_run."""
        def tensors(arrays):
            table = (KilnTensor * len(arrays))()
            for slot, array in zip(table, arrays):
                assert array.flags.c_contiguous
                dims = (ctypes.c_int64 * max(1, array.ndim))(*array.shape)
                slot.dtype = KILN_DTYPES[array.dtype]
                slot.rank = array.ndim
                slot.dims = ctypes.cast(dims, ctypes.POINTER(ctypes.c_int64))
                slot.data = array.ctypes.data
                keep_alive.append(dims)
            return table

        keep_alive = [inputs, outputs]
        input_table, output_table = tensors(inputs), tensors(outputs)
        num_inputs, num_outputs = len(inputs), len(outputs)
        kiln_run, check = self.lib.kiln_run, self._check

        def run():
            status = kiln_run(context, input_table, num_inputs, output_table, num_outputs)
            if status:
                check(status, "kiln_run")
        run.keep_alive = keep_alive  # the dims arrays must outlive the closure
        return run

    def close(self) -> None:
        for context in self.contexts:
            self.lib.kiln_context_destroy(context)
        self.contexts = []
        if self.handle:
            self.lib.kiln_model_unload(self.handle)
            self.handle = ctypes.c_void_p()

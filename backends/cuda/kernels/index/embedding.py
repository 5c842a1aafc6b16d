"""Embedding lookup: out[b, s, :] = weight[indices[b, s], :]. A gather copies bits, so the kernel
moves each row as raw words, whatever the dtype: 16-byte words when the row length allows it
(4- or 2-byte words otherwise), one block per token, the row's words spread over the block's
threads (coalesced reads of the table row and writes of the output row)."""

import cupy
import numpy as np
import torch

CUDA_SOURCE = r"""
struct alignas(16) word16 { unsigned int v[4]; };

// Out-of-range indices (torch raises on them) are skipped: the table is never read outside.
template <typename W>
__device__ __forceinline__ void gather_rows(const long long* __restrict__ idx, const W* __restrict__ table, W* __restrict__ out,
                                            long long tokens, long long row_words, long long V) {
    for (long long t = blockIdx.x; t < tokens; t += gridDim.x) {
        const long long r = idx[t];
        if (r < 0 || r >= V) continue;
        const W* src = table + r * row_words;
        W* dst = out + t * row_words;
        for (long long j = threadIdx.x; j < row_words; j += blockDim.x) dst[j] = src[j];
    }
}

extern "C" __global__ void gather_w16(const long long* idx, const word16* table, word16* out, long long tokens, long long row_words, long long V) {
    gather_rows(idx, table, out, tokens, row_words, V);
}
extern "C" __global__ void gather_w4(const long long* idx, const unsigned int* table, unsigned int* out, long long tokens, long long row_words, long long V) {
    gather_rows(idx, table, out, tokens, row_words, V);
}
extern "C" __global__ void gather_w2(const long long* idx, const unsigned short* table, unsigned short* out, long long tokens, long long row_words, long long V) {
    gather_rows(idx, table, out, tokens, row_words, V);
}
"""

_module = cupy.RawModule(code=CUDA_SOURCE, options=("--std=c++17",))

THREADS = 128
MAX_GRID = 2**31 - 1
_kernels = {16: _module.get_function("gather_w16"), 4: _module.get_function("gather_w4"), 2: _module.get_function("gather_w2")}


def kernel_function(indices, weight):
    indices, weight = indices.contiguous(), weight.contiguous()
    V, D = weight.shape
    out = torch.empty((*indices.shape, D), dtype=weight.dtype, device=weight.device)
    tokens = indices.numel()
    if tokens == 0 or D == 0:
        return out
    row_bytes = D * weight.element_size()
    # The caching allocator hands out 512-byte aligned blocks: rows are word-aligned when the row
    # length and the table's offset in its storage are.
    offset_bytes = weight.storage_offset() * weight.element_size()
    word = next(w for w in (16, 4, 2) if row_bytes % w == 0 and offset_bytes % w == 0)
    _kernels[word]((min(tokens, MAX_GRID),), (THREADS,),
                   (indices.data_ptr(), weight.data_ptr(), out.data_ptr(), np.int64(tokens), np.int64(row_bytes // word), np.int64(V)))
    return out

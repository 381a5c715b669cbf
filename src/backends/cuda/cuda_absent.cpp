// Stands in for the CUDA backend in a build without CUDA (WAVG_CUDA=OFF, or no nvcc found), so --device can say so.

#include "wavg/backend.hpp"
#include "wavg/error.hpp"

namespace wavg {

CudaProbe probe_cuda() { return {false, "this wavg was built without CUDA (WAVG_CUDA=OFF)", ""}; }

std::unique_ptr<Backend> make_cuda_backend() { fail("", "--device cuda: " + probe_cuda().detail); }

}  // namespace wavg

// dist/nccl_backend.h in builds whose torch has no CUDA.
#include "directgnn/error.h"
#include "dist/nccl_backend.h"

namespace directgnn {

c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>&, int,
                                                    int, std::chrono::seconds, int) {
  fail_argument("dist_backend",
                "nccl needs a GPU build of directgnn (DIRECTGNN_CUDA=OFF, or a CPU-only torch); "
                "use gloo");
}

}  // namespace directgnn

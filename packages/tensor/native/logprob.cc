#include "napi_util.h"

namespace tensor_native {
void register_logprob(Registry&) {}
}  // namespace tensor_native

#include "napi_util.h"

namespace tensor_native {
void register_optim(Registry&) {}
}  // namespace tensor_native

#include "napi_util.h"

namespace tensor_native {
void register_nn(Registry&) {}
}  // namespace tensor_native

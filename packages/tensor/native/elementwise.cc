#include "napi_util.h"

namespace tensor_native {
void register_elementwise(Registry&) {}
}  // namespace tensor_native

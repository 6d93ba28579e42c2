#include "napi_util.h"

namespace tensor_native {
void register_attention(Registry&) {}
}  // namespace tensor_native

// Addon entry: collects every kernel file's bindings and exports them by name.
#include <string>

#include "napi_util.h"

namespace tensor_native {

Args::Args(napi_env e, napi_callback_info info, const char* n) : env(e), name(n) {
  if (napi_get_cb_info(env, info, &argc_, argv_, nullptr, nullptr) != napi_ok) throw ArgError("cannot read arguments");
  if (argc_ > 32) argc_ = 32;
}

void Args::fail(size_t i, const std::string& what) const {
  throw ArgError(std::string(name) + ": argument " + std::to_string(i) + " " + what);
}

template <typename T>
T* Args::typed(size_t i, napi_typedarray_type want, const char* want_name, size_t min_len) const {
  if (i >= argc_) fail(i, "is missing");
  bool is_typed = false;
  napi_is_typedarray(env, argv_[i], &is_typed);
  if (!is_typed) fail(i, std::string("must be a ") + want_name);
  napi_typedarray_type type;
  size_t length = 0;
  void* data = nullptr;
  napi_get_typedarray_info(env, argv_[i], &type, &length, &data, nullptr, nullptr);
  if (type != want) fail(i, std::string("must be a ") + want_name);
  if (length < min_len)
    fail(i, "has " + std::to_string(length) + " elements, needs at least " + std::to_string(min_len));
  return static_cast<T*>(data);
}

// The header's inline accessors use these from every kernel file.
template float* Args::typed<float>(size_t, napi_typedarray_type, const char*, size_t) const;
template int32_t* Args::typed<int32_t>(size_t, napi_typedarray_type, const char*, size_t) const;
template uint16_t* Args::typed<uint16_t>(size_t, napi_typedarray_type, const char*, size_t) const;

float* Args::f32_or_null(size_t i, size_t min_len) const {
  if (i >= argc_) return nullptr;
  napi_valuetype t;
  napi_typeof(env, argv_[i], &t);
  if (t == napi_null || t == napi_undefined) return nullptr;
  return f32(i, min_len);
}

double Args::num(size_t i) const {
  if (i >= argc_) fail(i, "is missing");
  double v;
  if (napi_get_value_double(env, argv_[i], &v) != napi_ok) fail(i, "must be a number");
  return v;
}

int64_t Args::i64(size_t i) const {
  double v = num(i);
  if (v != static_cast<double>(static_cast<int64_t>(v))) fail(i, "must be an integer");
  return static_cast<int64_t>(v);
}

bool Args::flag(size_t i) const {
  if (i >= argc_) fail(i, "is missing");
  bool v;
  if (napi_get_value_bool(env, argv_[i], &v) != napi_ok) fail(i, "must be a boolean");
  return v;
}

std::vector<int64_t> Args::i64_array(size_t i) const {
  if (i >= argc_) fail(i, "is missing");
  bool is_array = false;
  napi_is_array(env, argv_[i], &is_array);
  if (!is_array) fail(i, "must be an array of integers");
  uint32_t n = 0;
  napi_get_array_length(env, argv_[i], &n);
  std::vector<int64_t> out(n);
  for (uint32_t j = 0; j < n; j++) {
    napi_value el;
    napi_get_element(env, argv_[i], j, &el);
    double v;
    if (napi_get_value_double(env, el, &v) != napi_ok) fail(i, "must be an array of integers");
    out[j] = static_cast<int64_t>(v);
  }
  return out;
}

napi_value Args::undefined() const {
  napi_value u;
  napi_get_undefined(env, &u);
  return u;
}

napi_value Args::number(double v) const {
  napi_value out;
  napi_create_double(env, v, &out);
  return out;
}

struct Entry {
  const char* name;
  Binding fn;
};

static napi_value dispatch(napi_env env, napi_callback_info info) {
  void* data = nullptr;
  size_t zero = 0;
  napi_get_cb_info(env, info, &zero, nullptr, nullptr, &data);
  auto* entry = static_cast<Entry*>(data);
  try {
    Args args(env, info, entry->name);
    return entry->fn(args);
  } catch (const ArgError& e) {
    napi_throw_type_error(env, nullptr, e.what());
  } catch (const std::exception& e) {
    napi_throw_error(env, nullptr, (std::string(entry->name) + ": " + e.what()).c_str());
  }
  return nullptr;
}

}  // namespace tensor_native

using namespace tensor_native;

static napi_value Init(napi_env env, napi_value exports) {
  static Registry registry;
  if (registry.entries.empty()) {
    register_threadpool(registry);
    register_gemm(registry);
    register_elementwise(registry);
    register_nn(registry);
    register_attention(registry);
    register_attention_cached(registry);
    register_logprob(registry);
    register_optim(registry);
  }
  for (auto& [name, fn] : registry.entries) {
    auto* entry = new Entry{name, fn};  // lives as long as the process
    napi_value f;
    napi_create_function(env, name, NAPI_AUTO_LENGTH, dispatch, entry, &f);
    napi_set_named_property(env, exports, name, f);
  }
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)

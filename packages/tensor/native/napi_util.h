// Small helpers over Node-API's C interface: argument extraction with clear errors, and a
// registry each kernel file adds its functions to.
#pragma once
#include <node_api.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tensor_native {

// Thrown inside a binding; the dispatcher turns it into a JavaScript TypeError/Error.
struct ArgError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Args {
 public:
  Args(napi_env env, napi_callback_info info, const char* name);
  napi_env env;
  const char* name;
  size_t count() const { return argc_; }

  float* f32(size_t i, size_t min_len = 0) const { return typed<float>(i, napi_float32_array, "Float32Array", min_len); }
  int32_t* i32(size_t i, size_t min_len = 0) const { return typed<int32_t>(i, napi_int32_array, "Int32Array", min_len); }
  uint16_t* u16(size_t i, size_t min_len = 0) const { return typed<uint16_t>(i, napi_uint16_array, "Uint16Array", min_len); }
  // A Float32Array, or null/undefined (returns nullptr).
  float* f32_or_null(size_t i, size_t min_len = 0) const;
  double num(size_t i) const;
  int64_t i64(size_t i) const;  // a non-negative-or-any integer-valued number
  bool flag(size_t i) const;
  std::vector<int64_t> i64_array(size_t i) const;  // a JS array of integers

  napi_value undefined() const;
  napi_value number(double v) const;

 private:
  template <typename T>
  T* typed(size_t i, napi_typedarray_type want, const char* want_name, size_t min_len) const;
  [[noreturn]] void fail(size_t i, const std::string& what) const;
  napi_value argv_[32];
  size_t argc_ = 32;
};

using Binding = napi_value (*)(const Args&);

struct Registry {
  std::vector<std::pair<const char*, Binding>> entries;
  void add(const char* name, Binding fn) { entries.emplace_back(name, fn); }
};

// Each kernel file defines one of these.
void register_threadpool(Registry&);
void register_gemm(Registry&);
void register_elementwise(Registry&);
void register_nn(Registry&);
void register_attention(Registry&);
void register_attention_cached(Registry&);
void register_logprob(Registry&);
void register_optim(Registry&);

}  // namespace tensor_native

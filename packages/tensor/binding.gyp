{
  "targets": [
    {
      "target_name": "tensor_cpu",
      "sources": [
        "native/addon.cc",
        "native/threadpool.cc",
        "native/gemm.cc",
        "native/elementwise.cc",
        "native/nn.cc",
        "native/attention.cc",
        "native/attention_cached.cc",
        "native/logprob.cc",
        "native/optim.cc"
      ],
      "cflags!": ["-fno-exceptions", "-O2", "-O1", "-O0"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-std=gnu++17", "-std=gnu++1y", "-std=gnu++14", "-O2"],
      "cflags": ["-O3", "-march=native", "-fno-math-errno", "-fno-trapping-math", "-pthread", "-Wno-maybe-uninitialized"],
      "cflags_cc": ["-O3", "-march=native", "-std=c++17", "-fno-math-errno", "-fno-trapping-math", "-pthread", "-fexceptions", "-Wno-maybe-uninitialized"],
      "ldflags": ["-pthread"]
    }
  ]
}

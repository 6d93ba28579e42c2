export * from './formats/safetensors.js';
export * from './model/config.js';
export * from './model/decoder.js';
export * from './model/kv-cache.js';
export * from './model/hf-config.js';
export * from './model/pretrained.js';
export * from './tokenizer/index.js';
export * from './hub/index.js';

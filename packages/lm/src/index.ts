export * from './formats/safetensors.js';
export * from './qwen3/config.js';
export * from './qwen3/model.js';

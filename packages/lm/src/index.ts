export * from './formats/safetensors.js';

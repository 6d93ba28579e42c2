export * from './config.js';
export * from './match.js';
export * from './dropout.js';
export * from './linear.js';
export * from './names.js';
export * from './attach.js';
export * from './peft.js';

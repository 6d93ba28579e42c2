export * from './schema.js';
export type * from './types.js';

export * from './optimizer.js';
export * from './adamw.js';
export * from './sgd.js';
export * from './muon.js';
export * from './clip.js';
export * from './schedule.js';

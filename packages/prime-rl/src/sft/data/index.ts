// The SFT data pipeline: dataset files → validated conversations → token samples → packed micro-batches.
export * from './types.js';
export { RowError, rowToConversation } from './rows.js';
export { DATA_FILE_EXTENSIONS, locateSources, readRecords } from './sources.js';
export type { DatasetSource, FileRecords, LocateOptions } from './sources.js';
export { epochOrder } from './mixing.js';
export type { EpochOrder, MixOptions, StoppingStrategy } from './mixing.js';
export { SftDataset } from './dataset.js';
export type { DatasetSelection, LoadedSource } from './dataset.js';
export { prepareSample, tokenizeSample } from './tokenize.js';
export type { PreparedSample } from './tokenize.js';
export { RowPacker, collateRows, packRow, packSamples } from './packing.js';
export type { PackFunction, PackedRow } from './packing.js';
export { fakeSample } from './fake.js';
export type { FakeDataOptions } from './fake.js';
export { SftDataLoader, createSftDataLoader } from './loader.js';
export type {
  SftDataConfig,
  SftDataLoaderOptions,
  SftDataLoaderState,
  SftDataSourceInfo,
  SftStep,
  SftStepStats,
} from './loader.js';

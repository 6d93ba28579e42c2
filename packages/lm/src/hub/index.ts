// Hugging Face Hub downloads into the hub's own cache layout, shared with huggingface_hub's tools.
export type { DownloadProgress } from './blob-download.js';
export { RepoCache, repoFolderName } from './cache.js';
export { snapshotDownload, type SnapshotDownloadOptions } from './download.js';
export { DEFAULT_ENDPOINT, type Environment, type HubEnvironment, readHubEnvironment } from './env.js';
export { HubError, type HubErrorKind } from './errors.js';
export { filterPaths, matchesGlob } from './glob.js';
export { type RepoType, validateRepoId } from './repo.js';
export { MODEL_FILE_PATTERNS, resolveModelPath } from './resolve.js';

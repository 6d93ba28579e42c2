export * from './types.js';
export { Tokenizer } from './tokenizer.js';
export { ChatTemplate, chatTemplateFromConfig, type TemplateSpecialTokens } from './chat-template.js';
export { IncrementalDecoder, type IncrementalDecoderOptions } from './incremental-decoder.js';
export { tokenizeConversation } from './conversation.js';

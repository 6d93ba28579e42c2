// A Hugging Face tokenizer (tokenizer.json + tokenizer_config.json) with its chat template: text <-> token
// ids via @huggingface/tokenizers (a pure JavaScript port of the Rust `tokenizers` crate), special-token
// ids as transformers resolves them, and loading/saving in the Hugging Face directory layout.
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Tokenizer as HfTokenizer } from '@huggingface/tokenizers';
import { writeFileAtomic } from '../formats/atomic-file.js';
import { ChatTemplate, chatTemplateFromConfig, type TemplateSpecialTokens } from './chat-template.js';
import type { ChatMessage, ChatTemplateOptions } from './types.js';

type JsonObject = Record<string, unknown>;

/** Where each part came from, for error messages (file paths when loaded from a directory). */
interface Origins {
  tokenizerJson: string;
  tokenizerConfig: string;
  chatTemplate: string;
}

// Fields of tokenizer_config.json that name special tokens, as transformers' SPECIAL_TOKENS_ATTRIBUTES.
const NAMED_SPECIAL_TOKEN_FIELDS = [
  'bos_token',
  'eos_token',
  'unk_token',
  'sep_token',
  'pad_token',
  'cls_token',
  'mask_token',
] as const;

export class Tokenizer {
  /** Ids of the token table plus added tokens: the largest id + 1. */
  readonly vocabSize: number;
  readonly eosToken: string;
  readonly eosTokenId: number;
  /** `pad_token`, or the EOS token when the tokenizer has none (as most causal LMs are trained). */
  readonly padToken: string;
  readonly padTokenId: number;
  readonly bosToken: string | null;
  readonly bosTokenId: number | null;
  /** Ids that `decode(ids, { skipSpecialTokens: true })` drops. */
  readonly specialTokenIds: ReadonlySet<number>;
  readonly chatTemplate: string | null;

  private readonly inner: HfTokenizer;
  private readonly tokenizerJson: JsonObject;
  /** tokenizer_config.json as loaded, with special_tokens_map.json and chat_template.jinja merged in. */
  private readonly tokenizerConfig: JsonObject;
  private readonly template: ChatTemplate | null;
  private readonly templateTokens: TemplateSpecialTokens;
  private readonly origins: Origins;

  private constructor(tokenizerJson: JsonObject, tokenizerConfig: JsonObject, origins: Origins) {
    this.tokenizerJson = tokenizerJson;
    this.tokenizerConfig = tokenizerConfig;
    this.origins = origins;
    try {
      this.inner = new HfTokenizer(tokenizerJson, tokenizerConfig);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new Error(`${origins.tokenizerJson}: cannot build the tokenizer: ${message}`, { cause: error });
    }

    let maxId = -1;
    for (const id of this.inner.get_vocab(true).values()) maxId = Math.max(maxId, id);
    this.vocabSize = maxId + 1;

    const eos = this.specialToken('eos_token');
    if (eos === null) throw new Error(`${origins.tokenizerConfig}: no eos_token (needed to end generations)`);
    [this.eosToken, this.eosTokenId] = eos;
    [this.padToken, this.padTokenId] = this.specialToken('pad_token') ?? eos;
    const bos = this.specialToken('bos_token');
    this.bosToken = bos?.[0] ?? null;
    this.bosTokenId = bos?.[1] ?? null;
    this.specialTokenIds = this.collectSpecialTokenIds();

    this.chatTemplate = chatTemplateFromConfig(tokenizerConfig.chat_template, origins.chatTemplate);
    this.template = this.chatTemplate === null ? null : new ChatTemplate(this.chatTemplate, origins.chatTemplate);
    const unkToken = this.tokenContent('unk_token');
    this.templateTokens = {
      eos_token: this.eosToken,
      pad_token: this.padToken,
      ...(this.bosToken !== null ? { bos_token: this.bosToken } : {}),
      ...(unkToken !== null ? { unk_token: unkToken } : {}),
    };
  }

  /**
   * Loads a Hugging Face tokenizer directory: tokenizer.json and tokenizer_config.json (both required),
   * special_tokens_map.json (optional; its entries override tokenizer_config.json's, as in transformers)
   * and chat_template.jinja (optional; the newer layout, overriding `chat_template` in the config).
   */
  static async fromDir(dir: string): Promise<Tokenizer> {
    const tokenizerJsonPath = join(dir, 'tokenizer.json');
    const tokenizerConfigPath = join(dir, 'tokenizer_config.json');
    const specialTokensMapPath = join(dir, 'special_tokens_map.json');
    const chatTemplatePath = join(dir, 'chat_template.jinja');

    const tokenizerJson = await readRequiredJsonObject(tokenizerJsonPath);
    const tokenizerConfig = await readRequiredJsonObject(tokenizerConfigPath);
    const specialTokensMap = await readOptionalJsonObject(specialTokensMapPath);
    const chatTemplateFile = await readOptionalText(chatTemplatePath);

    const config: JsonObject = { ...tokenizerConfig, ...specialTokensMap };
    if (chatTemplateFile !== null) config.chat_template = chatTemplateFile;
    return new Tokenizer(tokenizerJson, config, {
      tokenizerJson: tokenizerJsonPath,
      tokenizerConfig:
        specialTokensMap === null ? tokenizerConfigPath : `${tokenizerConfigPath} (+ special_tokens_map.json)`,
      chatTemplate: chatTemplateFile === null ? `${tokenizerConfigPath} chat_template` : chatTemplatePath,
    });
  }

  /** Builds a tokenizer from parsed tokenizer.json and tokenizer_config.json; keeps (does not copy) them. */
  static fromObjects(tokenizerJson: object, tokenizerConfig: object): Tokenizer {
    if (!isJsonObject(tokenizerJson)) throw new Error('tokenizer.json: must be a JSON object');
    if (!isJsonObject(tokenizerConfig)) throw new Error('tokenizer_config.json: must be a JSON object');
    return new Tokenizer(tokenizerJson, tokenizerConfig, {
      tokenizerJson: 'tokenizer.json',
      tokenizerConfig: 'tokenizer_config.json',
      chatTemplate: 'tokenizer_config.json chat_template',
    });
  }

  /** Token ids of `text`; `addSpecialTokens` applies the post-processor (e.g. a BOS for Llama; none for Qwen). */
  encode(text: string, { addSpecialTokens = false }: { addSpecialTokens?: boolean } = {}): number[] {
    return this.inner.encode(text, { add_special_tokens: addSpecialTokens }).ids;
  }

  /**
   * Text of `ids`. Ids outside the vocabulary (a model's embedding table is often padded past
   * vocabSize) decode to nothing, as in the Rust tokenizers. A UTF-8 character cut off at either end
   * decodes to U+FFFD.
   */
  decode(ids: readonly number[], { skipSpecialTokens = false }: { skipSpecialTokens?: boolean } = {}): string {
    const kept = ids.filter(
      (id) => this.inner.id_to_token(id) !== undefined && !(skipSpecialTokens && this.specialTokenIds.has(id)),
    );
    // The library rejects an empty list.
    if (kept.length === 0) return '';
    return this.inner.decode(kept, { skip_special_tokens: false });
  }

  /**
   * The parsed tokenizer.json and tokenizer_config.json (with special_tokens_map.json and chat_template.jinja
   * merged in), for exporters that need the vocabulary and merges themselves (GGUF). Shared, not copied.
   */
  get hfJson(): { tokenizer: Readonly<JsonObject>; config: Readonly<JsonObject> } {
    return { tokenizer: this.tokenizerJson, config: this.tokenizerConfig };
  }

  tokenToId(token: string): number | undefined {
    return this.inner.token_to_id(token);
  }

  idToToken(id: number): string | undefined {
    return this.inner.id_to_token(id);
  }

  /** The prompt text of `messages` rendered by the tokenizer's chat template. */
  applyChatTemplate(messages: readonly ChatMessage[], options: ChatTemplateOptions = {}): string {
    if (this.template === null) {
      throw new Error(
        `this tokenizer has no chat template (${this.origins.chatTemplate} is absent and there is no chat_template.jinja)`,
      );
    }
    return this.template.render(messages, options, this.templateTokens);
  }

  /** Token ids of the rendered conversation; the template writes any BOS itself, so none is added. */
  encodeChat(messages: readonly ChatMessage[], options: ChatTemplateOptions = {}): number[] {
    return this.encode(this.applyChatTemplate(messages, options));
  }

  /**
   * Writes tokenizer.json and tokenizer_config.json (chat template and special tokens inlined) into
   * `dir`, creating it. Each file is written to a temporary name and renamed, so a reader never sees a
   * half-written file. A chat_template.jinja or special_tokens_map.json already in `dir` would override
   * what was written on the next load, so they are removed.
   */
  async save(dir: string): Promise<void> {
    await mkdir(dir, { recursive: true });
    await writeFileAtomic(join(dir, 'tokenizer.json'), JSON.stringify(this.tokenizerJson));
    await writeFileAtomic(join(dir, 'tokenizer_config.json'), `${JSON.stringify(this.tokenizerConfig, null, 2)}\n`);
    await rm(join(dir, 'chat_template.jinja'), { force: true });
    await rm(join(dir, 'special_tokens_map.json'), { force: true });
  }

  /** The text of a named special token in tokenizer_config.json: a string or an AddedToken `{content}`. */
  private tokenContent(field: string): string | null {
    const value = this.tokenizerConfig[field];
    if (value === undefined || value === null) return null;
    if (typeof value === 'string') return value;
    if (isJsonObject(value) && typeof value.content === 'string') return value.content;
    throw new Error(`${this.origins.tokenizerConfig}: ${field} must be a string or an object with 'content'`);
  }

  private specialToken(field: string): [string, number] | null {
    const content = this.tokenContent(field);
    if (content === null) return null;
    const id = this.inner.token_to_id(content);
    if (id === undefined) {
      throw new Error(`${this.origins.tokenizerConfig}: ${field} ${JSON.stringify(content)} is not in the vocabulary`);
    }
    return [content, id];
  }

  // Added tokens flagged `special` (what the Rust tokenizers skip), the named special tokens and
  // `additional_special_tokens` (what transformers' `all_special_ids` lists).
  private collectSpecialTokenIds(): Set<number> {
    const ids = new Set<number>();
    for (const [id, added] of this.inner.get_added_tokens_decoder()) {
      if (added.special) ids.add(id);
    }
    const contents: string[] = [];
    for (const field of NAMED_SPECIAL_TOKEN_FIELDS) {
      const content = this.tokenContent(field);
      if (content !== null) contents.push(content);
    }
    const additional = this.tokenizerConfig.additional_special_tokens;
    if (Array.isArray(additional)) {
      for (const entry of additional as unknown[]) {
        if (typeof entry === 'string') contents.push(entry);
        else if (isJsonObject(entry) && typeof entry.content === 'string') contents.push(entry.content);
      }
    }
    for (const content of contents) {
      const id = this.inner.token_to_id(content);
      if (id !== undefined) ids.add(id);
    }
    return ids;
  }
}

function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

async function readOptionalText(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new Error(`${path}: cannot read: ${(error as Error).message}`, { cause: error });
  }
}

async function readRequiredJsonObject(path: string): Promise<JsonObject> {
  const parsed = await readOptionalJsonObject(path);
  if (parsed === null) throw new Error(`${path}: file not found (a Hugging Face tokenizer directory needs it)`);
  return parsed;
}

async function readOptionalJsonObject(path: string): Promise<JsonObject | null> {
  const text = await readOptionalText(path);
  if (text === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`${path}: invalid JSON: ${(error as Error).message}`, { cause: error });
  }
  if (!isJsonObject(value)) throw new Error(`${path}: must hold a JSON object, got ${describe(value)}`);
  return value;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'an array' : typeof value;
}

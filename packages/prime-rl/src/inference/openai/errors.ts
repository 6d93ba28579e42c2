// Errors in the OpenAI API's shape: {"error": {"message", "type", "param", "code"}} with a 4xx/5xx
// status. Anything a client sent wrong is an ApiError; the server turns it into a response and keeps
// serving.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly type: string = status === 404
      ? 'not_found_error'
      : status >= 500
        ? 'server_error'
        : 'invalid_request_error',
    readonly code: string | null = null,
  ) {
    super(message);
  }

  body(): { error: { message: string; type: string; param: string | null; code: string | null } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

export const badRequest = (message: string, param: string | null = null): ApiError => new ApiError(400, message, param);

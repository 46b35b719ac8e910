// Errors from the API server, as client-go's apierrors: the HTTP code, the Status reason and message.
export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly method: string,
    readonly path: string,
  ) {
    super(message);
  }
}

export const isNotFound = (e: unknown) => e instanceof ApiError && e.code === 404;
export const isConflict = (e: unknown) => e instanceof ApiError && e.code === 409 && e.reason === "Conflict";
export const isAlreadyExists = (e: unknown) => e instanceof ApiError && e.code === 409 && e.reason === "AlreadyExists";
export const isGone = (e: unknown) => e instanceof ApiError && (e.code === 410 || e.reason === "Expired" || e.reason === "Gone");

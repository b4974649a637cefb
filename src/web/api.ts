/**
 * The dashboard talks to the same /v1 API as every client (plus /auth for the session). Every call carries
 * the session's CSRF token; an error is the API's own code, message and hint, shown as they are.
 */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly hint?: string,
  ) {
    super(message);
  }
}

let csrfToken = "";
let onSignedOut: () => void = () => {};

export function useSessionToken(token: string) {
  csrfToken = token;
}

export function whenSignedOut(handler: () => void) {
  onSignedOut = handler;
}

/** `raw`: send the body as it is with this content type (a CSV file), plus extra headers (Idempotency-Key). */
export async function api<T = unknown>(
  method: string,
  path: string,
  body?: unknown,
  raw?: { contentType: string; headers?: Record<string, string> },
): Promise<T> {
  const headers: Record<string, string> = { "x-csrf-token": csrfToken, ...raw?.headers };
  if (body !== undefined) headers["content-type"] = raw?.contentType ?? "application/json";
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : raw ? (body as string) : JSON.stringify(body),
    credentials: "same-origin",
  });
  const text = await res.text();
  let json: any = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON: reported below */
  }
  if (!res.ok) {
    const e = json?.error ?? {};
    // The pages that work without a session (sign-in, the one-time link, the first look) handle 401 themselves.
    if (e.code === "not_signed_in" && !/^\/auth\/(session|sign-in|links)/.test(path)) onSignedOut();
    throw new ApiFailure(res.status, e.code ?? `http_${res.status}`, e.message ?? `HTTP ${res.status}`, e.hint);
  }
  return json as T;
}

/** PUTs a file to an upload ticket's signed URL, reporting progress (fetch cannot report upload progress). */
export function putWithProgress(url: string, file: Blob, contentType: string, onProgress: (fraction: number) => void) {
  return new Promise<void>((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("PUT", url);
    xhr.setRequestHeader("content-type", contentType);
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) return resolve();
      let message = `Upload failed (HTTP ${xhr.status}).`;
      try {
        message = JSON.parse(xhr.responseText).error.message;
      } catch {
        /* keep the generic message */
      }
      reject(new ApiFailure(xhr.status, "upload_failed", message));
    };
    xhr.onerror = () => reject(new ApiFailure(0, "upload_failed", "The upload was interrupted."));
    xhr.send(file);
  });
}

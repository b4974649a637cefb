/**
 * The content types Crier accepts and the file extensions each may carry. The spec's enum is the six
 * jpeg/png/webp/mp4/quicktime/webm types; image/gif is accepted too because platforms take GIFs and
 * report a separate GIF size limit (media_requirements.max_size_bytes.gif).
 */
export const MEDIA_TYPES = {
  "image/jpeg": { kind: "image", extensions: ["jpg", "jpeg", "jpe", "jfif"] },
  "image/png": { kind: "image", extensions: ["png"] },
  "image/webp": { kind: "image", extensions: ["webp"] },
  "image/gif": { kind: "gif", extensions: ["gif"] },
  "video/mp4": { kind: "video", extensions: ["mp4", "m4v"] },
  "video/quicktime": { kind: "video", extensions: ["mov", "qt"] },
  "video/webm": { kind: "video", extensions: ["webm"] },
} as const;

export type MediaContentType = keyof typeof MEDIA_TYPES;
export const MEDIA_CONTENT_TYPES = Object.keys(MEDIA_TYPES) as MediaContentType[];

/** The kind words an upload ticket also takes instead of a MIME type; `image` covers GIFs too. */
export const MEDIA_KIND_SHORTHANDS = ["image", "video"] as const;
export type MediaKindShorthand = (typeof MEDIA_KIND_SHORTHANDS)[number];

/** Whether a content type of MEDIA_TYPES is of the kind a shorthand names. */
export function fitsShorthand(contentType: MediaContentType, shorthand: MediaKindShorthand): boolean {
  const kind = MEDIA_TYPES[contentType].kind;
  return shorthand === "video" ? kind === "video" : kind === "image" || kind === "gif";
}

const BY_EXTENSION = new Map<string, MediaContentType>(
  MEDIA_CONTENT_TYPES.flatMap((ct) => MEDIA_TYPES[ct].extensions.map((ext) => [ext, ct] as const)),
);

/**
 * A storage key is `med_<22 base64url chars>.<ext>`: the encoded media id plus the file's extension; a
 * file made from it (a converted copy, a poster frame) adds `~<variant>` before the extension. Nothing
 * else is ever read or written, so a key can never name a path outside the media folder.
 */
export const KEY_PATTERN = /^med_[A-Za-z0-9_-]{22}(?:~[a-z0-9-]{1,48})?\.([a-z0-9]{2,5})$/;

/** The key of a file made from the media stored at `key`: `med_….jpg` → `med_…~<variant>.<ext>`. */
export function derivedKey(key: string, variant: string, ext: string): string {
  const base = key.slice(0, key.indexOf("."));
  const made = `${base.split("~")[0]}~${variant}.${ext}`;
  if (!isMediaKey(made)) throw new Error(`not a media key: ${made}`);
  return made;
}

export function isMediaKey(key: string): boolean {
  const m = KEY_PATTERN.exec(key);
  return !!m && BY_EXTENSION.has(m[1]);
}

/** The content type a key is served with (its extension was checked against it when the ticket was made). */
export function contentTypeForKey(key: string): MediaContentType | null {
  const m = KEY_PATTERN.exec(key);
  return m ? (BY_EXTENSION.get(m[1]) ?? null) : null;
}

export function contentTypeForExtension(ext: string): MediaContentType | null {
  return BY_EXTENSION.get(ext.toLowerCase()) ?? null;
}

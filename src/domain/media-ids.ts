/**
 * Media ids on the wire are `med_` + the row's UUID in base64url (22 characters). The UUID is random
 * (gen_random_uuid), so an id cannot be guessed; the encoding keeps it short and URL-safe.
 */
const PATTERN = /^med_([A-Za-z0-9_-]{22})$/;

export function encodeMediaId(uuid: string): string {
  return `med_${Buffer.from(uuid.replace(/-/g, ""), "hex").toString("base64url")}`;
}

/** The row's UUID, or null when `id` is not a well-formed media id. */
export function decodeMediaId(id: string): string | null {
  const m = PATTERN.exec(id);
  if (!m) return null;
  const bytes = Buffer.from(m[1], "base64url");
  // Reject the non-canonical spellings base64url would also decode (the last character has spare bits).
  if (bytes.length !== 16 || bytes.toString("base64url") !== m[1]) return null;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The storage key (and the spec's `path`) of a media: its id plus the file's extension. */
export const mediaKey = (mediaId: string, ext: string) => `${mediaId}.${ext.toLowerCase()}`;

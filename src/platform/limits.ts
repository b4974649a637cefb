/** Small helpers for writing media_requirements declarations in plugins. */
import type { MediaRequirements } from "./declaration.ts";

export const KB = 1024;
export const MB = 1024 * KB;
export const GB = 1024 * MB;

/** required_media for platforms that take no text-only posts. */
export function mediaRequired(
  platform: string,
  acceptedTypes: ("image" | "video")[],
  what: string,
): NonNullable<MediaRequirements["required_media"]> {
  return {
    minFiles: 1,
    acceptedTypes,
    errorCode: "media_required",
    errorMessage: `${platform} posts need ${what}.`,
  };
}
